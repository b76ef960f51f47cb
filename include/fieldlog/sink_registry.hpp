// SPDX-License-Identifier: MIT
// The sink types a configuration file names (`[[sinks]] type = "file"`): each registers its
// name, the keys of its table and a factory that reads them. The built-in sinks register
// themselves this way, and a program adds its own with register_sink_type(). One key list
// serves the reader's unknown-key check, its "did you mean" hint and the documentation's check.
// Cold path: runs while a configuration is read, never per record.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fieldlog/export.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/sink_target.hpp"

namespace fieldlog {

/// One value of a sink's table as the reader found it.
struct FIELDLOG_API SettingValue {
    enum class Kind : std::uint8_t { text, integer, floating, boolean, array, other };
    Kind kind = Kind::other;
    std::string text{};
    std::int64_t integer = 0;
    double floating = 0;
    bool boolean = false;
    std::vector<SettingValue> items{};  ///< an array's values
    std::string shown{};                ///< how an error shows it: `"lots"`, `12`, `a table`
    std::uint32_t line = 0;             ///< where it stands in the source
};

/// One key of a sink's table and its value.
struct FIELDLOG_API Setting {
    std::string key;
    SettingValue value;
};

/// One name of a choice (`rotate = "daily"`) and the value it stands for.
template <typename T>
struct SettingChoice {
    std::string_view name;
    T value;
};

/// A sink's table, typed: what a sink type's factory reads its keys from. Each getter returns
/// the key's value, or `fallback` when the table leaves the key out; a value of the wrong type
/// or out of range throws ConfigError naming the source, line and key, like every other
/// configuration error: `app.toml:7: sinks[1].max_size: expected a size like "100MiB", got "lots"`.
/// A getter may read only the keys the sink type declared (and those every sink takes), and
/// a key the table gives must be read: either slip throws std::logic_error, so the key list and
/// the factory cannot drift apart.
class FIELDLOG_API SinkSettings {
public:
    /// `source` and `path` (`sinks[1]`) name the table in errors, `line` is where it starts;
    /// `keys` are the sink type's (every sink's keys are readable too).
    SinkSettings(std::string source, std::string path, std::uint32_t line, std::vector<Setting> settings,
                 std::vector<std::string> keys);

    /// Whether the table gives `key`.
    [[nodiscard]] bool has(std::string_view key) const;
    /// A string; `what` says what it should be in errors ("a file path").
    [[nodiscard]] std::string text(std::string_view key, std::string_view what, std::string fallback = {}) const;
    /// An array of strings.
    [[nodiscard]] std::vector<std::string> texts(std::string_view key, std::string_view what,
                                                 std::vector<std::string> fallback = {}) const;
    [[nodiscard]] bool boolean(std::string_view key, bool fallback) const;
    /// A whole number within [min, max].
    [[nodiscard]] std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max,
                                       std::string_view what) const;
    /// A byte count: "4MiB", "64KB", or a whole number of bytes, within [min, max]; `example`
    /// shows one in errors.
    [[nodiscard]] std::uint64_t size(std::string_view key, std::uint64_t fallback, std::string_view example,
                                     std::uint64_t min = 0,
                                     std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;
    /// A duration the way Go writes one ("500ms", "1m30s"), in whole units of `D`.
    template <typename Rep, typename Period>
    [[nodiscard]] std::chrono::duration<Rep, Period> duration(std::string_view key,
                                                              std::chrono::duration<Rep, Period> fallback,
                                                              std::string_view example) const {
        using D = std::chrono::duration<Rep, Period>;
        return std::chrono::duration_cast<D>(
            duration_in(key, fallback, example, std::chrono::duration_cast<std::chrono::nanoseconds>(D{1})));
    }
    [[nodiscard]] Level level(std::string_view key, Level fallback) const;
    /// One of `choices`, by name.
    template <typename T>
    [[nodiscard]] T choice(std::string_view key, T fallback, std::initializer_list<SettingChoice<T>> choices) const {
        std::vector<std::string_view> names;
        for (const SettingChoice<T>& c : choices) names.push_back(c.name);
        const std::size_t chosen = choice_index(key, names);
        return chosen < names.size() ? choices.begin()[chosen].value : fallback;
    }

    /// Errors about the sink that configure() raises (a file it cannot open) name this key's
    /// line rather than the table's, when the table gives it.
    void identify_by(std::string_view key);
    /// `source:line: sinks[1]: missing key "path" (why)`.
    [[noreturn]] void missing(std::string_view key, std::string_view why) const;
    /// `source:line: sinks[1].key: expected <what>, got <the value>` (as missing() when the
    /// table leaves the key out).
    [[noreturn]] void expected(std::string_view key, std::string_view what) const;
    /// `source:line: sinks[1].key: <message>`.
    [[noreturn]] void fail(std::string_view key, std::string_view message) const;
    /// `source:line: sinks[1].key[item]: <message>`, the line the array's item stands on.
    [[noreturn]] void fail(std::string_view key, std::size_t item, std::string_view message) const;

    /// What configure() starts its errors about this sink with: `app.toml:14: sinks[1]`, or the
    /// key identify_by() named.
    [[nodiscard]] const std::string& defined_at() const noexcept { return defined_at_; }
    /// Throws std::logic_error when the table gives a key of the sink type the factory never read.
    void check_every_key_read() const;

private:
    [[nodiscard]] const Setting* find(std::string_view key) const;
    [[nodiscard]] std::string at(std::string_view key) const;
    [[nodiscard]] std::chrono::nanoseconds duration_in(std::string_view key, std::chrono::nanoseconds fallback,
                                                       std::string_view example, std::chrono::nanoseconds unit) const;
    /// The index of the chosen name; names.size() when the table leaves the key out.
    [[nodiscard]] std::size_t choice_index(std::string_view key, std::span<const std::string_view> names) const;

    std::string source_;
    std::string path_;
    std::uint32_t line_;
    std::vector<Setting> settings_;
    std::vector<std::string> keys_;
    mutable std::vector<bool> read_;  ///< per setting: a getter read it
    std::string defined_at_;
};

/// Makes a sink's target from its table: a sink (`std::make_shared<KafkaSink>(…)`), or options
/// that configure() makes one from and keeps it by across configurations.
using SinkFactory = std::function<SinkTarget(SinkSettings& settings)>;

/// A sink type as a configuration file names it.
struct FIELDLOG_API SinkType {
    std::string name;               ///< `type = "<name>"`
    std::vector<std::string> keys;  ///< its table's keys, beside those every sink takes
    SinkFactory factory;
};

/// Lets a configuration file name a sink type of the program's: `[[sinks]] type = "kafka"`.
/// Call it before reading the file. Throws std::invalid_argument when the name is empty or
/// taken, or a key is one every sink takes (type, name, format, level, …).
FIELDLOG_API void register_sink_type(std::string name, std::vector<std::string> keys, SinkFactory factory);

}  // namespace fieldlog

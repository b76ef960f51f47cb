// SPDX-License-Identifier: MIT
// Reading one configuration value as a type, for the TOML reader's own keys and for the sink
// types' (SinkSettings) alike, so both say a wrong value the same way:
//   app.toml:7: sinks[1].max_size: expected a size like "100MiB", got "lots"
// Cold path.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/quoting.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/sink_registry.hpp"

namespace fieldlog::detail {

/// Where a value stands, for errors: the source, its line and the key's path (`sinks[1].path`).
struct SettingPlace {
    std::string_view source;
    std::uint32_t line;
    std::string_view key;
};

/// "a, b or c", for "expected …" messages.
std::string list_names(std::span<const std::string_view> names);

/// Throws ConfigError `source:line: key: message`.
[[noreturn]] void fail_at(const SettingPlace& place, std::string_view message);
/// Throws ConfigError `source:line: key: expected <what>, got <the value>`.
[[noreturn]] void expected_at(const SettingPlace& place, const SettingValue& value, std::string_view what);

std::string_view text_value(const SettingValue& value, const SettingPlace& place, std::string_view what);
bool boolean_value(const SettingValue& value, const SettingPlace& place);
std::int64_t integer_value(const SettingValue& value, const SettingPlace& place, std::int64_t min, std::int64_t max,
                           std::string_view what);
/// A size string ("4MiB") or a whole number of bytes, within [min, max].
std::uint64_t size_value(const SettingValue& value, const SettingPlace& place, std::string_view example, std::uint64_t min,
                         std::uint64_t max);
/// A duration string ("500ms", "1m30s") in whole `unit`s.
std::chrono::nanoseconds duration_value(const SettingValue& value, const SettingPlace& place, std::string_view example,
                                        std::chrono::nanoseconds unit);
Level level_value(const SettingValue& value, const SettingPlace& place);
/// The index in `names` of the string `value` is.
std::size_t choice_value(const SettingValue& value, const SettingPlace& place, std::span<const std::string_view> names);

}  // namespace fieldlog::detail

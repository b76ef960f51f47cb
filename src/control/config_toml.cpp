// SPDX-License-Identifier: MIT
// Config::load / Config::parse: the TOML schema (examples/fieldlog.toml documents every key)
// read through toml++. Each table is walked key by key, so an unknown key, a wrong type or a
// bad value is rejected with the source, line and key path:
//   fieldlog.toml:7: sinks[1].max_size: expected a size like "100MiB", got "lots"
// and a syntax error with the source, line and column, in plain words where they can be told.
// Cold path: runs before configure(), never per record.
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
// toml++'s templates keep their own visibility (src/base/default_visibility.hpp says why).
#pragma GCC visibility push(default)
#include <toml++/toml.h>
#pragma GCC visibility pop

#include "fieldlog/config.hpp"
#include "dispatch/routing.hpp"

namespace fieldlog {
namespace {

/// The widest logger column a console sink takes (what a terminal line can spare).
constexpr std::int64_t kWidestLoggerColumn = 64;

/// An AF_UNIX socket path, without its terminating NUL, fits in sockaddr_un.
constexpr std::size_t kLongestSocketPath = sizeof(sockaddr_un::sun_path) - 1;

/// `text` in double quotes, with quotes, backslashes and control characters escaped.
std::string in_quotes(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out + '"';
}

/// How a value reads in an error message: strings quoted, numbers as written, else its kind.
std::string describe(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::string: return in_quotes(node.as_string()->get());
        case toml::node_type::integer: return std::to_string(node.as_integer()->get());
        case toml::node_type::floating_point: return fmt::format("{}", node.as_floating_point()->get());
        case toml::node_type::boolean: return node.as_boolean()->get() ? "true" : "false";
        case toml::node_type::table: return "a table";
        case toml::node_type::array: return "an array";
        case toml::node_type::date: return "a date";
        case toml::node_type::time: return "a time";
        case toml::node_type::date_time: return "a date-time";
        case toml::node_type::none: break;
    }
    return "nothing";
}

/// Levenshtein distance, to suggest the key a typo meant.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

/// A byte count: a whole number with an optional unit, "512", "64KiB", "100MiB", "1GB".
std::optional<std::uint64_t> parse_size(std::string_view text) {
    std::uint64_t number = 0;
    std::size_t i = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
        if (number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
        number = number * 10 + digit;
    }
    if (i == 0) return std::nullopt;
    while (i < text.size() && text[i] == ' ') ++i;
    static constexpr std::pair<std::string_view, std::uint64_t> units[] = {
        {"", 1},
        {"B", 1},
        {"KB", 1000},
        {"kB", 1000},
        {"MB", 1000 * 1000},
        {"GB", 1000 * 1000 * 1000},
        {"TB", 1000ULL * 1000 * 1000 * 1000},
        {"KiB", 1ULL << 10},
        {"MiB", 1ULL << 20},
        {"GiB", 1ULL << 30},
        {"TiB", 1ULL << 40},
    };
    for (const auto& [unit, scale] : units) {
        if (text.substr(i) != unit) continue;
        if (number > std::numeric_limits<std::uint64_t>::max() / scale) return std::nullopt;
        return number * scale;
    }
    return std::nullopt;
}

/// A duration the way Go writes one: "500ms", "1.5s", "1m30s", "0"; units ns, us (µs), ms, s,
/// m, h. Negative durations are rejected; fractions below a nanosecond are truncated.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
    if (text == "0") return std::chrono::nanoseconds{0};
    if (text.empty()) return std::nullopt;
    static constexpr std::pair<std::string_view, std::int64_t> units[] = {
        {"ns", 1}, {"us", 1000}, {"\u00b5s", 1000}, {"ms", 1000 * 1000}, {"s", 1000 * 1000 * 1000},
        {"m", 60LL * 1000 * 1000 * 1000}, {"h", 3600LL * 1000 * 1000 * 1000},
    };
    std::int64_t total = 0;
    while (!text.empty()) {
        std::int64_t whole = 0;
        std::size_t i = 0;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
            if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, text[i] - '0', &whole)) {
                return std::nullopt;
            }
        }
        const std::size_t whole_digits = i;
        long double fraction = 0;
        long double place = 1;
        if (i < text.size() && text[i] == '.') {
            for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
                place /= 10;
                fraction += place * (text[i] - '0');
            }
        }
        if (whole_digits == 0 && i <= 1) return std::nullopt;  // no digits at all ("ms", ".s")
        text.remove_prefix(i);
        // The longest unit that matches ("ms" before "m").
        std::int64_t scale = 0;
        std::size_t unit_size = 0;
        for (const auto& [unit, unit_scale] : units) {
            if (text.starts_with(unit) && unit.size() > unit_size) {
                scale = unit_scale;
                unit_size = unit.size();
            }
        }
        if (unit_size == 0) return std::nullopt;
        text.remove_prefix(unit_size);
        std::int64_t part = 0;
        if (__builtin_mul_overflow(whole, scale, &part) ||
            __builtin_add_overflow(part, static_cast<std::int64_t>(fraction * static_cast<long double>(scale)), &part) ||
            __builtin_add_overflow(total, part, &total)) {
            return std::nullopt;
        }
    }
    return std::chrono::nanoseconds{total};
}

/// Why `path` cannot be opened for appending, without creating anything ("" when it can):
/// the file must be writable, or its nearest existing ancestor a writable directory.
std::string unwritable_reason(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (fs::exists(status)) {
        if (fs::is_directory(status)) return std::generic_category().message(EISDIR);
        return ::access(path.c_str(), W_OK) == 0 ? std::string{} : std::generic_category().message(errno);
    }
    if (error && error != std::errc::no_such_file_or_directory) return error.message();
    fs::path ancestor = fs::path(path).parent_path();
    for (;;) {
        if (ancestor.empty()) ancestor = ".";
        const fs::file_status ancestor_status = fs::status(ancestor, error);
        if (fs::exists(ancestor_status)) {
            if (!fs::is_directory(ancestor_status)) return std::generic_category().message(ENOTDIR);
            return ::access(ancestor.c_str(), W_OK | X_OK) == 0 ? std::string{} : std::generic_category().message(errno);
        }
        if (error && error != std::errc::no_such_file_or_directory) return error.message();
        if (ancestor == ancestor.root_path() || ancestor == ".") return std::generic_category().message(ENOENT);
        ancestor = ancestor.parent_path();
    }
}

/// One name of a choice in config and the value it stands for.
template <typename T>
struct Choice {
    std::string_view name;
    T value;
};

/// "a, b or c", for "expected …" messages.
template <typename T>
std::string list_names(std::initializer_list<Choice<T>> choices) {
    std::string out;
    std::size_t i = 0;
    for (const Choice<T>& choice : choices) {
        if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
        out += choice.name;
        ++i;
    }
    return out;
}

/// Reads one document; every error names `source`, the line and the key path.
class Reader {
public:
    explicit Reader(std::string_view source) : source_(source) {}

    [[noreturn]] void fail(const toml::source_region& where, std::string_view key, std::string_view message) const {
        throw ConfigError(fmt::format("{}:{}: {}: {}", source_, where.begin.line, key, message));
    }
    [[noreturn]] void expected(const toml::node& node, std::string_view key, std::string_view what) const {
        fail(node.source(), key, fmt::format("expected {}, got {}", what, describe(node)));
    }
    [[noreturn]] void unknown_key(const toml::key& key, std::string_view path,
                                  std::initializer_list<std::string_view> known, std::string_view table_kind) const {
        unknown_key(key, path, std::span<const std::string_view>(known.begin(), known.size()), table_kind);
    }
    [[noreturn]] void unknown_key(const toml::key& key, std::string_view path, std::span<const std::string_view> known,
                                  std::string_view table_kind) const {
        std::string_view closest;
        std::size_t best = 3;  // suggest only a near miss: at most two edits away
        for (const std::string_view name : known) {
            if (const std::size_t d = edit_distance(key.str(), name); d < best) {
                best = d;
                closest = name;
            }
        }
        std::string message = table_kind.empty() ? std::string("unknown key") : fmt::format("unknown key for {}", table_kind);
        if (!closest.empty()) {
            message += fmt::format(" (did you mean \"{}\"?)", closest);
        } else {
            message += " (known keys:";
            for (const std::string_view name : known) message += fmt::format(" {}", name);
            message += ")";
        }
        fail(key.source(), path, message);
    }

    /// "sinks[1].max_size"-style path of `key` inside `parent` ("" for the top level).
    static std::string path(std::string_view parent, std::string_view key) {
        return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
    }
    /// "file:line: key" — what configure() puts before its errors about this sink.
    std::string location(const toml::source_region& where, std::string_view key) const {
        return fmt::format("{}:{}: {}", source_, where.begin.line, key);
    }

    std::string_view text(const toml::node& node, std::string_view key, std::string_view what) const {
        if (!node.is_string()) expected(node, key, what);
        return node.as_string()->get();
    }

    template <typename T>
    T choose(const toml::node& node, std::string_view key, std::initializer_list<Choice<T>> choices) const {
        if (node.is_string()) {
            for (const Choice<T>& choice : choices) {
                if (choice.name == node.as_string()->get()) return choice.value;
            }
        }
        expected(node, key, list_names(choices));
    }

    /// true, false, or "function" (the caller and its function).
    Caller caller(const toml::node& node, std::string_view key) const {
        if (node.is_boolean()) return node.as_boolean()->get() ? Caller::on : Caller::off;
        if (node.is_string() && node.as_string()->get() == "function") return Caller::with_function;
        expected(node, key, "true, false or \"function\"");
    }

    Level level(const toml::node& node, std::string_view key) const {
        if (node.is_string() && node.as_string()->get() == "warning") return Level::warn;
        return choose<Level>(node, key,
                             {{"trace", Level::trace}, {"debug", Level::debug}, {"info", Level::info},
                              {"warn", Level::warn}, {"error", Level::error}, {"fatal", Level::fatal},
                              {"off", Level::off}});
    }

    TimestampPrecision timestamp(const toml::node& node, std::string_view key) const {
        TimestampPrecision precision{};
        if (!node.is_string() || !parse_timestamp_precision(node.as_string()->get(), precision)) {
            expected(node, key,
                     "rfc3339nano, rfc3339nano-trimmed, rfc3339micro, rfc3339milli, rfc3339, unix_nanos, "
                     "unix_seconds_float or short");
        }
        return precision;
    }

    Format format(const toml::node& node, std::string_view key) const {
        return choose<Format>(node, key,
                              {{"json", Format::json}, {"logfmt", Format::logfmt}, {"console", Format::console},
                               {"otel", Format::otel}});
    }

    bool boolean(const toml::node& node, std::string_view key) const {
        if (!node.is_boolean()) expected(node, key, "true or false");
        return node.as_boolean()->get();
    }

    std::int64_t integer(const toml::node& node, std::string_view key, std::int64_t min, std::int64_t max,
                         std::string_view what) const {
        if (!node.is_integer()) expected(node, key, what);
        const std::int64_t value = node.as_integer()->get();
        if (value < min || value > max) expected(node, key, what);
        return value;
    }

    /// Permission bits as an octal string, "0640" or "640": a TOML integer would be read as
    /// decimal unless written 0o640, an easy slip. At most 0777, and the owner may write.
    unsigned file_mode(const toml::node& node, std::string_view key) const {
        constexpr std::string_view what = "an octal mode like \"0640\" (0777 at most, with the owner's write bit 0200)";
        if (!node.is_string()) expected(node, key, what);
        const std::string_view digits = node.as_string()->get();
        unsigned mode = 0;
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), mode, 8);
        if (digits.size() < 3 || digits.size() > 4 || error != std::errc{} || end != digits.data() + digits.size() ||
            mode > 0777 || (mode & 0200) == 0) {
            expected(node, key, what);
        }
        return mode;
    }

    /// A size string ("4MiB") or a whole number of bytes, within [min, max].
    std::uint64_t size(const toml::node& node, std::string_view key, std::string_view example,
                       std::uint64_t min = 0, std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const {
        std::optional<std::uint64_t> bytes;
        if (node.is_string()) bytes = parse_size(node.as_string()->get());
        if (node.is_integer() && node.as_integer()->get() >= 0) bytes = static_cast<std::uint64_t>(node.as_integer()->get());
        if (!bytes) expected(node, key, fmt::format("a size like \"{}\"", example));
        if (*bytes < min || *bytes > max) {
            expected(node, key, fmt::format("a size from {} to {} bytes", min, max));
        }
        return *bytes;
    }

    /// A duration string in whole units of `D` ("500ms", "2s").
    template <typename D>
    D duration(const toml::node& node, std::string_view key, std::string_view example) const {
        std::optional<std::chrono::nanoseconds> parsed;
        if (node.is_string()) parsed = parse_duration(node.as_string()->get());
        if (!parsed) expected(node, key, fmt::format("a duration like \"{}\"", example));
        if (*parsed % D{1} != std::chrono::nanoseconds{0}) {
            constexpr std::string_view unit = std::is_same_v<D, std::chrono::seconds> ? "seconds" : "milliseconds";
            expected(node, key, fmt::format("a duration in whole {} like \"{}\"", unit, example));
        }
        return std::chrono::duration_cast<D>(*parsed);
    }

    /// [levels]: logger = "level"; `prefix` is the logger name of an enclosing dotted key.
    void levels(const toml::table& table, std::string_view prefix, std::map<std::string, Level, std::less<>>& out) const {
        for (const auto& [key, node] : table) {
            const std::string name = prefix.empty() ? std::string(key.str()) : fmt::format("{}.{}", prefix, key.str());
            // TOML's dotted keys (db.pool = "debug") arrive as nested tables: one logger name.
            if (const toml::table* nested = node.as_table()) {
                levels(*nested, name, out);
            } else {
                out.insert_or_assign(name, level(node, path("levels", name)));
            }
        }
    }

    /// The [SECTION.NAME] entries of `table`, NAME a logger name. A table inside an entry is a
    /// dotted child's entry ([sampling.db.pool]); a table holding only such tables is no entry
    /// of its own (TOML makes `db` for `db.pool`), an empty one is (it takes the defaults).
    /// `read_entry(name, at, key, entry)` reads each entry; its keys that are tables are children.
    template <typename ReadEntry>
    void logger_entries(const toml::table& table, std::string_view section, std::string_view prefix,
                        std::string_view what, const ReadEntry& read_entry) const {
        for (const auto& [key, node] : table) {
            const std::string name = prefix.empty() ? std::string(key.str()) : fmt::format("{}.{}", prefix, key.str());
            const std::string at = path(section, name);
            const toml::table* entry = node.as_table();
            if (entry == nullptr) expected(node, at, what);
            toml::table children;
            bool own_keys = entry->empty();
            for (const auto& [field, value] : *entry) {
                if (value.is_table()) {
                    children.insert(field, value);
                } else {
                    own_keys = true;
                }
            }
            if (own_keys) read_entry(name, at, key, *entry);
            if (!children.empty()) logger_entries(children, section, name, what, read_entry);
        }
    }

    /// [sampling.NAME] tables: `first`, `thereafter`, `interval`; "*" is every logger.
    void sampling(const toml::table& table, std::map<std::string, SamplingConfig, std::less<>>& out) const {
        logger_entries(table, "sampling", "", "a table of first, thereafter and interval",
                       [&](const std::string& name, const std::string& at, const toml::key& key, const toml::table& entry) {
            if (name != "*") {
                if (const std::string_view problem = detail::LoggerFilter::check(name);
                    !problem.empty() || name.ends_with(".*")) {
                    fail(key.source(), at, "is not a logger name (like \"http\" or \"db.pool\", or \"*\" for every logger)");
                }
            }
            SamplingConfig config;
            for (const auto& [field, value] : entry) {
                if (value.is_table()) continue;  // a child's entry
                const std::string field_at = path(at, field.str());
                if (field == "first") {
                    config.first = static_cast<std::uint32_t>(integer(value, field_at, 0, UINT32_MAX, "a count of records"));
                } else if (field == "thereafter") {
                    config.thereafter = static_cast<std::uint32_t>(
                        integer(value, field_at, 0, UINT32_MAX, "a count of records (0: none after the first)"));
                } else if (field == "interval") {
                    config.interval = duration<std::chrono::nanoseconds>(value, field_at, "1s");
                    if (config.interval.count() <= 0) expected(value, field_at, "a positive duration like \"1s\"");
                } else {
                    unknown_key(field, field_at, {"first", "thereafter", "interval"}, "a sampling entry");
                }
            }
            out.insert_or_assign(name, config);
        });
    }

    /// [backtraces.NAME] tables: `records`, `keep_from`, `trigger` (Logger::keep_backtrace's
    /// Backtrace). An entry covers its logger alone ("" is the root): a dotted child's entry is
    /// its own backtrace.
    void backtraces(const toml::table& table, std::map<std::string, Backtrace, std::less<>>& out) const {
        logger_entries(table, "backtraces", "", "a table of records, keep_from and trigger",
                       [&](const std::string& name, const std::string& at, const toml::key& key, const toml::table& entry) {
            if (!name.empty() &&
                (name == "*" || name.ends_with(".*") || !detail::LoggerFilter::check(name).empty())) {
                fail(key.source(), at, "is not a logger name (like \"http\" or \"db.pool\"; \"\" is the root logger)");
            }
            Backtrace backtrace;
            for (const auto& [field, value] : entry) {
                if (value.is_table()) continue;  // a child's entry
                const std::string field_at = path(at, field.str());
                if (field == "records") {
                    backtrace.records = static_cast<std::uint32_t>(
                        integer(value, field_at, 0, UINT32_MAX, "a count of records (0: none kept)"));
                } else if (field == "keep_from") {
                    backtrace.keep_from = level(value, field_at);
                } else if (field == "trigger") {
                    backtrace.trigger = level(value, field_at);
                } else {
                    unknown_key(field, field_at, {"records", "keep_from", "trigger"}, "a backtrace entry");
                }
            }
            if (backtrace.records != 0 && (backtrace.keep_from >= backtrace.trigger || backtrace.trigger == Level::off)) {
                fail(entry.source(), at, "keeps no level: keep_from must be below trigger, and trigger a level");
            }
            out.insert_or_assign(name, backtrace);
        });
    }

    /// [resource]: attribute = string, integer, float or boolean; `prefix` is the key of an
    /// enclosing dotted key, so `service.name = "x"` and `"service.name" = "x"` say the same.
    void resource(const toml::table& table, std::string_view prefix, std::vector<ResourceAttribute>& out) const {
        for (const auto& [key, node] : table) {
            const std::string name = path(prefix, key.str());
            const std::string at = path("resource", name);
            if (const toml::table* nested = node.as_table()) {
                resource(*nested, name, out);
                continue;
            }
            for (const ResourceAttribute& earlier : out) {
                if (earlier.key == name) fail(node.source(), at, "given twice (a quoted and a dotted key name one attribute)");
            }
            if (const auto* s = node.as_string()) {
                out.push_back({name, s->get()});
            } else if (const auto* i = node.as_integer()) {
                out.push_back({name, i->get()});
            } else if (const auto* f = node.as_floating_point()) {
                out.push_back({name, f->get()});
            } else if (const auto* b = node.as_boolean()) {
                out.push_back({name, b->get()});
            } else {
                expected(node, at, "a string, integer, float or boolean");
            }
        }
    }

    void async(const toml::table& table, AsyncConfig& out) const {
        for (const auto& [key, node] : table) {
            const std::string at = path("async", key.str());
            if (key == "enabled") {
                out.enabled = boolean(node, at);
            } else if (key == "queue") {
                out.queue_bytes = size(node, at, "4MiB", 1);
            } else if (key == "overflow") {
                out.overflow = choose<OverflowPolicy>(node, at, {{"block", OverflowPolicy::block}, {"drop", OverflowPolicy::drop}});
            } else {
                unknown_key(key, at, {"enabled", "queue", "overflow"}, "");
            }
        }
    }

    /// The keys every kind of sink takes.
    static constexpr std::string_view kEverySinkKeys[] = {"type",      "name", "format", "level",   "caller",
                                                          "tid",       "timestamp", "color", "logger_width",
                                                          "loggers",   "exclude"};

    /// A non-empty array of logger patterns ("db", "db.*", "*"), each checked.
    std::vector<std::string> logger_patterns(const toml::node& node, std::string_view at) const {
        constexpr std::string_view what = "an array of logger names like [\"audit\", \"payments.*\"]";
        const toml::array* array = node.as_array();
        if (array == nullptr) expected(node, at, what);
        if (array->empty()) fail(node.source(), at, "is empty: name at least one logger (\"*\" is every logger), or leave the key out");
        std::vector<std::string> patterns;
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& item = *array->get(i);
            const std::string item_at = fmt::format("{}[{}]", at, i);
            const std::string_view pattern = text(item, item_at, what);
            if (const std::string_view problem = detail::LoggerFilter::check(pattern); !problem.empty()) {
                fail(item.source(), item_at, fmt::format("\"{}\" {}", pattern, problem));
            }
            patterns.emplace_back(pattern);
        }
        return patterns;
    }

    /// `redact`: an array of key names or globs, none empty (an empty one would match only
    /// the empty key, which no one means).
    std::vector<std::string> redact_rules(const toml::node& node, std::string_view at) const {
        constexpr std::string_view what = "an array of key names or globs like [\"password\", \"*token*\"]";
        const toml::array* array = node.as_array();
        if (array == nullptr) expected(node, at, what);
        std::vector<std::string> rules;
        for (std::size_t i = 0; i < array->size(); ++i) {
            const toml::node& item = *array->get(i);
            const std::string item_at = fmt::format("{}[{}]", at, i);
            const std::string_view rule = text(item, item_at, "a key name or glob like \"*secret*\"");
            if (rule.empty()) fail(item.source(), item_at, "is empty: name a key, or a glob like \"*token*\"");
            rules.emplace_back(rule);
        }
        return rules;
    }

    SinkConfig sink(const toml::table& table, std::string_view at) const {
        const toml::node* type_node = table.get("type");
        if (type_node == nullptr) {
            fail(table.source(), at, "missing key \"type\" (stdout, stderr, file, udp, journald, syslog or null)");
        }
        enum class Kind { stdout_stream, stderr_stream, file, udp, journald, syslog, null };
        const Kind kind = choose<Kind>(*type_node, path(at, "type"),
                                 {{"stdout", Kind::stdout_stream}, {"stderr", Kind::stderr_stream},
                                  {"file", Kind::file}, {"udp", Kind::udp}, {"journald", Kind::journald},
                                  {"syslog", Kind::syslog}, {"null", Kind::null}});
        SinkConfig sink;
        sink.defined_at = location(table.source(), at);
        FileSinkOptions file;
        UdpSinkOptions udp;
        JournaldSinkOptions journald;
        SyslogSinkOptions syslog;
        for (const auto& [key, node] : table) {
            const std::string key_path = path(at, key.str());
            if (key == "type") continue;
            if (key == "format") {
                sink.format = format(node, key_path);
                if (kind == Kind::journald && sink.format != Format::json) {
                    expected(node, key_path, "json (a journald sink writes values as JSON does)");
                }
            } else if (key == "level") {
                sink.level = level(node, key_path);
            } else if (key == "caller") {
                sink.caller = caller(node, key_path);
            } else if (key == "tid") {
                sink.tid = boolean(node, key_path);
            } else if (key == "timestamp") {
                sink.timestamp = timestamp(node, key_path);
            } else if (key == "color") {
                sink.colour = choose<ColourMode>(node, key_path,
                                                 {{"auto", ColourMode::automatic}, {"always", ColourMode::always},
                                                  {"never", ColourMode::never}});
            } else if (key == "logger_width") {
                sink.logger_width = static_cast<std::uint8_t>(
                    integer(node, key_path, 0, kWidestLoggerColumn, "a column width from 0 to 64"));
            } else if (key == "loggers") {
                sink.loggers = logger_patterns(node, key_path);
            } else if (key == "exclude") {
                sink.exclude = logger_patterns(node, key_path);
            } else if (key == "name") {
                sink.name = std::string(text(node, key_path, "a name like \"audit\""));
                if (sink.name.empty()) expected(node, key_path, "a name like \"audit\"");
            } else if (kind == Kind::file && file_key(key, node, key_path, file)) {
                if (key == "path") sink.defined_at = location(node.source(), key_path);
            } else if (kind == Kind::udp && udp_key(key, node, key_path, udp)) {
                if (key == "address") sink.defined_at = location(node.source(), key_path);
            } else if (kind == Kind::journald && journald_key(key, node, key_path, journald)) {
                if (key == "socket") sink.defined_at = location(node.source(), key_path);
            } else if (kind == Kind::syslog && syslog_key(key, node, key_path, syslog)) {
                if (key == "address") sink.defined_at = location(node.source(), key_path);
            } else {
                static constexpr std::string_view kinds[] = {"a stdout sink", "a stderr sink", "a file sink",
                                                             "a udp sink", "a journald sink", "a syslog sink",
                                                             "a null sink"};
                std::vector<std::string_view> known(std::begin(kEverySinkKeys), std::end(kEverySinkKeys));
                switch (kind) {
                    case Kind::file:
                        known.insert(known.end(), {"path", "max_size", "rotate", "rotate_utc", "keep", "max_age",
                                                   "max_total_bytes", "compress", "compression_level", "buffer",
                                                   "flush_interval", "flush_level", "fsync", "reopen_check", "mode",
                                                   "follow_symlinks"});
                        break;
                    case Kind::udp:
                        known.insert(known.end(), {"address", "framing", "max_datagram", "oversize", "facility",
                                                   "app_name", "hostname", "resolve_interval"});
                        break;
                    case Kind::journald: known.insert(known.end(), {"socket", "identifier"}); break;
                    case Kind::syslog:
                        known.insert(known.end(), {"address", "transport", "ca_file", "cert_file", "key_file", "verify",
                                                   "server_name", "buffer_bytes", "reconnect_max", "drain_timeout",
                                                   "facility", "app_name", "hostname"});
                        break;
                    default: break;
                }
                unknown_key(key, key_path, known, kinds[static_cast<int>(kind)]);
            }
        }
        switch (kind) {
            case Kind::stdout_stream: sink.target = StdoutSinkOptions{.stream = StdStream::out}; break;
            case Kind::stderr_stream: sink.target = StdoutSinkOptions{.stream = StdStream::err}; break;
            case Kind::null: sink.target = std::shared_ptr<Sink>(std::make_shared<NullSink>()); break;
            case Kind::file:
                if (file.path.empty()) fail(table.source(), at, "missing key \"path\" (a file sink writes to a file)");
                sink.target = std::move(file);
                break;
            case Kind::udp:
                if (udp.address.empty()) {
                    fail(table.source(), at, "missing key \"address\" (a udp sink sends to \"host:port\")");
                }
                sink.target = std::move(udp);
                break;
            case Kind::journald: sink.target = std::move(journald); break;
            case Kind::syslog:
                if (syslog.address.empty()) {
                    fail(table.source(), at, "missing key \"address\" (a syslog sink connects to \"host:port\")");
                }
                if (syslog.transport != SyslogTransport::tls && syslog.transport != SyslogTransport::relp_tls) {
                    for (const char* tls_only : {"ca_file", "cert_file", "key_file", "server_name", "verify"}) {
                        if (const toml::node* node = table.get(tls_only)) {
                            fail(node->source(), path(at, tls_only), "only for transport = \"tls\" or \"relp-tls\"");
                        }
                    }
                }
                if (syslog.cert_file.empty() != syslog.key_file.empty()) {
                    const char* given = syslog.cert_file.empty() ? "key_file" : "cert_file";
                    fail(table.get(given)->source(), path(at, given), "needs both cert_file and key_file");
                }
                sink.target = std::move(syslog);
                break;
        }
        return sink;
    }

    /// Reads one key of a file sink; false when `key` is not one.
    bool file_key(const toml::key& key, const toml::node& node, std::string_view at, FileSinkOptions& file) const {
        if (key == "path") {
            file.path = std::string(text(node, at, "a file path"));
            if (file.path.empty()) expected(node, at, "a file path");
            if (const std::string reason = unwritable_reason(file.path); !reason.empty()) {
                fail(node.source(), at, fmt::format("cannot open {} for writing: {}", in_quotes(file.path), reason));
            }
        } else if (key == "max_size") {
            file.max_size = size(node, at, "100MiB");
        } else if (key == "rotate") {
            file.rotate_every = choose<RotateEvery>(node, at,
                                       {{"never", RotateEvery::never}, {"hourly", RotateEvery::hour}, {"daily", RotateEvery::day}});
        } else if (key == "rotate_utc") {
            file.rotate_utc = boolean(node, at);
        } else if (key == "keep") {
            file.keep = static_cast<unsigned>(
                integer(node, at, 0, std::numeric_limits<unsigned>::max(), "a number of files, 0 or more"));
        } else if (key == "max_age") {
            file.max_age = duration<std::chrono::seconds>(node, at, "168h");
        } else if (key == "max_total_bytes") {
            file.max_total_bytes = size(node, at, "1GiB");
        } else if (key == "compress") {
            file.compress = choose<FileCompression>(node, at, {{"none", FileCompression::none}, {"gzip", FileCompression::gzip}});
        } else if (key == "compression_level") {
            file.compression_level = static_cast<int>(integer(node, at, 1, 9, "a zlib level from 1 (fastest) to 9 (smallest)"));
        } else if (key == "buffer") {
            file.buffer_size = size(node, at, "64KiB");
        } else if (key == "flush_interval") {
            file.flush_interval = duration<std::chrono::milliseconds>(node, at, "1s");
        } else if (key == "flush_level") {
            file.flush_level = level(node, at);
        } else if (key == "fsync") {
            file.fsync_on_flush = boolean(node, at);
        } else if (key == "reopen_check") {
            file.reopen_check = duration<std::chrono::milliseconds>(node, at, "1s");
        } else if (key == "mode") {
            file.mode = file_mode(node, at);
        } else if (key == "follow_symlinks") {
            file.follow_symlinks = boolean(node, at);
        } else {
            return false;
        }
        return true;
    }

    /// Reads one key of a UDP sink; false when `key` is not one.
    bool udp_key(const toml::key& key, const toml::node& node, std::string_view at, UdpSinkOptions& udp) const {
        if (key == "address") {
            udp.address = std::string(text(node, at, "an address like \"127.0.0.1:5140\""));
            if (udp.address.find(':') == std::string::npos) expected(node, at, "an address like \"127.0.0.1:5140\"");
        } else if (key == "framing") {
            udp.framing = choose<UdpFraming>(node, at, {{"json", UdpFraming::json}, {"rfc5424", UdpFraming::rfc5424}});
        } else if (key == "max_datagram") {
            udp.max_datagram = size(node, at, "2KiB", 1, 65507);
        } else if (key == "oversize") {
            udp.oversize = choose<OversizePolicy>(node, at, {{"truncate", OversizePolicy::truncate}, {"drop", OversizePolicy::drop}});
        } else if (key == "facility") {
            udp.facility = static_cast<int>(integer(node, at, 0, 23, "a syslog facility from 0 to 23"));
        } else if (key == "app_name") {
            udp.app_name = std::string(text(node, at, "a name"));
        } else if (key == "hostname") {
            udp.hostname = std::string(text(node, at, "a host name"));
        } else if (key == "resolve_interval") {
            udp.resolve_interval = duration<std::chrono::seconds>(node, at, "60s");
        } else {
            return false;
        }
        return true;
    }

    /// Reads one key of a journald sink; false when `key` is not one.
    bool journald_key(const toml::key& key, const toml::node& node, std::string_view at,
                      JournaldSinkOptions& journald) const {
        if (key == "socket") {
            constexpr std::string_view what = "a socket path like \"/run/systemd/journal/socket\"";
            journald.socket = std::string(text(node, at, what));
            if (journald.socket.empty()) expected(node, at, what);
            if (journald.socket.size() > kLongestSocketPath) {
                expected(node, at, fmt::format("a socket path of at most {} bytes", kLongestSocketPath));
            }
        } else if (key == "identifier") {
            journald.identifier = std::string(text(node, at, "a name"));
        } else {
            return false;
        }
        return true;
    }

    /// Reads one key of a syslog sink; false when `key` is not one.
    bool syslog_key(const toml::key& key, const toml::node& node, std::string_view at, SyslogSinkOptions& syslog) const {
        const auto readable_file = [&](std::string& out) {
            out = std::string(text(node, at, "a file path"));
            if (out.empty()) expected(node, at, "a file path");
            if (::access(out.c_str(), R_OK) != 0) {
                fail(node.source(), at, fmt::format("cannot read {}: {}", in_quotes(out), std::generic_category().message(errno)));
            }
        };
        if (key == "address") {
            syslog.address = std::string(text(node, at, "an address like \"127.0.0.1:6514\""));
            if (syslog.address.find(':') == std::string::npos) expected(node, at, "an address like \"127.0.0.1:6514\"");
        } else if (key == "transport") {
            syslog.transport = choose<SyslogTransport>(
                node, at,
                {{"tcp", SyslogTransport::tcp}, {"tls", SyslogTransport::tls}, {"relp", SyslogTransport::relp},
                 {"relp-tls", SyslogTransport::relp_tls}});
        } else if (key == "ca_file") {
            readable_file(syslog.ca_file);
        } else if (key == "cert_file") {
            readable_file(syslog.cert_file);
        } else if (key == "key_file") {
            readable_file(syslog.key_file);
        } else if (key == "verify") {
            syslog.verify = boolean(node, at);
        } else if (key == "server_name") {
            syslog.server_name = std::string(text(node, at, "a host name"));
        } else if (key == "buffer_bytes") {
            syslog.buffer_bytes = size(node, at, "4MiB", 4096);
        } else if (key == "reconnect_max") {
            syslog.reconnect_max = duration<std::chrono::milliseconds>(node, at, "5s");
        } else if (key == "drain_timeout") {
            syslog.drain_timeout = duration<std::chrono::milliseconds>(node, at, "2s");
        } else if (key == "facility") {
            syslog.facility = static_cast<int>(integer(node, at, 0, 23, "a syslog facility from 0 to 23"));
        } else if (key == "app_name") {
            syslog.app_name = std::string(text(node, at, "a name"));
        } else if (key == "hostname") {
            syslog.hostname = std::string(text(node, at, "a host name"));
        } else {
            return false;
        }
        return true;
    }

    Config document(const toml::table& root) const {
        Config config;
        for (const auto& [key, node] : root) {
            const std::string_view at = key.str();
            if (key == "level") {
                config.level = level(node, at);
            } else if (key == "sampling") {
                const toml::table* table = node.as_table();
                if (table == nullptr) expected(node, at, "a table of [sampling.LOGGER] entries");
                sampling(*table, config.sampling);
            } else if (key == "backtraces") {
                const toml::table* table = node.as_table();
                if (table == nullptr) expected(node, at, "a table of [backtraces.LOGGER] entries");
                backtraces(*table, config.backtraces);
            } else if (key == "levels") {
                const toml::table* table = node.as_table();
                if (table == nullptr) expected(node, at, "a table of logger = \"level\"");
                levels(*table, "", config.levels);
            } else if (key == "format") {
                config.format = format(node, at);
            } else if (key == "timestamp") {
                config.timestamp.precision = timestamp(node, at);
            } else if (key == "timezone") {
                constexpr std::string_view what = "\"UTC\", \"local\" or an IANA zone name like \"Europe/Berlin\"";
                try {
                    config.timestamp.zone = TimeZone::parse(text(node, at, what));
                } catch (const std::invalid_argument&) {
                    expected(node, at, what);
                }
            } else if (key == "caller") {
                config.caller = caller(node, at);
            } else if (key == "tid") {
                config.tid = boolean(node, at);
            } else if (key == "crash_handlers") {
                config.crash_handlers = boolean(node, at);
            } else if (key == "duration") {
                config.duration = choose<DurationFormat>(node, at,
                                         {{"string", DurationFormat::string}, {"string-ascii", DurationFormat::string_ascii},
                                          {"nanos", DurationFormat::nanos}, {"seconds", DurationFormat::seconds}});
            } else if (key == "resource") {
                const toml::table* table = node.as_table();
                if (table == nullptr) expected(node, at, "a table ([resource]) of attribute = value");
                resource(*table, "", config.resource);
            } else if (key == "redact") {
                config.redact = redact_rules(node, at);
            } else if (key == "max_value_bytes") {
                config.max_value_bytes = size(node, at, "64KiB");
            } else if (key == "async") {
                const toml::table* table = node.as_table();
                if (table == nullptr) expected(node, at, "a table ([async])");
                async(*table, config.async);
            } else if (key == "sinks") {
                const toml::array* array = node.as_array();
                if (array == nullptr) expected(node, at, "[[sinks]] tables");
                // No sinks means one stdout sink, which `sinks = []` hardly means to say.
                if (array->empty()) {
                    fail(node.source(), at,
                         "an empty list (leave it out for one stdout sink, or discard records with a sink of type \"null\")");
                }
                for (std::size_t i = 0; i < array->size(); ++i) {
                    const std::string element = fmt::format("sinks[{}]", i);
                    const toml::table* table = (*array)[i].as_table();
                    if (table == nullptr) expected((*array)[i], element, "a table ([[sinks]])");
                    config.sinks.push_back(sink(*table, element));
                }
            } else {
                unknown_key(key, at,
                            {"level", "levels", "sampling", "backtraces", "format", "timestamp", "timezone", "duration", "caller", "tid",
                             "crash_handlers", "async", "resource", "redact", "max_value_bytes", "sinks"},
                            "");
            }
        }
        return config;
    }

private:
    std::string_view source_;
};

}  // namespace

namespace {

/// Line `line` (from 1) of `text`, without its '\n'.
std::string_view line_of(std::string_view text, std::size_t line) {
    for (; line > 1; --line) {
        const std::size_t newline = text.find('\n');
        if (newline == std::string_view::npos) return {};
        text.remove_prefix(newline + 1);
    }
    return text.substr(0, text.find('\n'));
}

/// The characters of `line`, as toml++ counts columns (UTF-8 continuation bytes are no column).
std::size_t columns(std::string_view line) {
    std::size_t count = 0;
    for (const char c : line) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
    return count;
}

/// The quoted name in toml++'s "cannot redefine existing table 'async'".
std::string_view quoted_name(std::string_view description) {
    const std::size_t close = description.rfind('\'');
    const std::size_t open = close == std::string_view::npos || close == 0 ? std::string_view::npos
                                                                         : description.rfind('\'', close - 1);
    return open == std::string_view::npos ? std::string_view{} : description.substr(open + 1, close - open - 1);
}

/// What the user did wrong, in plain words, for the syntax errors toml++'s description (and the
/// line it points at) tell apart reliably; "" for the others. toml++ says "unescaped control
/// characters …" for a string the line ends in, for instance.
std::string plain_words(std::string_view description, std::string_view text, const toml::source_position& at) {
    const std::string_view line = line_of(text, at.line);
    const bool at_line_end = at.column > columns(line);
    const auto says = [&](std::string_view what) { return description.find(what) != std::string_view::npos; };
    if (says("while parsing string: unescaped control characters") && at_line_end) {
        return "unterminated string (the closing \" is missing on this line)";
    }
    if (says("while parsing literal string: control characters") && at_line_end) {
        return "unterminated string (the closing ' is missing on this line)";
    }
    if (says("string: encountered end-of-file")) return "unterminated string (its closing quotes are missing)";
    if (says("string: unknown escape sequence")) {
        return "bad escape sequence in a string (write \\\\ for a backslash, or use 'single quotes')";
    }
    if (says("key-value pair: expected '='")) return "missing '=' after the key";
    if (says("key-value pair: expected value")) return "missing value after '='";
    if (says("key-value pair: cannot redefine existing")) {
        return fmt::format("duplicate key \"{}\" (it is set earlier in this table)", quoted_name(description));
    }
    if (says("table header: cannot redefine existing table")) {
        return fmt::format("duplicate table [{}] (a table header may appear once)", quoted_name(description));
    }
    if (says("table header: expected ']'")) {
        return line.find("[[") != std::string_view::npos ? "unterminated table header (the closing ]] is missing)"
                                                       : "unterminated table header (the closing ] is missing)";
    }
    if (says("while parsing array: encountered end-of-file") || says("while parsing array: expected comma or closing ']'")) {
        return "unterminated array (a ',' between values or the closing ] is missing)";
    }
    return {};
}

}  // namespace

Config Config::parse(std::string_view text, std::string_view source) {
    toml::table table;
    try {
        table = toml::parse(text, source);
    } catch (const toml::parse_error& e) {
        const toml::source_position at = e.source().begin;
        const std::string plain = plain_words(e.description(), text, at);
        throw ConfigError(plain.empty() ? fmt::format("{}:{}:{}: {}", source, at.line, at.column, e.description())
                                        : fmt::format("{}:{}:{}: {} ({})", source, at.line, at.column, plain, e.description()));
    }
    return Reader(source).document(table);
}

Config Config::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw ConfigError(fmt::format("{}: cannot read the configuration file: {}", path, std::strerror(errno)));
    }
    std::stringstream text;
    text << in.rdbuf();
    Config config = parse(text.str(), path);
    config.source = path;
    config.apply_env();
    return config;
}

}  // namespace fieldlog

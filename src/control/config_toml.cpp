// SPDX-License-Identifier: MIT
// Config::load / Config::parse: the TOML schema (examples/fieldlog.toml documents every key)
// read through toml++. This walk reads the generic keys (top level, levels, sampling,
// backtraces, async, resource, and those every sink takes); a sink type reads its own from
// SinkSettings (fieldlog/sink_registry.hpp; the built-in ones in sinks/<sink>/). Each
// table is walked key by key, so an unknown key, a wrong type or a bad value is rejected with
// the source, line and key path:
//   fieldlog.toml:7: sinks[1].max_size: expected a size like "100MiB", got "lots"
// and a syntax error with the source, line and column, in plain words where they can be told.
// Cold path: runs before configure(), never per record.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>
// toml++'s templates keep their own visibility (src/base/default_visibility.hpp says why).
#pragma GCC visibility push(default)
#include <toml++/toml.h>
#pragma GCC visibility pop

#include "control/setting_values.hpp"
#include "control/sink_types.hpp"
#include "dispatch/routing.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/sink_registry.hpp"

namespace fieldlog {
namespace {

/// The widest logger column a console sink takes (what a terminal line can spare).
constexpr std::int64_t kWidestLoggerColumn = 64;

/// `node` as the typed readers (control/setting_values.hpp) and sink types take it, with how
/// an error shows it: strings quoted, numbers as written, else its kind.
SettingValue value_of(const toml::node& node) {
    SettingValue value{.line = static_cast<std::uint32_t>(node.source().begin.line)};
    switch (node.type()) {
        case toml::node_type::string:
            value.kind = SettingValue::Kind::text;
            value.text = node.as_string()->get();
            value.shown = detail::in_quotes(value.text);
            break;
        case toml::node_type::integer:
            value.kind = SettingValue::Kind::integer;
            value.integer = node.as_integer()->get();
            value.shown = std::to_string(value.integer);
            break;
        case toml::node_type::floating_point:
            value.kind = SettingValue::Kind::floating;
            value.floating = node.as_floating_point()->get();
            value.shown = fmt::format("{}", value.floating);
            break;
        case toml::node_type::boolean:
            value.kind = SettingValue::Kind::boolean;
            value.boolean = node.as_boolean()->get();
            value.shown = value.boolean ? "true" : "false";
            break;
        case toml::node_type::array:
            value.kind = SettingValue::Kind::array;
            for (const toml::node& item : *node.as_array()) value.items.push_back(value_of(item));
            value.shown = "an array";
            break;
        case toml::node_type::table: value.shown = "a table"; break;
        case toml::node_type::date: value.shown = "a date"; break;
        case toml::node_type::time: value.shown = "a time"; break;
        case toml::node_type::date_time: value.shown = "a date-time"; break;
        case toml::node_type::none: value.shown = "nothing"; break;
    }
    return value;
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

/// Reads one document; every error names `source`, the line and the key path.
class Reader {
public:
    explicit Reader(std::string_view source) : source_(source) {}

    /// Where `node` stands, for errors about it under `key`.
    detail::SettingPlace place(const toml::node& node, std::string_view key) const {
        return {source_, static_cast<std::uint32_t>(node.source().begin.line), key};
    }

    [[noreturn]] void fail(const toml::source_region& where, std::string_view key, std::string_view message) const {
        detail::fail_at({source_, static_cast<std::uint32_t>(where.begin.line), key}, message);
    }
    [[noreturn]] void expected(const toml::node& node, std::string_view key, std::string_view what) const {
        detail::expected_at(place(node, key), value_of(node), what);
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
    T choose(const toml::node& node, std::string_view key, std::initializer_list<SettingChoice<T>> choices) const {
        std::vector<std::string_view> names;
        for (const SettingChoice<T>& choice : choices) names.push_back(choice.name);
        return choices.begin()[detail::choice_value(value_of(node), place(node, key), names)].value;
    }

    /// true, false, or "function" (the caller and its function).
    Caller caller(const toml::node& node, std::string_view key) const {
        if (node.is_boolean()) return node.as_boolean()->get() ? Caller::on : Caller::off;
        if (node.is_string() && node.as_string()->get() == "function") return Caller::with_function;
        expected(node, key, "true, false or \"function\"");
    }

    Level level(const toml::node& node, std::string_view key) const {
        return detail::level_value(value_of(node), place(node, key));
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
        return detail::boolean_value(value_of(node), place(node, key));
    }

    std::int64_t integer(const toml::node& node, std::string_view key, std::int64_t min, std::int64_t max,
                         std::string_view what) const {
        return detail::integer_value(value_of(node), place(node, key), min, max, what);
    }

    /// A size string ("4MiB") or a whole number of bytes, within [min, max].
    std::uint64_t size(const toml::node& node, std::string_view key, std::string_view example,
                       std::uint64_t min = 0, std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const {
        return detail::size_value(value_of(node), place(node, key), example, min, max);
    }

    /// A duration string in whole units of `D` ("500ms", "2s").
    template <typename D>
    D duration(const toml::node& node, std::string_view key, std::string_view example) const {
        return std::chrono::duration_cast<D>(detail::duration_value(
            value_of(node), place(node, key), example, std::chrono::duration_cast<std::chrono::nanoseconds>(D{1})));
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

    /// One [[sinks]] table: the keys every sink takes are read here, the others by the sink
    /// type `type` names (fieldlog/sink_registry.hpp), from the keys it declared.
    SinkConfig sink(const toml::table& table, std::string_view at) const {
        const std::vector<std::string> type_names = detail::sink_type_names();
        const std::string one_of = detail::list_names(std::vector<std::string_view>(type_names.begin(), type_names.end()));
        const toml::node* type_node = table.get("type");
        if (type_node == nullptr) fail(table.source(), at, fmt::format("missing key \"type\" ({})", one_of));
        const std::string type_at = path(at, "type");
        const std::optional<SinkType> type = detail::find_sink_type(text(*type_node, type_at, one_of));
        if (!type) expected(*type_node, type_at, one_of);
        SinkConfig sink;
        std::vector<Setting> settings;
        for (const auto& [key, node] : table) {
            const std::string key_path = path(at, key.str());
            if (key == "type") continue;
            if (key == "format") {
                sink.format = format(node, key_path);
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
                    integer(node, key_path, 0, kWidestLoggerColumn, "a column width"));
            } else if (key == "loggers") {
                sink.loggers = logger_patterns(node, key_path);
            } else if (key == "exclude") {
                sink.exclude = logger_patterns(node, key_path);
            } else if (key == "name") {
                sink.name = std::string(text(node, key_path, "a name like \"audit\""));
                if (sink.name.empty()) expected(node, key_path, "a name like \"audit\"");
            } else if (std::find(type->keys.begin(), type->keys.end(), key.str()) == type->keys.end()) {
                std::vector<std::string_view> known(std::begin(detail::every_sink_key), std::end(detail::every_sink_key));
                known.insert(known.end(), type->keys.begin(), type->keys.end());
                unknown_key(key, key_path, known, fmt::format("a {} sink", type->name));
            }
            settings.push_back({std::string(key.str()), value_of(node)});
        }
        SinkSettings typed(std::string(source_), std::string(at), static_cast<std::uint32_t>(table.source().begin.line),
                           std::move(settings), type->keys);
        sink.target = type->factory(typed);
        typed.check_every_key_read();
        sink.defined_at = typed.defined_at();
        return sink;
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
                } catch (const std::invalid_argument& refused) {
                    // Without named zones, the library's refusal names the option to rebuild with.
                    if (!FIELDLOG_WITH_TZ) fail(node.source(), at, refused.what());
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

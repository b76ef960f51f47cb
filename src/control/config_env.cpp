// FIELDLOG_* environment overrides, the last layer of configuration:
//   code defaults < file (Config::load, or FIELDLOG_CONFIG) < FIELDLOG_LEVEL / FIELDLOG_FORMAT,
// and FIELDLOG_LEVEL's syntax, which set_levels() takes at run time too.
// Errors name the variable and the key, like the file's: `FIELDLOG_LEVEL: levels.db: expected …`.
// Cold path.
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "control/state.hpp"
#include "fieldlog/config.hpp"

namespace fieldlog {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

/// The variable's value, or nullptr when it is unset or empty (both mean "no override").
const char* env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

Config& Config::apply_env() {
    if (const char* value = env("FIELDLOG_LEVEL")) {
        // The environment wins for what it names: a bare level sets every logger (the file's
        // per-logger levels go), `name=level` entries set those names over the file's.
        std::optional<Level> global;
        std::map<std::string, Level, std::less<>> named;
        detail::parse_level_spec(value, "FIELDLOG_LEVEL", global, named);
        if (global) {
            level = *global;
            levels = std::move(named);
        } else {
            for (auto& [name, name_level] : named) levels.insert_or_assign(name, name_level);
        }
    }
    if (const char* value = env("FIELDLOG_FORMAT")) {
        const auto parsed = parse_format(trim(value));
        if (!parsed) {
            throw ConfigError(fmt::format("FIELDLOG_FORMAT: format: expected json, logfmt, console or otel, got \"{}\"", value));
        }
        format = *parsed;  // the default of every sink; a sink with a format of its own keeps it
    }
    return *this;
}

namespace detail {

void parse_level_spec(std::string_view spec, std::string_view source, std::optional<Level>& global,
                      std::map<std::string, Level, std::less<>>& named) {
    const auto level_of = [&](std::string_view text, std::string_view key) {
        if (const auto level = parse_level(text)) return *level;
        throw ConfigError(fmt::format("{}: {}: expected trace, debug, info, warn, error, fatal or off, got \"{}\"",
                                      source, key, text));
    };
    // Parsed completely before anything is assigned, so a bad entry changes nothing.
    std::optional<Level> bare;
    std::map<std::string, Level, std::less<>> entries;
    std::string_view rest = spec;
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view entry = trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (entry.empty()) continue;
        const std::size_t eq = entry.find('=');
        if (eq == std::string_view::npos) {
            bare = level_of(entry, "level");
            continue;
        }
        const std::string_view name = trim(entry.substr(0, eq));
        if (name.empty()) throw ConfigError(fmt::format("{}: \"{}\": expected a logger name before '='", source, entry));
        entries.insert_or_assign(std::string(name), level_of(trim(entry.substr(eq + 1)), fmt::format("levels.{}", name)));
    }
    global = bare;
    named = std::move(entries);
}

}  // namespace detail

Config Config::from_env() {
    if (const char* path = env("FIELDLOG_CONFIG")) return load(path);  // load() applies the rest
    Config config;
    config.apply_env();
    return config;
}

}  // namespace fieldlog

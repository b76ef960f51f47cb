// FIELDLOG_* environment overrides, the last layer of configuration:
//   code defaults < file (Config::load, or FIELDLOG_CONFIG) < FIELDLOG_LEVEL / FIELDLOG_FORMAT.
// Errors name the variable and the key, like the file's: `FIELDLOG_LEVEL: levels.db: expected …`.
// Cold path.
#include <cstdlib>
#include <string>

#include <fmt/format.h>

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

Level env_level(std::string_view text, std::string_view key) {
    if (const auto level = parse_level(text)) return *level;
    throw ConfigError(fmt::format("FIELDLOG_LEVEL: {}: expected trace, debug, info, warn, error, fatal or off, got \"{}\"",
                                  key, text));
}

}  // namespace

Config& Config::apply_env() {
    if (const char* value = env("FIELDLOG_LEVEL")) {
        // "info" or "info,db=debug,http=warn": an entry without '=' sets the global level.
        // Parsed completely before anything is assigned, so a bad entry changes nothing.
        Level global = level;
        std::map<std::string, Level, std::less<>> per_logger = levels;
        std::string_view rest = value;
        while (!rest.empty()) {
            const std::size_t comma = rest.find(',');
            const std::string_view entry = trim(rest.substr(0, comma));
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
            if (entry.empty()) continue;
            const std::size_t eq = entry.find('=');
            if (eq == std::string_view::npos) {
                global = env_level(entry, "level");
                continue;
            }
            const std::string_view name = trim(entry.substr(0, eq));
            if (name.empty()) {
                throw ConfigError(fmt::format("FIELDLOG_LEVEL: \"{}\": expected a logger name before '='", entry));
            }
            per_logger.insert_or_assign(std::string(name), env_level(trim(entry.substr(eq + 1)), fmt::format("levels.{}", name)));
        }
        level = global;
        levels = std::move(per_logger);
    }
    if (const char* value = env("FIELDLOG_FORMAT")) {
        const auto parsed = parse_format(trim(value));
        if (!parsed) {
            throw ConfigError(fmt::format("FIELDLOG_FORMAT: format: expected json, logfmt or console, got \"{}\"", value));
        }
        format = *parsed;  // the default of every sink; a sink with a format of its own keeps it
    }
    return *this;
}

Config Config::from_env() {
    if (const char* path = env("FIELDLOG_CONFIG")) return load(path);  // load() applies the rest
    Config config;
    config.apply_env();
    return config;
}

}  // namespace fieldlog

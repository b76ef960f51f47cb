// FIELDLOG_* environment overrides, applied on top of code defaults or a file:
// code defaults < file (FIELDLOG_CONFIG) < FIELDLOG_LEVEL / FIELDLOG_FORMAT.
#include <cstdlib>
#include <string>

#include "fieldlog/config.hpp"

namespace fieldlog {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

Level parse_env_level(std::string_view text, std::string_view what) {
    if (const auto level = parse_level(trim(text))) return *level;
    throw ConfigError("FIELDLOG_LEVEL: unknown level '" + std::string(trim(text)) + "' for " + std::string(what) +
                      " (expected trace, debug, info, warn, error, fatal or off)");
}

}  // namespace

Config& Config::apply_env() {
    if (const char* env = std::getenv("FIELDLOG_LEVEL"); env != nullptr && *env != '\0') {
        // "info" or "info,db=debug,http=warn": an entry without '=' sets the global level.
        std::string_view rest = env;
        while (!rest.empty()) {
            const std::size_t comma = rest.find(',');
            const std::string_view entry = trim(rest.substr(0, comma));
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
            if (entry.empty()) continue;
            if (const std::size_t eq = entry.find('='); eq == std::string_view::npos) {
                level = parse_env_level(entry, "the global level");
            } else {
                const std::string name(trim(entry.substr(0, eq)));
                levels.insert_or_assign(name, parse_env_level(entry.substr(eq + 1), "logger '" + name + "'"));
            }
        }
    }
    if (const char* env = std::getenv("FIELDLOG_FORMAT"); env != nullptr && *env != '\0') {
        const auto parsed = parse_format(trim(env));
        if (!parsed) {
            throw ConfigError("FIELDLOG_FORMAT: unknown format '" + std::string(env) + "' (expected json, logfmt or console)");
        }
        format = *parsed;  // sinks with a format of their own keep it
    }
    return *this;
}

Config Config::from_env() {
    const char* path = std::getenv("FIELDLOG_CONFIG");
    if (path != nullptr && *path != '\0') return load(path);  // load() applies the rest
    Config config;
    config.apply_env();
    return config;
}

}  // namespace fieldlog

// Config::load / Config::parse: TOML through toml++, every error naming source, line and key.
#include <fstream>
#include <sstream>
#include <string>

#include <toml++/toml.h>

#include "fieldlog/config.hpp"

namespace fieldlog {

Config Config::parse(std::string_view text, std::string_view source) {
    toml::table table;
    try {
        table = toml::parse(text, source);
    } catch (const toml::parse_error& e) {
        throw ConfigError(std::string(source) + ":" + std::to_string(e.source().begin.line) + ": " +
                          std::string(e.description()));
    }
    Config config;
    if (const auto level = table["level"].value<std::string>()) {
        const auto parsed = parse_level(*level);
        if (!parsed) throw ConfigError(std::string(source) + ": level: unknown level '" + *level + "'");
        config.level = *parsed;
    }
    if (const auto format = table["format"].value<std::string>()) {
        const auto parsed = parse_format(*format);
        if (!parsed) throw ConfigError(std::string(source) + ": format: unknown format '" + *format + "'");
        config.format = *parsed;
    }
    return config;
}

Config Config::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path + ": cannot read the configuration file");
    std::stringstream text;
    text << in.rdbuf();
    Config config = parse(text.str(), path);
    config.source = path;
    config.apply_env();
    return config;
}

}  // namespace fieldlog

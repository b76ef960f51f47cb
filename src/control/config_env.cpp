// SPDX-License-Identifier: MIT
// Environment overrides, the last layer of configuration:
//   code defaults < file (Config::load, or FIELDLOG_CONFIG) < FIELDLOG_LEVEL / FIELDLOG_FORMAT,
//   and the OpenTelemetry SDKs' OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME over [resource];
// and FIELDLOG_LEVEL's syntax, which set_levels() takes at run time too.
// Errors name the variable and the key, like the file's: `FIELDLOG_LEVEL: levels.db: expected …`.
// A malformed OTEL_* variable is not an error, as in the SDKs: it is ignored, said on stderr.
// Cold path.
#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/error_reporter.hpp"
#include "control/state.hpp"
#include "fieldlog/config.hpp"

namespace fieldlog {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

/// The next entry of a comma-separated list, trimmed; `rest` moves past it and its comma.
std::string_view take_entry(std::string_view& rest) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    return entry;
}

/// The variable's value, or nullptr when it is unset or empty (both mean "no override").
const char* env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// `text` with each `%XY` made the byte XY; nullopt at a '%' without two hex digits after it.
std::optional<std::string> percent_decoded(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        const int high = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
        const int low = high >= 0 ? hex_digit(text[i + 2]) : -1;
        if (low < 0) return std::nullopt;
        out += static_cast<char>(high * 16 + low);
        i += 2;
    }
    return out;
}

using Attributes = std::vector<std::pair<std::string, std::string>>;

/// OTEL_RESOURCE_ATTRIBUTES' `key1=value1,key2=value2`: key and value trimmed, the value
/// percent-decoded, an entry empty after trimming skipped. An entry without '=', with an empty
/// key or a bad escape makes it nullopt, and `why` says which.
std::optional<Attributes> parse_resource_attributes(std::string_view text, std::string& why) {
    Attributes attributes;
    std::string_view rest = text;
    while (!rest.empty()) {
        const std::string_view entry = take_entry(rest);
        if (entry.empty()) continue;
        const std::size_t eq = entry.find('=');
        if (eq == std::string_view::npos) {
            why = fmt::format("\"{}\" is not key=value", entry);
            return std::nullopt;
        }
        const std::string_view key = trim(entry.substr(0, eq));
        if (key.empty()) {
            why = fmt::format("\"{}\" has no key before '='", entry);
            return std::nullopt;
        }
        std::optional<std::string> value = percent_decoded(trim(entry.substr(eq + 1)));
        if (!value) {
            why = fmt::format("\"{}\" has a '%' not followed by two hex digits (a ',' or '=' in a value is %2C or %3D)",
                              entry);
            return std::nullopt;
        }
        attributes.emplace_back(std::string(key), std::move(*value));
    }
    return attributes;
}

/// Sets the attribute `key` in place, or adds it at the end.
void set_resource(std::vector<ResourceAttribute>& resource, std::string key, std::string value) {
    for (ResourceAttribute& attribute : resource) {
        if (attribute.key == key) {
            attribute.value = std::move(value);
            return;
        }
    }
    resource.push_back({std::move(key), std::move(value)});
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
    if (const char* value = env("OTEL_RESOURCE_ATTRIBUTES")) {
        std::string why;
        if (std::optional<Attributes> attributes = parse_resource_attributes(value, why)) {
            for (auto& [key, attribute_value] : *attributes) set_resource(resource, std::move(key), std::move(attribute_value));
        } else {
            detail::report_unlimited("OTEL_RESOURCE_ATTRIBUTES", why + "; the variable is ignored");
        }
    }
    // After OTEL_RESOURCE_ATTRIBUTES, which it wins over, as the SDKs have it.
    if (const char* value = env("OTEL_SERVICE_NAME")) set_resource(resource, "service.name", value);
    environment_applied = true;
    return *this;
}

namespace detail {

void report_unapplied_environment(const Config& config) noexcept {
    static std::atomic<bool> reported{false};
    if (config.environment_applied || reported.load(std::memory_order_relaxed)) return;
    try {
        std::string names;
        for (const char* name : {"FIELDLOG_CONFIG", "FIELDLOG_LEVEL", "FIELDLOG_FORMAT"}) {
            if (env(name) == nullptr) continue;
            if (!names.empty()) names += ", ";
            names += name;
        }
        if (names.empty() || reported.exchange(true)) return;
        report_unlimited(names, "set, but not applied: the program configured fieldlog in code without reading the "
                                "environment (Config::from_env(), Config::load() and Config::apply_env() read it)");
    } catch (...) {  // no memory for the names: nothing said
    }
}

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
        const std::string_view entry = take_entry(rest);
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

// SPDX-License-Identifier: MIT
// Levels: the first thing a record meets. The level check compares a record's level with the
// logger's level (Logger::enabled); everything in this header is constexpr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fieldlog {

/// Severity of a record, in increasing order. `off` as a logger's level disables a logger.
enum class Level : std::uint8_t { trace, debug, info, warn, error, fatal, off };

inline constexpr int level_count = 7;

/// Lower-case name as written in records and config ("trace" … "fatal", "off").
constexpr std::string_view to_string(Level level) noexcept {
    constexpr std::string_view names[] = {"trace", "debug", "info", "warn", "error", "fatal", "off"};
    const auto index = static_cast<std::uint8_t>(level);
    return index < level_count ? names[index] : std::string_view{"invalid"};
}

/// Parses a level name in any case ("INFO", "Debug"; "warning" accepted for "warn"); nullopt
/// when unknown.
constexpr std::optional<Level> parse_level(std::string_view name) noexcept {
    const auto same = [](std::string_view text, std::string_view lower) {
        if (text.size() != lower.size()) return false;
        for (std::size_t i = 0; i < text.size(); ++i) {
            const char c = text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
            if (c != lower[i]) return false;
        }
        return true;
    };
    for (int i = 0; i < level_count; ++i) {
        if (same(name, to_string(static_cast<Level>(i)))) return static_cast<Level>(i);
    }
    if (same(name, "warning")) return Level::warn;
    return std::nullopt;
}

}  // namespace fieldlog

// SPDX-License-Identifier: MIT
// Typed readers of one configuration value (setting_values.hpp), and the units they read:
// sizes ("64KiB") and durations ("1m30s"). Cold path.
#include "control/setting_values.hpp"

#include <array>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "fieldlog/config.hpp"

namespace fieldlog::detail {
namespace {

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

/// The name of a unit of time, for "a duration in whole …".
std::string_view unit_name(std::chrono::nanoseconds unit) {
    if (unit == std::chrono::hours{1}) return "hours";
    if (unit == std::chrono::minutes{1}) return "minutes";
    if (unit == std::chrono::seconds{1}) return "seconds";
    if (unit == std::chrono::milliseconds{1}) return "milliseconds";
    if (unit == std::chrono::microseconds{1}) return "microseconds";
    return "nanoseconds";
}

}  // namespace

void fail_at(const SettingPlace& place, std::string_view message) {
    throw ConfigError(fmt::format("{}:{}: {}: {}", place.source, place.line, place.key, message));
}

void expected_at(const SettingPlace& place, const SettingValue& value, std::string_view what) {
    fail_at(place, fmt::format("expected {}, got {}", what, value.shown));
}

std::string_view text_value(const SettingValue& value, const SettingPlace& place, std::string_view what) {
    if (value.kind != SettingValue::Kind::text) expected_at(place, value, what);
    return value.text;
}

bool boolean_value(const SettingValue& value, const SettingPlace& place) {
    if (value.kind != SettingValue::Kind::boolean) expected_at(place, value, "true or false");
    return value.boolean;
}

std::int64_t integer_value(const SettingValue& value, const SettingPlace& place, std::int64_t min, std::int64_t max,
                           std::string_view what) {
    if (value.kind != SettingValue::Kind::integer || value.integer < min || value.integer > max) {
        expected_at(place, value,
                    max == std::numeric_limits<std::int64_t>::max() ? fmt::format("{}, {} or more", what, min)
                                                                    : fmt::format("{} from {} to {}", what, min, max));
    }
    return value.integer;
}

std::uint64_t size_value(const SettingValue& value, const SettingPlace& place, std::string_view example, std::uint64_t min,
                         std::uint64_t max) {
    std::optional<std::uint64_t> bytes;
    if (value.kind == SettingValue::Kind::text) bytes = parse_size(value.text);
    if (value.kind == SettingValue::Kind::integer && value.integer >= 0) bytes = static_cast<std::uint64_t>(value.integer);
    if (!bytes) expected_at(place, value, fmt::format("a size like \"{}\"", example));
    if (*bytes < min || *bytes > max) {
        expected_at(place, value,
                    max == std::numeric_limits<std::uint64_t>::max() ? fmt::format("a size of at least {} byte{}", min, min == 1 ? "" : "s")
                                                                     : fmt::format("a size from {} to {} bytes", min, max));
    }
    return *bytes;
}

std::chrono::nanoseconds duration_value(const SettingValue& value, const SettingPlace& place, std::string_view example,
                                        std::chrono::nanoseconds unit) {
    std::optional<std::chrono::nanoseconds> parsed;
    if (value.kind == SettingValue::Kind::text) parsed = parse_duration(value.text);
    if (!parsed) expected_at(place, value, fmt::format("a duration like \"{}\"", example));
    if (*parsed % unit != std::chrono::nanoseconds{0}) {
        expected_at(place, value, fmt::format("a duration in whole {} like \"{}\"", unit_name(unit), example));
    }
    return *parsed;
}

std::string list_names(std::span<const std::string_view> names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
        out += names[i];
    }
    return out;
}

Level level_value(const SettingValue& value, const SettingPlace& place) {
    if (value.kind == SettingValue::Kind::text && value.text == "warning") return Level::warn;
    static constexpr std::array<std::string_view, 7> names = {"trace", "debug", "info", "warn", "error", "fatal", "off"};
    static constexpr std::array<Level, 7> levels = {Level::trace, Level::debug, Level::info, Level::warn,
                                                    Level::error, Level::fatal, Level::off};
    return levels[choice_value(value, place, names)];
}

std::size_t choice_value(const SettingValue& value, const SettingPlace& place, std::span<const std::string_view> names) {
    if (value.kind == SettingValue::Kind::text) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (names[i] == value.text) return i;
        }
    }
    expected_at(place, value, list_names(names));
}

}  // namespace fieldlog::detail

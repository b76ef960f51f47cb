// SPDX-License-Identifier: MIT
// SinkSettings: a sink's table, read key by key with the reader's typed readers, so a sink
// type's errors read like every other configuration error. Cold path.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "control/setting_values.hpp"
#include "control/sink_types.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/sink_registry.hpp"

namespace fieldlog {

SinkSettings::SinkSettings(std::string source, std::string path, std::uint32_t line, std::vector<Setting> settings,
                           std::vector<std::string> keys)
    : source_(std::move(source)),
      path_(std::move(path)),
      line_(line),
      settings_(std::move(settings)),
      keys_(std::move(keys)),
      read_(settings_.size(), false),
      defined_at_(fmt::format("{}:{}: {}", source_, line_, path_)) {}

const Setting* SinkSettings::find(std::string_view key) const {
    const bool declared = std::find(keys_.begin(), keys_.end(), key) != keys_.end() ||
                          std::find(std::begin(detail::every_sink_key), std::end(detail::every_sink_key), key) != std::end(detail::every_sink_key);
    if (!declared) {
        throw std::logic_error(fmt::format("{}: the sink type reads the key \"{}\" without declaring it", path_, key));
    }
    for (std::size_t i = 0; i < settings_.size(); ++i) {
        if (settings_[i].key == key) {
            read_[i] = true;
            return &settings_[i];
        }
    }
    return nullptr;
}

std::string SinkSettings::at(std::string_view key) const { return fmt::format("{}.{}", path_, key); }

bool SinkSettings::has(std::string_view key) const { return find(key) != nullptr; }

std::string SinkSettings::text(std::string_view key, std::string_view what, std::string fallback) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return fallback;
    return std::string(detail::text_value(setting->value, {source_, setting->value.line, at(key)}, what));
}

std::vector<std::string> SinkSettings::texts(std::string_view key, std::string_view what,
                                             std::vector<std::string> fallback) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return fallback;
    const std::string key_at = at(key);
    if (setting->value.kind != SettingValue::Kind::array) {
        detail::expected_at({source_, setting->value.line, key_at}, setting->value, fmt::format("an array of {}", what));
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < setting->value.items.size(); ++i) {
        const SettingValue& item = setting->value.items[i];
        const std::string item_at = fmt::format("{}[{}]", key_at, i);
        out.emplace_back(detail::text_value(item, {source_, item.line, item_at}, what));
    }
    return out;
}

bool SinkSettings::boolean(std::string_view key, bool fallback) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return fallback;
    return detail::boolean_value(setting->value, {source_, setting->value.line, at(key)});
}

std::int64_t SinkSettings::integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max,
                                   std::string_view what) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return fallback;
    return detail::integer_value(setting->value, {source_, setting->value.line, at(key)}, min, max, what);
}

std::uint64_t SinkSettings::size(std::string_view key, std::uint64_t fallback, std::string_view example, std::uint64_t min,
                                 std::uint64_t max) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return fallback;
    return detail::size_value(setting->value, {source_, setting->value.line, at(key)}, example, min, max);
}

std::chrono::nanoseconds SinkSettings::duration_in(std::string_view key, std::chrono::nanoseconds fallback,
                                                   std::string_view example, std::chrono::nanoseconds unit) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return fallback;
    return detail::duration_value(setting->value, {source_, setting->value.line, at(key)}, example, unit);
}

Level SinkSettings::level(std::string_view key, Level fallback) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return fallback;
    return detail::level_value(setting->value, {source_, setting->value.line, at(key)});
}

std::size_t SinkSettings::choice_index(std::string_view key, std::span<const std::string_view> names) const {
    const Setting* setting = find(key);
    if (setting == nullptr) return names.size();
    return detail::choice_value(setting->value, {source_, setting->value.line, at(key)}, names);
}

void SinkSettings::identify_by(std::string_view key) {
    if (const Setting* setting = find(key)) defined_at_ = fmt::format("{}:{}: {}", source_, setting->value.line, at(key));
}

void SinkSettings::missing(std::string_view key, std::string_view why) const {
    detail::fail_at({source_, line_, path_}, fmt::format("missing key \"{}\" ({})", key, why));
}

void SinkSettings::expected(std::string_view key, std::string_view what) const {
    const Setting* setting = find(key);
    if (setting == nullptr) missing(key, what);
    detail::expected_at({source_, setting->value.line, at(key)}, setting->value, what);
}

void SinkSettings::fail(std::string_view key, std::string_view message) const {
    const Setting* setting = find(key);
    detail::fail_at({source_, setting != nullptr ? setting->value.line : line_, at(key)}, message);
}

void SinkSettings::fail(std::string_view key, std::size_t item, std::string_view message) const {
    const Setting* setting = find(key);
    const bool listed = setting != nullptr && item < setting->value.items.size();
    detail::fail_at({source_, listed ? setting->value.items[item].line : line_, fmt::format("{}[{}]", at(key), item)},
                    message);
}

void SinkSettings::check_every_key_read() const {
    for (std::size_t i = 0; i < settings_.size(); ++i) {
        const bool own = std::find(keys_.begin(), keys_.end(), settings_[i].key) != keys_.end();
        if (own && !read_[i]) {
            throw std::logic_error(
                fmt::format("{}: the sink type declares the key \"{}\" but never reads it", path_, settings_[i].key));
        }
    }
}

}  // namespace fieldlog

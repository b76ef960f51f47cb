// SPDX-License-Identifier: MIT
// The registry of named loggers, their levels (configured, and set at run time) and the global
// state. Cold path: get() takes a lock and may allocate; the handles it returns are then used
// lock-free.
#include <new>
#include <string>

#include "control/instance.hpp"
#include "control/state.hpp"

namespace fieldlog {
namespace detail {

State& state() noexcept {
    static State* const instance = [] {
        announce_instance();
        return new State();  // never destroyed: see state.hpp
    }();
    return *instance;
}

Level level_for(const State& s, std::string_view name) noexcept {
    Level level = s.runtime_level.value_or(s.config.level);
    std::size_t best = 0;
    // The longest name that is `name` or a dotted prefix of it; at equal length, run time wins.
    const auto consider = [&](const std::map<std::string, Level, std::less<>>& levels, bool wins_ties) {
        for (const auto& [prefix, prefix_level] : levels) {
            const bool matches = name == prefix ||
                                 (name.size() > prefix.size() && name.starts_with(prefix) && name[prefix.size()] == '.');
            if (matches && (prefix.size() + 1 > best || (wins_ties && prefix.size() + 1 == best))) {
                best = prefix.size() + 1;
                level = prefix_level;
            }
        }
    };
    consider(s.config.levels, false);
    consider(s.runtime_levels, true);
    return level;
}

void refresh_levels(State& s) noexcept {
    const std::lock_guard lock(s.loggers_mutex);
    for (const auto& [name, core] : s.loggers) core->level.store(level_for(s, name), std::memory_order_relaxed);
}

LoggerCore& logger_core(State& s, std::string_view name) {
    const std::lock_guard lock(s.loggers_mutex);  // lock order: configure, then loggers
    auto it = s.loggers.find(name);
    if (it == s.loggers.end()) {
        auto core = std::make_unique<LoggerCore>(name);
        core->level.store(level_for(s, name), std::memory_order_relaxed);
        it = s.loggers.emplace(std::string(name), std::move(core)).first;
    }
    return *it->second;
}

}  // namespace detail

Logger get(std::string_view name) {
    detail::ensure_configured();
    detail::State& s = detail::state();
    const std::lock_guard config_lock(s.configure_mutex);
    return Logger(&detail::logger_core(s, name), nullptr);
}

Logger::Logger() : Logger(get("")) {}

void Logger::set_level(Level level) const {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    if (name().empty()) {
        s.runtime_level = level;
    } else {
        s.runtime_levels.insert_or_assign(std::string(name()), level);
    }
    detail::refresh_levels(s);
}

void Logger::reset_level() const {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    if (name().empty()) {
        s.runtime_level.reset();
    } else if (const auto it = s.runtime_levels.find(name()); it != s.runtime_levels.end()) {
        s.runtime_levels.erase(it);
    }
    detail::refresh_levels(s);
}

std::string levels() {
    detail::ensure_configured();
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    std::map<std::string, Level, std::less<>> named = s.config.levels;
    for (const auto& [name, level] : s.runtime_levels) named.insert_or_assign(name, level);
    std::string spec(to_string(s.runtime_level.value_or(s.config.level)));
    for (const auto& [name, level] : named) {
        spec += ',';
        spec += name;
        spec += '=';
        spec += to_string(level);
    }
    return spec;
}

void set_levels(std::string_view spec) {
    std::optional<Level> global;
    std::map<std::string, Level, std::less<>> named;
    detail::parse_level_spec(spec, "set_levels", global, named);
    detail::ensure_configured();
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    s.runtime_level = global;
    s.runtime_levels = std::move(named);
    detail::refresh_levels(s);
}

}  // namespace fieldlog

// The registry of named loggers and the global state. Cold path: get() takes a lock and may
// allocate; the handles it returns are then used lock-free.
#include <new>

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

Level level_for(const Config& config, std::string_view name) noexcept {
    // The longest configured name that is `name` itself or a dotted prefix of it.
    Level level = config.level;
    std::size_t best = 0;
    for (const auto& [prefix, prefix_level] : config.levels) {
        const bool matches = name == prefix ||
                             (name.size() > prefix.size() && name.starts_with(prefix) && name[prefix.size()] == '.');
        if (matches && prefix.size() + 1 > best) {
            best = prefix.size() + 1;
            level = prefix_level;
        }
    }
    return level;
}

}  // namespace detail

Logger get(std::string_view name) {
    detail::ensure_configured();
    detail::State& s = detail::state();
    const std::lock_guard config_lock(s.configure_mutex);  // lock order: configure, then loggers
    const std::lock_guard lock(s.loggers_mutex);
    auto it = s.loggers.find(name);
    if (it == s.loggers.end()) {
        auto core = std::make_unique<detail::LoggerCore>();
        core->name = detail::LoggerName(name);
        core->threshold.store(detail::level_for(s.config, name), std::memory_order_relaxed);
        it = s.loggers.emplace(std::string(name), std::move(core)).first;
    }
    return Logger(it->second.get(), nullptr);
}

Logger::Logger() : Logger(get("")) {}

void Logger::set_level(Level level) const noexcept {
    core_->pinned.store(true, std::memory_order_relaxed);
    core_->threshold.store(level, std::memory_order_relaxed);
}

}  // namespace fieldlog

// The process-wide state behind the public functions: the registry of named loggers and the
// configuration in force. Cold path only (the published pipeline, which the record path reads,
// is g_current_pipeline in record/thread_context.hpp; the registry of thread contexts is
// record/thread_registry.hpp).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "dispatch/pipeline.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/metrics.hpp"
#include "record/thread_context.hpp"

namespace fieldlog::detail {

struct State {
    std::atomic<bool> configured{false};
    std::atomic<bool> shut_down{false};

    std::mutex configure_mutex;  ///< serialises configure(), flush(), shutdown()
    Config config;               ///< the configuration in force (guarded by configure_mutex)
    std::string config_path;     ///< file for reload(), if any

    std::mutex loggers_mutex;
    std::map<std::string, std::unique_ptr<LoggerCore>, std::less<>> loggers;
};

/// The one State; never destroyed, so logging during static destruction stays safe.
State& state() noexcept;

/// Makes the default configuration (environment, else stdout JSON at info) if none was made.
void ensure_configured();

/// The threshold configuration `config` gives a logger called `name`.
Level level_for(const Config& config, std::string_view name) noexcept;

}  // namespace fieldlog::detail

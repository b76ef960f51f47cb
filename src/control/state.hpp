// SPDX-License-Identifier: MIT
// The process-wide state behind the public functions: the registry of named loggers and the
// configuration in force. Cold path only (the published pipeline, which the record path reads,
// is g_current_pipeline in record/thread_context.hpp; the registry of thread contexts is
// record/thread_registry.hpp).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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

    /// Levels set at run time (Logger::set_level, set_levels), over the configuration's until
    /// reset; guarded by configure_mutex. The root logger's is the global level.
    std::optional<Level> runtime_level;
    std::map<std::string, Level, std::less<>> runtime_levels;

    std::mutex loggers_mutex;
    std::map<std::string, std::unique_ptr<LoggerCore>, std::less<>> loggers;
};

/// The one State; never destroyed, so logging during static destruction stays safe.
State& state() noexcept;

/// What configure() does unless Config::crash_handlers is off: takes the crash signals (chained
/// to the actions from before) and SIGTERM/SIGINT where they still have their default action,
/// so that a crash or a kill writes every accepted record. Once per signal; cold.
void install_crash_handlers();

/// Says once on stderr which FIELDLOG_* variables are set that `config` did not read (it was
/// made in code, without apply_env()). Cold.
void report_unapplied_environment(const Config& config) noexcept;

/// Makes the default configuration (environment, else stdout JSON at info) if none was made.
void ensure_configured();

/// The level of a logger called `name` (caller holds configure_mutex): that of the
/// longest name that is `name` or a dotted prefix of it and has one — set at run time before
/// configured — else the global level (run time before configured).
Level level_for(const State& s, std::string_view name) noexcept;
/// Gives every registered logger the level level_for() says (caller holds configure_mutex).
void refresh_levels(State& s) noexcept;
/// The logger called `name`, registered by its first call (caller holds configure_mutex).
/// Throws std::bad_alloc.
LoggerCore& logger_core(State& s, std::string_view name);

/// Parses FIELDLOG_LEVEL's syntax ("info,db=debug"): a bare level into `global`, `name=level`
/// entries into `named`. Errors start with `source` and name the entry's key (`level` or
/// `levels.<name>`); on error nothing was changed.
void parse_level_spec(std::string_view spec, std::string_view source, std::optional<Level>& global,
                      std::map<std::string, Level, std::less<>>& named);

}  // namespace fieldlog::detail

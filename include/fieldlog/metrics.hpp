// SPDX-License-Identifier: MIT
// Metrics: the logger watching itself. Counters are kept per thread and per sink (no shared
// cache line on the record path) and summed when read. Cold path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fieldlog/export.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog {

struct FIELDLOG_API SinkMetrics {
    std::string name;    ///< SinkConfig::name, or the one made for it (`file:logs/app.log`)
    std::string kind;    ///< Sink::info().kind: "stdout", "stderr", "file", "udp", "null", "memory", "callback", "observer", "custom"
    std::string target;  ///< path or address; empty for the others
    SinkCounters counters;  ///< since this sink joined the running configuration
};

struct FIELDLOG_API LoggerMetrics {
    std::string name;
    /// Calls that rate limits kept back: the per-site macros (rate_limit.hpp) and the
    /// logger's sampler (Config::sampling). Since the logger was first used.
    std::uint64_t suppressed = 0;
};

/// One logging thread's async ring (AsyncConfig::queue_bytes, per thread).
struct FIELDLOG_API AsyncRingMetrics {
    std::uint64_t thread_id = 0;      ///< kernel thread id of the thread that writes it
    std::uint64_t high_water = 0;     ///< most bytes ever waiting in it, since this thread took it
    std::uint64_t blocked_nanos = 0;  ///< time this thread waited for space in it (policy `block`)
};

struct FIELDLOG_API AsyncMetrics {
    std::uint64_t accepted_records = 0;  ///< written by the writer thread
    std::uint64_t accepted_bytes = 0;    ///< the bytes of their lines (once per format in use)
    std::uint64_t dropped_records = 0;   ///< overflow with policy `drop`
    std::uint64_t queue_high_water = 0;  ///< most bytes ever waiting in one ring of the running writer
    std::uint64_t queue_capacity = 0;    ///< of each ring of the running writer; 0 in sync mode
    std::uint64_t blocked_nanos = 0;     ///< time callers waited for space (policy `block`)
    /// The running writer's rings in use: a live thread's, or an exited thread's not yet drained.
    std::vector<AsyncRingMetrics> rings;
    std::uint64_t spare_rings = 0;       ///< rings kept for new threads: drained ones, and one made ready (at most 4)
};

struct FIELDLOG_API Metrics {
    std::array<std::uint64_t, level_count> records_by_level{};  ///< records that passed the level check
    std::uint64_t encoded_bytes = 0;     ///< bytes encoded (once per format in use)
    std::uint64_t oversized_records = 0; ///< records that outgrew the inline buffer
    /// Context fields not attached: a Scope opened from inside a logging call, or a value (a
    /// user type) that threw while being copied into its context node.
    std::uint64_t context_fields_dropped = 0;
    /// Free memory the per-thread context pools keep for reuse (bounded per thread: context.md).
    std::uint64_t context_pool_bytes = 0;
    /// Context memory blocks (with(), Scope, captures) taken from a pool's free list, and from
    /// the heap: in steady state only hits grow.
    std::uint64_t context_pool_hits = 0;
    std::uint64_t context_pool_misses = 0;
    std::uint64_t nested_dropped = 0;    ///< records logged from inside a logging call (dropped)
    std::uint64_t dropped_after_shutdown = 0;  ///< records logged after shutdown() (dropped)
    /// Records below their logger's level that a scope's backtrace kept (scope.hpp), and those
    /// of them written because a record reached the trigger; the rest were discarded.
    std::uint64_t backtrace_kept = 0;
    std::uint64_t backtrace_written = 0;
    AsyncMetrics async{};
    std::vector<SinkMetrics> sinks;      ///< the running sinks
    std::vector<LoggerMetrics> loggers;  ///< the loggers that rate limits kept records of, by name

    [[nodiscard]] std::uint64_t records() const noexcept {
        std::uint64_t total = 0;
        for (std::uint64_t n : records_by_level) total += n;
        return total;
    }
};

/// A snapshot of every counter.
FIELDLOG_API Metrics metrics();
/// The same, in the Prometheus text exposition format 0.0.4 (metric names start `fieldlog_`).
FIELDLOG_API std::string metrics_text();

}  // namespace fieldlog

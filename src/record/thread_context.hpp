// SPDX-License-Identifier: MIT
// Everything one thread owns on the record path: the record buffer, a scratch buffer for fmt,
// its clock, its hazard slot (which pipeline it is using right now), its counters and its
// context pool with the scopes open on it. Registered in the thread registry
// (record/thread_registry.hpp) so configure() can wait for readers and metrics() can sum
// counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "base/buffer.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "record/record_clock.hpp"
#include "record/context_pool.hpp"
#include "record/parts_view.hpp"

namespace fieldlog::detail {

struct Pipeline;

/// Counters written only by the owning thread (plain load+store, no lock prefix) and read by
/// metrics() from any thread.
struct ThreadCounters {
    std::array<std::atomic<std::uint64_t>, level_count> records{};
    std::atomic<std::uint64_t> encoded_bytes{0};
    std::atomic<std::uint64_t> oversized{0};
    std::atomic<std::uint64_t> context_fields_dropped{0};
    std::atomic<std::uint64_t> nested_dropped{0};
    std::atomic<std::uint64_t> after_shutdown{0};
    std::atomic<std::uint64_t> backtrace_kept{0};
    std::atomic<std::uint64_t> backtrace_written{0};

    static void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) noexcept {
        counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
};

struct ThreadContext {
    ThreadContext();
    ~ThreadContext();
    ThreadContext(const ThreadContext&) = delete;
    ThreadContext& operator=(const ThreadContext&) = delete;

    Buffer record;
    Buffer scratch;
    /// The pipeline this thread is reading; configure() waits until no slot names the old one.
    std::atomic<const Pipeline*> hazard{nullptr};
    /// True while this thread is inside a logging call (a nested call is dropped and counted).
    bool busy = false;
    ThreadCounters counters;
    /// The time of this thread's records when the configuration names no clock.
    RecordClock clock;
    /// This thread's context pool and open scopes; outlives the thread (context_pool.hpp).
    ContextHome* home;
    /// A rate-limited record's fields after its "suppressed" count (logger.cpp); reused, so
    /// it allocates only when a record has more fields than any before it on this thread.
    std::vector<Field> counted_fields;
    std::uint64_t counted_suppressed = 0;  ///< the count counted_fields begins with
    /// Views of parts of this thread's records, for the channels of parts (parts_view.hpp);
    /// reused like counted_fields, and never touched without such a channel.
    PartsViewStorage parts_views;
};

/// This thread's context once made; null before its first use and once it is torn down.
/// Plain (constinit) so the record path reads it without a TLS wrapper call, and initial-exec
/// so that it reads it without a call to __tls_get_addr in a shared library (the library's TLS
/// is static already: base/thread_id.hpp).
[[gnu::tls_model("initial-exec")]] extern constinit thread_local ThreadContext* t_context;

/// Makes this thread's context on first use; nullptr once the thread is tearing down its
/// thread-locals.
ThreadContext* make_thread_context() noexcept;

/// This thread's context; nullptr once the thread is tearing down its thread-locals.
inline ThreadContext* this_thread_context() noexcept {
    ThreadContext* context = t_context;
    return context != nullptr ? context : make_thread_context();
}

/// The pipeline records go through: published by configure(), null before the first and after
/// shutdown(). Constant-initialised, so the record path reads it without a guard.
extern constinit std::atomic<Pipeline*> g_current_pipeline;

/// True when configure() pays for the readers' fence with a process barrier (thread_context.cpp);
/// false (the seq_cst store) until it is known.
extern const bool g_light_readers;

/// Publishes this thread's use of the current pipeline (hazard pointer) and returns it.
inline const Pipeline* acquire_pipeline(ThreadContext& context) noexcept {
    const Pipeline* pipeline = g_current_pipeline.load(std::memory_order_acquire);
    for (;;) {
        // Announce, then confirm it is still current: a writer that swapped after our
        // confirmation is guaranteed to see the announcement and wait for us (by its
        // process barrier, or by the seq_cst store).
        if (g_light_readers) {
            context.hazard.store(pipeline, std::memory_order_release);
            std::atomic_signal_fence(std::memory_order_seq_cst);
        } else {
            context.hazard.store(pipeline, std::memory_order_seq_cst);
        }
        const Pipeline* again = g_current_pipeline.load(std::memory_order_seq_cst);
        if (again == pipeline) return pipeline;
        pipeline = again;
    }
}
inline void release_pipeline(ThreadContext& context) noexcept {
    context.hazard.store(nullptr, std::memory_order_release);
}

/// Waits until no registered thread reads `pipeline` any more (configure() calls it after the
/// swap, before freeing the old pipeline).
void wait_for_readers(const Pipeline* pipeline);

}  // namespace fieldlog::detail

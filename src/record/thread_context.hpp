// Everything one thread owns on the record path: the record buffer, a scratch buffer for fmt,
// its clock, its hazard slot (which pipeline it is using right now) and its counters.
// Registered with the global state so configure() can wait for readers and metrics() can sum
// counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "fieldlog/level.hpp"
#include "record/buffer.hpp"
#include "record/record_clock.hpp"
#include "record/scope_stack.hpp"

namespace fieldlog::detail {

struct Pipeline;

/// Counters written only by the owning thread (plain load+store, no lock prefix) and read by
/// metrics() from any thread.
struct ThreadCounters {
    std::array<std::atomic<std::uint64_t>, level_count> records{};
    std::atomic<std::uint64_t> encoded_bytes{0};
    std::atomic<std::uint64_t> oversized{0};
    std::atomic<std::uint64_t> truncated_scopes{0};
    std::atomic<std::uint64_t> nested_dropped{0};

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
    /// BoundFields::id of the bound fields `record` holds between records (0: none; see
    /// record/resident_bound.hpp).
    std::uint64_t resident_bound = 0;
    Buffer scratch;
    /// The pipeline this thread is reading; configure() waits until no slot names the old one.
    std::atomic<const Pipeline*> hazard{nullptr};
    /// True while this thread is inside a logging call (a nested call is dropped and counted).
    bool busy = false;
    ThreadCounters counters;
    /// The time of this thread's records when the configuration names no clock.
    RecordClock clock;
    /// The fields of the fieldlog::Scope objects open on this thread, encoded.
    ScopeStack scopes;
};

/// This thread's context; nullptr once the thread is tearing down its thread-locals.
ThreadContext* this_thread_context() noexcept;

/// Publishes this thread's use of the current pipeline (hazard pointer) and returns it.
const Pipeline* acquire_pipeline(ThreadContext& context) noexcept;
inline void release_pipeline(ThreadContext& context) noexcept {
    context.hazard.store(nullptr, std::memory_order_release);
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The async writer's set of rings, one per thread that logs through it. A thread's first async
// record takes a ring (a spare, or a new one of `capacity` bytes) and keeps it while it lives.
// When the thread exits (or moves to a newer writer) the writer drains the ring and the set
// keeps it as a spare for the next new thread, at most kSpareRings of them; beyond that it is
// freed. One spare is kept ready at all times, every page of it written before any thread has
// it (SpscRing::touch): made with the set, and again by the writer's look once a thread took it.
// A ring a thread makes itself, when none was ready, has its pages faulted in by the writer's
// next look. Joining takes the set's lock, which the writer only holds to look at the list,
// never while writing to sinks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "dispatch/spsc_ring.hpp"
#include "fieldlog/metrics.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// One thread's ring and what the writer and the crash path keep beside it.
struct AsyncRing {
    AsyncRing(std::size_t capacity, std::size_t sinks)
        : queue(capacity), handed_upto(std::make_unique<std::atomic<std::uint64_t>[]>(sinks)) {}

    SpscRing queue;
    /// Per sink: the position up to which the writer has handed it this ring's records. Written
    /// under the sink's mutex, so the crash path, holding it, reads where to go on from.
    std::unique_ptr<std::atomic<std::uint64_t>[]> handed_upto;
    /// 2 while a thread writes the ring, 1 once only the writer holds it (a spare, or its
    /// thread let go), 0: freed by whichever let go last.
    std::atomic<int> owners{1};
    std::atomic<int> thread_id{0};
    std::atomic<std::uint64_t> high_water{0};
    std::atomic<std::uint64_t> blocked_nanos{0};
    // The writer's (its thread only).
    bool faulted_in = false;      // its pages made ready (SpscRing::fault_in)
    std::uint64_t read = 0;       // everything below is handed out and released
    std::uint64_t sweep_end = 0;  // published end at the sweep's look
    std::uint64_t batch_end = 0;  // how far the current batch took
    // The sort keys (order_key_of) of the records just below `read` and `batch_end`. They never
    // go down, across the threads that write the ring in turn too.
    std::int64_t read_key = INT64_MIN;
    std::int64_t batch_end_key = INT64_MIN;
    // The crash path's walk (one final path ever runs).
    mutable std::uint64_t crash_read = 0;
    mutable std::int64_t crash_key = INT64_MIN;

    /// Whether its thread let go and the writer has taken everything it published.
    [[nodiscard]] bool drained_and_let_go() const noexcept {
        return owners.load(std::memory_order_acquire) == 1 && queue.published() == read;
    }
};

/// Lets go of a ring; the last of its owners frees it.
inline void let_go(AsyncRing* ring) noexcept {
    if (ring->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ring;
}

class RingSet {
public:
    /// Rings of `capacity` bytes (a power of two), each with a position for each of `sinks`.
    RingSet(std::size_t capacity, std::size_t sinks);
    /// Lets go of every ring; a thread still holding one frees it when it lets go.
    ~RingSet();
    RingSet(const RingSet&) = delete;
    RingSet& operator=(const RingSet&) = delete;

    static constexpr std::size_t kSpareRings = 4;

    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

    /// A ring for the calling thread, in the set from now on; null when there is no memory for
    /// one. Any thread.
    AsyncRing* take() noexcept;

    /// The writer's look (its thread only): when a ring joined since the last look, or one of
    /// `rings` is drained and let go, drained rings leave the set (spare, or freed) and `rings`
    /// becomes the set, a ring new to the writer with its pages faulted in, and a spare is made
    /// ready if none is left; otherwise nothing changes.
    void look(std::vector<AsyncRing*>& rings) noexcept;
    /// Whether a ring joined since the writer's last look.
    [[nodiscard]] bool joined_since_look() const noexcept { return changed_.load(std::memory_order_acquire) != seen_; }

    /// Appends one entry per ring in use to `metrics.rings` and counts the spares.
    void add_metrics(AsyncMetrics& metrics) const;

    /// Guards the list: the crash path takes it with try_lock, fork() across the fork.
    [[nodiscard]] SinkMutex& mutex() const noexcept { return mutex_; }
    /// The rings in use. The caller holds mutex(), or is the only thread left.
    [[nodiscard]] std::span<AsyncRing* const> in_use() const noexcept { return rings_; }
    /// In a forked child, holding mutex(): empties every ring (the parent's records are the
    /// parent's) and lets go of each on behalf of its thread, which did not survive the fork;
    /// all but `forking_thread`'s (null: it has none).
    void empty_in_child(const AsyncRing* forking_thread) noexcept;

private:
    /// Adds a spare with every page written (the set has none; the writer's thread, or the
    /// set's maker before the writer starts).
    void make_spare_ready() noexcept;

    const std::size_t capacity_;
    const std::size_t sinks_;
    mutable SinkMutex mutex_;
    std::vector<AsyncRing*> rings_;   ///< in use: a live thread's, or an exited one's not yet drained
    std::vector<AsyncRing*> spares_;  ///< reserved up front: never allocates; one ready at least
    std::atomic<std::uint32_t> changed_{0};  ///< bumped when a ring joins rings_
    std::uint32_t seen_ = 0;                 ///< changed_ at the writer's last look
};

}  // namespace fieldlog::detail

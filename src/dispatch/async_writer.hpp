// SPDX-License-Identifier: MIT
// The async half of the dispatcher: each logging thread copies its record (the owned copy) into
// a bounded SPSC ring of its own (spsc_ring.hpp); one writer thread drains every ring in
// batches, makes each record again from its copy and encodes it once per format in use,
// hands each sink its share with one write_batch call (writev / sendmmsg in the sinks), and each
// sink that reads parts the records' parts.
//
//   Logger::emit ─► AsyncWriter::reserve, the owned copy, commit ─► the thread's ring
//       ─► writer: the per-channel loop (channels.hpp) ─► sinks
//
// Order: a thread's records keep their order. Across threads the writer works in sweeps: a
// sweep begins with one look at every ring's published end, and its batches take only what was
// there at that look (at most AsyncMerge::kMaxBatch records, a quarter of a ring each), merged
// by timestamp: each record taken is the earliest of every ring's next, and a batch ends where
// that one cannot go in it. So within a sweep records go out in timestamp order; a record
// published after the look goes out in a later sweep even when its timestamp is earlier.
//
// The parts: the callers' side (async_callers.cpp), the set of rings (RingSet, ring_set.hpp),
// the writer thread (async_writer.cpp), its sweeps and batches (AsyncMerge, async_merge.hpp) and
// the crash path's walk (async_crash_walk.cpp). A thread's ring comes from the set with its
// first async record (queue_bytes, per ring) and goes back when the thread exits.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "dispatch/async_merge.hpp"
#include "dispatch/ring_set.hpp"
#include "dispatch/routing.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/metrics.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

struct Pipeline;
struct ThreadCounters;

class AsyncWriter {
public:
    /// What became of a record handed to reserve() and commit().
    enum class Enqueued : std::uint8_t {
        queued,     ///< in the thread's ring; the writer thread will write it
        dropped,    ///< the ring was full and the policy is `drop` (counted)
        too_large,  ///< larger than half a ring, or the thread is exiting: the caller writes it
                    ///< itself after drain() (policy `block`)
    };

    /// Allocates the writer's batch arrays; the rings come with the threads that log. No thread
    /// runs until start(). NOTE: `pipeline` MUST outlive the writer (the Pipeline owns it).
    AsyncWriter(const Pipeline& pipeline, const AsyncConfig& config);
    ~AsyncWriter();
    AsyncWriter(const AsyncWriter&) = delete;
    AsyncWriter& operator=(const AsyncWriter&) = delete;

    static constexpr std::size_t kMinCapacity = 4096;

    /// Where a record's payload goes, or why it does not (`payload` null).
    struct Slot {
        char* payload;  ///< `size` bytes, 8-aligned, in this thread's ring
        Enqueued outcome;
    };
    /// Caller side, hot path: room for a payload of `size` bytes in this thread's ring; fill it,
    /// then commit() (or do not: the room is taken again by the next record). No lock, no heap,
    /// no system call unless the ring is full (policy `block`); the thread's first record here
    /// takes a ring (cold path). A record larger than half a ring is never queued: with policy
    /// `block` it is too_large and the caller writes it itself after drain() (so its thread's
    /// order holds); with `drop` it is dropped and counted.
    Slot reserve(std::size_t size) noexcept;
    /// Publishes the payload reserve() gave this thread last, an owned copy (its head first) of a
    /// record of a logger with filter bits `admitted`, with a reference to each of its context
    /// nodes: from here the writer owns what it holds. Counts the record in `counters`; wakes the
    /// writer when the ring is more than half full and it sleeps.
    void commit(char* payload, FilterBits admitted, ThreadCounters& counters) noexcept;

    /// Starts the writer thread. configure() calls it once the previous pipeline is retired, so
    /// a sink both pipelines share gets the old pipeline's records first.
    void start();
    /// Returns once every record enqueued before the call has been handed to the sinks.
    void drain() noexcept;
    /// Writes everything queued, then ends the writer thread. Callers MUST have stopped
    /// enqueueing (configure() waits for readers first).
    void stop() noexcept;

    /// The writer's counters, and one entry per ring in use.
    [[nodiscard]] AsyncMetrics metrics() const;
    /// Of each ring.
    [[nodiscard]] std::size_t capacity() const noexcept { return rings_.capacity(); }

    // fork(): the parent's queued records belong to the parent. In the child they are
    // discarded, the rings of the threads that did not survive are recycled, and the writer
    // thread restarts with the child's first record, flush or shutdown.

    /// Called by the atfork prepare handler: no ring is registered across the fork.
    void lock_for_fork() noexcept { rings_.mutex().lock(); }
    void after_fork_in_parent() noexcept { rings_.mutex().unlock(); }
    /// Called by the atfork child handler, on the forking thread.
    void after_fork_in_child() noexcept;

    // The crash path's view of the rings (src/control/crash.cpp): all async-signal-safe.

    /// Accepts no record from now on: a caller that comes later blocks for good (policy
    /// `block`) or loses its record, counted (`drop`). A caller whose record was being copied
    /// meanwhile has it visited by the walk, or never returns.
    void seal() noexcept;
    /// Guards the list of rings: the crash path takes it (try_lock) around holds_unwritten()
    /// and visit_unwritten().
    [[nodiscard]] SinkMutex& rings_mutex() const noexcept { return rings_.mutex(); }
    /// Whether some ring holds records the writer has not handed to every sink.
    [[nodiscard]] bool holds_unwritten() const noexcept;
    /// Whether a writer thread runs, or is starting, and is not the calling thread: then what
    /// was accepted reaches the sinks if the caller waits (the sinks that read parts have no other way).
    [[nodiscard]] bool another_thread_writes() const noexcept;
    /// Calls `visit(context, record, size, admitted)` for each published record the writer has
    /// not yet handed to sink `sink` (an index into the routing table), the rings merged by
    /// timestamp: its owned copy, that copy's size, its logger's filter bits. A record a thread has not
    /// published yet is not visited.
    using Visitor = void (*)(void* context, const OwnedRecord& record, std::size_t size, FilterBits admitted);
    void visit_unwritten(std::size_t sink, Visitor visit, void* context) const noexcept;

private:
    // needs_thread: the thread should run but does not (lost in a fork, or creation failed);
    // the next caller that needs it starts it.
    enum class ThreadState : std::uint8_t { not_started, running, needs_thread, stopped };

    static void* thread_main(void* self) noexcept;
    void run() noexcept;
    bool start_thread() noexcept;
    void ensure_running() noexcept;
    AsyncRing* attach() noexcept;
    Enqueued attend() noexcept;
    void set_needs_thread() noexcept;
    char* wait_for_space(AsyncRing& ring, std::size_t size) noexcept;
    void wake_writer() noexcept;
    void idle_wait(bool long_sleep) noexcept;
    void note_progress() noexcept;
    void raise_high_water(AsyncRing& ring, std::uint64_t used) noexcept;

    const OverflowPolicy overflow_;
    const std::uint64_t serial_;  // tells this writer from any other, even at the same address

    // Read by callers on every record; written rarely.
    static constexpr std::uint32_t kSealed = 1;       // seal(): nothing more is accepted
    static constexpr std::uint32_t kNeedsThread = 2;  // thread_state_ is needs_thread
    static constexpr std::uint32_t kWakeOnCommit = 4;  // the writer's long sleep: the next commit wakes it
    alignas(64) std::atomic<std::uint32_t> attention_{0};  // the record path's one look at both
    std::atomic<bool> writer_sleeping_{false};
    std::atomic<ThreadState> thread_state_{ThreadState::not_started};
    std::atomic<bool> stopping_{false};

    alignas(64) std::atomic<std::uint32_t> progress_{0};  // wait_on word: bumped at every release
    std::atomic<std::uint32_t> waiters_{0};               // callers sleeping on progress_
    std::atomic<std::uint64_t> sweeps_begun_{0};
    std::atomic<std::uint64_t> sweeps_done_{0};
    alignas(64) std::atomic<std::uint32_t> wake_{0};      // wait_on word the writer sleeps on
    std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> blocked_nanos_{0};
    std::atomic<std::uint64_t> high_water_{0};

    RingSet rings_;
    AsyncMerge merge_;  // the writer thread's
    pthread_t thread_{};
    std::atomic<int> writer_tid_{0};  // kernel thread id of the writer thread; 0 when none
};

/// Adds the counters of `more` to `total`; the gauges (high water, capacity) are left alone.
void accumulate(AsyncMetrics& total, const AsyncMetrics& more) noexcept;

}  // namespace fieldlog::detail

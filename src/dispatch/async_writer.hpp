// The async half of the dispatcher: callers copy their encoded record into one bounded,
// lock-free multi-producer byte ring; one writer thread takes what is there in batches and
// hands each sink its share with one write_batch call (writev / sendmmsg in the sinks).
//
//   Logger::emit ─► Pipeline::dispatch ─► AsyncWriter::enqueue ─► ring ─► writer thread ─► sinks
//
// Order: a thread's records keep their order. Across threads the writer sorts each batch (what
// it found committed in the ring at one look) by timestamp; a record committed after that look
// goes out in a later batch even when its timestamp is earlier.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "dispatch/routing.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/metrics.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

struct Pipeline;

class AsyncWriter {
public:
    /// What became of a record handed to enqueue().
    enum class Enqueued : std::uint8_t {
        queued,     ///< in the ring; the writer thread will write it
        dropped,    ///< the ring was full and the policy is `drop` (counted)
        too_large,  ///< larger than half the ring: the caller writes it itself (policy `block`)
    };

    /// Allocates the whole ring (capacity: config.queue_bytes rounded down to a power of two,
    /// at least kMinCapacity) and the writer's batch arrays. No thread runs until start().
    /// NOTE: `pipeline` MUST outlive the writer (the Pipeline owns it).
    AsyncWriter(const Pipeline& pipeline, const AsyncConfig& config);
    ~AsyncWriter();
    AsyncWriter(const AsyncWriter&) = delete;
    AsyncWriter& operator=(const AsyncWriter&) = delete;

    static constexpr std::size_t kMinCapacity = 4096;

    /// Caller side, hot path: copies the record of channel `channel` into the ring. No lock, no
    /// heap, no system call unless the ring is full (policy `block`) or more than half full
    /// while the writer sleeps. A record larger than half the ring is never queued: with policy
    /// `block` it is too_large and the caller writes it itself after drain() (so its thread's
    /// order holds); with `drop` it is dropped and counted.
    /// `admitted`: the logger's mask, for the filtered sinks (routing.hpp).
    Enqueued enqueue(std::uint32_t channel, const RecordView& record, LoggerMask admitted) noexcept;

    /// Starts the writer thread. configure() calls it once the previous pipeline is retired, so
    /// a sink both pipelines share gets the old pipeline's records first.
    void start();
    /// Returns once every record enqueued before the call has been handed to the sinks.
    void drain() noexcept;
    /// Writes everything queued, then ends the writer thread. Callers MUST have stopped
    /// enqueueing (configure() waits for readers first).
    void stop() noexcept;

    /// The writer's counters (capacity, accepted, dropped, high water, time callers blocked).
    [[nodiscard]] AsyncMetrics metrics() const noexcept;
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

    /// fork(): the parent's queued records belong to the parent. In the child they are
    /// discarded and the writer thread (which did not survive the fork) restarts with the
    /// child's first record, flush or shutdown. Called from the atfork child handler.
    void after_fork_in_child() noexcept;

    // The crash path's view of the queue (src/control/crash.cpp): all async-signal-safe.

    /// Accepts no record from now on: a caller that comes later blocks for good (policy
    /// `block`) or loses its record, counted (`drop`). Returns the end of what was accepted.
    std::uint64_t seal() noexcept;
    /// How far the writer has handed records to every sink (and freed their space).
    [[nodiscard]] std::uint64_t released() const noexcept { return tail_.load(std::memory_order_acquire); }
    /// Kernel thread id of the writer thread; 0 when none runs.
    [[nodiscard]] int writer_thread_id() const noexcept { return writer_tid_.load(std::memory_order_acquire); }
    /// Calls `visit(context, channel, admitted, record)` for each committed record below `end` that the
    /// writer has not yet handed to sink `sink` (an index into the routing table), in ring
    /// order. A slot reserved but not yet committed is waited for, briefly; one that stays
    /// empty (its thread died) ends the walk. Returns where the walk ended: `end`, or that slot.
    using Visitor = void (*)(void* context, std::uint32_t channel, LoggerMask admitted, const RecordView& record);
    std::uint64_t visit_unwritten(std::size_t sink, std::uint64_t end, Visitor visit, void* context) const noexcept;

private:
    struct Pending {
        std::uint64_t position;  // of the slot in the ring (not masked)
        std::int64_t order_key;
    };

    // needs_thread: the thread should run but does not (lost in a fork, or creation failed);
    // the next caller that needs it starts it.
    enum class ThreadState : std::uint8_t { not_started, running, needs_thread, stopped };

    static void* thread_main(void* self) noexcept;
    void run() noexcept;
    bool start_thread() noexcept;
    void ensure_running() noexcept;
    Enqueued wait_for_space(std::uint64_t total) noexcept;
    void wake_writer() noexcept;
    void idle_wait() noexcept;
    bool write_some() noexcept;
    std::size_t collect(std::uint64_t limit) noexcept;
    void write_batch(std::size_t count) noexcept;
    void release(std::uint64_t upto) noexcept;
    void raise_high_water(std::uint64_t used) noexcept;
    [[nodiscard]] bool committed_at(std::uint64_t position) const noexcept;
    [[nodiscard]] char* slot(std::uint64_t position) const noexcept;

    const Pipeline& pipeline_;
    const std::size_t capacity_;  // power of two
    const std::uint64_t mask_;
    const OverflowPolicy overflow_;
    std::unique_ptr<std::uint32_t[]> ring_;  // capacity_ bytes, zero where nothing is committed

    // Cache lines by who writes them: callers (head_), the writer at every release (tail_,
    // progress_), rarely anyone (the rest, which callers read).
    alignas(64) std::atomic<std::uint64_t> head_{0};  // bytes ever reserved
    alignas(64) std::atomic<std::uint64_t> tail_{0};  // bytes ever released by the writer
    std::atomic<std::uint32_t> progress_{0};          // futex word: bumped at every release
    std::atomic<std::uint32_t> waiters_{0};           // callers sleeping on progress_
    alignas(64) std::atomic<std::uint32_t> wake_{0};  // futex word the writer sleeps on
    std::atomic<bool> writer_sleeping_{false};
    std::atomic<ThreadState> thread_state_{ThreadState::not_started};
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> blocked_nanos_{0};
    std::atomic<std::uint64_t> high_water_{0};

    // Writer side (its thread only, except the counters, which metrics() reads).
    alignas(64) std::atomic<std::uint64_t> accepted_records_{0};
    std::atomic<std::uint64_t> accepted_bytes_{0};
    /// Per sink: the ring position up to which the writer has handed it records. Written
    /// under the sink's mutex, so the crash path, holding it, reads where to go on from.
    std::unique_ptr<std::atomic<std::uint64_t>[]> handed_upto_;
    std::vector<Pending> batch_;
    std::vector<RecordView> views_;
    std::uint64_t read_ = 0;  // next slot to look at; == tail_ between batches
    pthread_t thread_{};
    std::atomic<int> writer_tid_{0};  // kernel thread id of the writer thread; 0 when none
};

/// Adds the counters of `more` to `total`; the gauges (high water, capacity) are left alone.
void accumulate(AsyncMetrics& total, const AsyncMetrics& more) noexcept;

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The callers' side of the async writer: a thread's first record takes a ring from the set
// (ring_set.hpp), each record is reserved, copied and published with one store (that hot part
// inline in async_ring.hpp); a full ring blocks or drops; a ring goes back when its thread
// exits; fork and metrics.
#include <algorithm>
#include <bit>

#include "dispatch/async_ring.hpp"
#include "dispatch/pipeline.hpp"

namespace fieldlog::detail {
namespace {

using namespace async_entry;

constexpr std::size_t kMaxCapacity = std::size_t{1} << 30;  // entry sizes must fit the ring's size word
std::size_t ring_capacity(std::size_t configured) noexcept {
    const std::size_t clamped = std::clamp(configured, AsyncWriter::kMinCapacity, kMaxCapacity);
    return std::bit_floor(clamped);
}

std::uint64_t elapsed_nanos(std::chrono::steady_clock::time_point since) noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

std::atomic<std::uint64_t> g_writer_serials{0};

/// A caller that came after the seal: the process is on its final path and ends soon.
[[noreturn]] void park_for_good() noexcept {
    for (;;) ::pause();
}

/// Gives this thread's ring back when the thread exits; armed by the thread's first ring.
struct RingReturn {
    bool armed = false;
    RingReturn() = default;
    RingReturn(const RingReturn&) = delete;
    RingReturn& operator=(const RingReturn&) = delete;
    ~RingReturn() {
        if (t_ring.ring != nullptr) let_go(t_ring.ring);
        t_ring = ThreadRing{.exiting = true};
    }
};
thread_local RingReturn t_ring_return;

}  // namespace

AsyncWriter::AsyncWriter(const Pipeline& pipeline, const AsyncConfig& config)
    : overflow_(config.overflow),
      serial_(g_writer_serials.fetch_add(1, std::memory_order_relaxed) + 1),
      rings_(ring_capacity(config.queue_bytes), pipeline.routing.sinks.size()),
      merge_(pipeline, rings_.capacity()) {}

AsyncWriter::~AsyncWriter() { stop(); }

AsyncRing* AsyncWriter::attach() noexcept {
    if (t_ring.exiting) return nullptr;  // its thread_locals are being destroyed: no new ring
    if (t_ring.ring != nullptr) let_go(t_ring.ring);  // an earlier writer's: that writer drains it
    t_ring = ThreadRing{};
    t_ring_return.armed = true;
    AsyncRing* const ring = rings_.take();
    if (ring == nullptr) {  // no memory for a ring: this record is dropped, the next one tries again
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    t_ring = ThreadRing{.writer = serial_, .ring = ring};
    return ring;
}

AsyncWriter::Enqueued AsyncWriter::attend() noexcept {
    const std::uint32_t attention = attention_.load(std::memory_order_relaxed);
    if ((attention & kWakeOnCommit) != 0 && (attention_.fetch_and(~kWakeOnCommit) & kWakeOnCommit) != 0) wake_writer();
    if ((attention & kSealed) != 0) {
        // Committed after the seal: the walk may or may not have seen it. With `drop` it
        // counts as lost; with `block` this caller waits for good, as after a seal it must.
        if (overflow_ == OverflowPolicy::block) park_for_good();
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return Enqueued::dropped;
    }
    ensure_running();
    return Enqueued::queued;
}

void AsyncWriter::raise_high_water(AsyncRing& ring, std::uint64_t used) noexcept {
    ring.high_water.store(used, std::memory_order_relaxed);
    std::uint64_t seen = high_water_.load(std::memory_order_relaxed);
    while (used > seen && !high_water_.compare_exchange_weak(seen, used, std::memory_order_relaxed)) {
    }
}

char* AsyncWriter::wait_for_space(AsyncRing& ring, std::size_t size) noexcept {
    if (overflow_ == OverflowPolicy::drop) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    const auto start = std::chrono::steady_clock::now();
    ensure_running();
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    char* p = nullptr;
    for (;;) {
        const std::uint32_t seen = progress_.load(std::memory_order_seq_cst);
        if ((p = ring.queue.try_reserve(size)) != nullptr) break;
        wake_writer();
        wait_on(progress_, seen, kIdleSleep);
        ensure_running();
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    const std::uint64_t waited = elapsed_nanos(start);
    ring.blocked_nanos.store(ring.blocked_nanos.load(std::memory_order_relaxed) + waited, std::memory_order_relaxed);
    blocked_nanos_.fetch_add(waited, std::memory_order_relaxed);
    return p;
}

AsyncMetrics AsyncWriter::metrics() const {
    AsyncMetrics m{.accepted_records = merge_.accepted_records(),
                   .accepted_bytes = merge_.accepted_bytes(),
                   .dropped_records = dropped_.load(std::memory_order_relaxed),
                   .queue_high_water = high_water_.load(std::memory_order_relaxed),
                   .queue_capacity = rings_.capacity(),
                   .blocked_nanos = blocked_nanos_.load(std::memory_order_relaxed)};
    rings_.add_metrics(m);
    return m;
}

void AsyncWriter::after_fork_in_child() noexcept {
    // Only the forking thread exists here, and lock_for_fork() holds the list. The rings of the
    // threads that did not survive are let go on their behalf, so the writer recycles them.
    const bool forking_thread_has_ring = t_ring.writer == serial_;
    rings_.empty_in_child(forking_thread_has_ring ? t_ring.ring : nullptr);
    if (forking_thread_has_ring) t_ring.ring->queue.hand_over();
    sweeps_done_.store(sweeps_begun_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    waiters_.store(0, std::memory_order_relaxed);
    writer_sleeping_.store(false, std::memory_order_relaxed);
    attention_.fetch_and(~kWakeOnCommit, std::memory_order_relaxed);
    writer_tid_.store(0, std::memory_order_relaxed);
    if (thread_state_.load(std::memory_order_relaxed) == ThreadState::running) set_needs_thread();
    rings_.mutex().unlock();
}

}  // namespace fieldlog::detail

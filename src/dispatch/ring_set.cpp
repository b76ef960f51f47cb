// SPDX-License-Identifier: MIT
// The async writer's set of rings (ring_set.hpp).
#include "dispatch/ring_set.hpp"

#include <algorithm>
#include <iterator>
#include <mutex>

#include "base/thread_id.hpp"

namespace fieldlog::detail {
namespace {

constexpr std::size_t kFreedAtOnce = 16;  // rings freed after one look; more wait for the next

}  // namespace

RingSet::RingSet(std::size_t capacity, std::size_t sinks) : capacity_(capacity), sinks_(sinks) {
    spares_.reserve(kSpareRings);
    make_spare_ready();
}

void RingSet::make_spare_ready() noexcept {
    AsyncRing* ring = nullptr;
    try {
        ring = new AsyncRing(capacity_, sinks_);
    } catch (...) {  // no memory: the next thread makes its ring itself
        return;
    }
    ring->queue.touch();
    ring->faulted_in = true;
    const std::lock_guard lock(mutex_);
    spares_.push_back(ring);  // reserved; below kSpareRings, as the set had none
}

RingSet::~RingSet() {
    for (AsyncRing* ring : rings_) let_go(ring);
    for (AsyncRing* ring : spares_) let_go(ring);
}

AsyncRing* RingSet::take() noexcept {
    AsyncRing* ring = nullptr;
    {
        const std::lock_guard lock(mutex_);
        if (!spares_.empty()) {
            ring = spares_.back();
            spares_.pop_back();
        }
    }
    try {
        if (ring == nullptr) ring = new AsyncRing(capacity_, sinks_);
        ring->queue.hand_over();
        ring->owners.store(2, std::memory_order_relaxed);
        ring->thread_id.store(kernel_thread_id(), std::memory_order_relaxed);
        ring->high_water.store(0, std::memory_order_relaxed);
        ring->blocked_nanos.store(0, std::memory_order_relaxed);
        const std::lock_guard lock(mutex_);
        rings_.push_back(ring);
        changed_.fetch_add(1, std::memory_order_release);
    } catch (...) {  // no memory: the ring is in no list, so no one else holds it
        delete ring;
        return nullptr;
    }
    return ring;
}

void RingSet::look(std::vector<AsyncRing*>& rings) noexcept {
    const bool recycle = std::any_of(rings.begin(), rings.end(), [](const AsyncRing* r) { return r->drained_and_let_go(); });
    if (!recycle && !joined_since_look()) return;
    AsyncRing* freed[kFreedAtOnce];
    std::size_t to_free = 0;
    bool none_ready = false;
    {
        const std::lock_guard lock(mutex_);
        std::erase_if(rings_, [&](AsyncRing* ring) {
            if (!ring->drained_and_let_go() || to_free == std::size(freed)) return false;
            if (spares_.size() < kSpareRings) {
                spares_.push_back(ring);
            } else {
                freed[to_free++] = ring;
            }
            return true;
        });
        seen_ = changed_.load(std::memory_order_acquire);
        none_ready = spares_.empty();  // only take() empties it, and a take() is a join
        try {
            rings.assign(rings_.begin(), rings_.end());  // grows only with the thread count
        } catch (...) {  // no memory: keep the rings the writer knew; the rest wait for the next look
            seen_ = 0;
        }
    }
    for (std::size_t i = 0; i < to_free; ++i) let_go(freed[i]);
    for (AsyncRing* ring : rings) {  // a new ring's pages, here rather than on its thread's records
        if (!ring->faulted_in) ring->queue.fault_in();
        ring->faulted_in = true;
    }
    if (none_ready) make_spare_ready();
}

void RingSet::add_metrics(AsyncMetrics& metrics) const {
    const std::lock_guard lock(mutex_);
    metrics.rings.reserve(rings_.size());
    for (const AsyncRing* ring : rings_) {
        metrics.rings.push_back(
            AsyncRingMetrics{.thread_id = static_cast<std::uint64_t>(ring->thread_id.load(std::memory_order_relaxed)),
                             .high_water = ring->high_water.load(std::memory_order_relaxed),
                             .blocked_nanos = ring->blocked_nanos.load(std::memory_order_relaxed)});
    }
    metrics.spare_rings = spares_.size();
}

void RingSet::empty_in_child(const AsyncRing* forking_thread) noexcept {
    // Their payloads' references are not given back: the parent's writer may have been giving
    // some back at the fork, and one given back twice would free a node in use; what they hold
    // stays until the child exits.
    for (AsyncRing* ring : rings_) {
        const std::uint64_t end = ring->queue.published();
        ring->read = ring->sweep_end = ring->batch_end = end;
        ring->queue.release(end);
        if (ring != forking_thread && ring->owners.load(std::memory_order_relaxed) == 2) {
            ring->owners.store(1, std::memory_order_relaxed);
        }
    }
}

}  // namespace fieldlog::detail

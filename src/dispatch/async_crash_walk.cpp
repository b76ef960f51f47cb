// SPDX-License-Identifier: MIT
// The crash path's view of the rings (src/control/crash.cpp): seal them, tell whether something
// is unwritten, and walk what each sink has not been handed, merged by time. All
// async-signal-safe: no lock, no heap.
#include <algorithm>

#include "base/thread_id.hpp"
#include "dispatch/async_ring.hpp"

namespace fieldlog::detail {

using namespace async_entry;

bool AsyncWriter::holds_unwritten() const noexcept {
    for (const AsyncRing* ring : rings_.in_use()) {
        if (ring->queue.released() != ring->queue.published()) return true;
    }
    return false;
}

bool AsyncWriter::another_thread_writes() const noexcept {
    // A thread just started has not stored its id yet: running says it will write.
    return thread_state_.load(std::memory_order_acquire) == ThreadState::running &&
           writer_tid_.load(std::memory_order_acquire) != kernel_thread_id();
}

void AsyncWriter::seal() noexcept {
    attention_.fetch_or(kSealed, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // before any look at the rings' ends
}

void AsyncWriter::visit_unwritten(std::size_t sink, Visitor visit, void* context) const noexcept {
    for (const AsyncRing* ring : rings_.in_use()) {
        ring->crash_read = std::max(ring->queue.released(), ring->handed_upto[sink].load(std::memory_order_acquire));
        ring->crash_key = INT64_MIN;  // the records before crash_read went out: the walk keys afresh
    }
    for (;;) {  // the earliest next record of all rings, until none is left
        const AsyncRing* first = nullptr;
        std::int64_t first_key = 0;
        for (const AsyncRing* ring : rings_.in_use()) {
            if (ring->crash_read >= ring->queue.published()) continue;
            const std::int64_t key = order_key_of(ring->queue.entry_at(ring->crash_read).data, ring->crash_key);
            if (first == nullptr || key < first_key) {
                first = ring;
                first_key = key;
            }
        }
        if (first == nullptr) return;
        const SpscRing::Entry entry = first->queue.entry_at(first->crash_read);
        visit(context, record_of(entry.data), payload_size_of(entry), admitted_of(entry.data));
        first->crash_key = first_key;
        first->crash_read = entry.next;
    }
}

}  // namespace fieldlog::detail

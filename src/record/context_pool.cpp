// SPDX-License-Identifier: MIT
// The per-thread pools of context memory (see context_pool.hpp). Each block starts with a
// header naming the pool that made it and its size class, so a release on any thread knows
// where the block belongs.
#include "record/context_pool.hpp"

#include <algorithm>
#include <mutex>
#include <new>

#include "base/fork_hooks.hpp"

namespace fieldlog::detail {
namespace {

using BlockHeader = PoolBlockHeader;

BlockHeader* header_of(void* block) noexcept { return static_cast<BlockHeader*>(block) - 1; }
void*& next_of(void* block) noexcept { return *static_cast<void**>(block); }

constexpr std::size_t class_bytes(std::size_t c) noexcept { return kPoolMinBlock << c; }

/// Every home ever made (never freed, so pointers to them stay valid), and those waiting for a
/// thread. Taken when a thread starts or exits and by metrics, never by a record or a scope.
struct Homes {
    std::mutex mutex;
    std::vector<ContextHome*> all;
    ContextHome* orphans = nullptr;
};
Homes& homes() noexcept {
    static auto* const h = new Homes;  // never destroyed: threads may exit after static destruction
    return *h;
}
// Made when the library loads (see add_fork_participant). A child of fork() must not inherit
// the mutex held by a thread that is not there.
[[maybe_unused]] const bool g_homes_fork_safe =
    (homes(), add_fork_participant([] { homes().mutex.lock(); }, [] { homes().mutex.unlock(); },
                                   [] { homes().mutex.unlock(); }),
     true);

void free_to_heap(void* block) noexcept { ::operator delete(header_of(block)); }

std::atomic<std::uint64_t> g_unpooled_misses{0};  // blocks for threads without a pool
std::atomic<std::size_t> g_pool_retained_bound{kPoolRetainedBytes};  // set_pool_retained_bound

/// Keeps `block` on `home`'s free list if the bound allows, else frees it. Owner only.
void keep_or_free(ContextHome& home, void* block) noexcept {
    const BlockHeader* h = header_of(block);
    const std::size_t bytes = class_bytes(h->size_class);
    if (home.free_bytes + bytes > g_pool_retained_bound.load(std::memory_order_relaxed)) {
        free_to_heap(block);
        return;
    }
    next_of(block) = home.free[h->size_class];
    home.free[h->size_class] = block;
    home.free_bytes += bytes;
}

/// Takes over the blocks other threads gave back. Owner only.
void take_remote(ContextHome& home) noexcept {
    void* block = home.remote_free.exchange(nullptr, std::memory_order_acquire);
    while (block != nullptr) {
        void* next = next_of(block);
        keep_or_free(home, block);
        block = next;
    }
    home.retained.store(home.free_bytes, std::memory_order_relaxed);
}

}  // namespace

void set_pool_retained_bound(std::size_t ring_bytes) noexcept {
    g_pool_retained_bound.store(std::max(kPoolRetainedBytes, ring_bytes), std::memory_order_relaxed);
}

ContextHome* adopt_home() {
    Homes& h = homes();
    {
        const std::lock_guard lock(h.mutex);
        if (ContextHome* home = h.orphans) {
            h.orphans = home->next_orphan;
            home->next_orphan = nullptr;
            take_remote(*home);  // what was given back since its thread exited
            return home;
        }
    }
    auto* home = new ContextHome;
    home->layers.reserve(16);
    const std::lock_guard lock(h.mutex);
    h.all.push_back(home);
    return home;
}

void orphan_home(ContextHome* home) noexcept {
    home->generation.fetch_add(1, std::memory_order_acq_rel);
    take_remote(*home);
    for (void*& list : home->free) {
        while (list != nullptr) {
            void* next = next_of(list);
            free_to_heap(list);
            list = next;
        }
    }
    home->free_bytes = 0;
    home->retained.store(0, std::memory_order_relaxed);
    Homes& h = homes();
    const std::lock_guard lock(h.mutex);
    home->next_orphan = h.orphans;
    h.orphans = home;
}

void* pool_allocate_slow(ContextHome* home, std::size_t bytes) {
    const std::size_t total = bytes + sizeof(BlockHeader);
    const std::size_t c = pool_class_for(total);
    if (home != nullptr && c < kPoolClasses) {
        if (home->free[c] == nullptr && home->remote_free.load(std::memory_order_relaxed) != nullptr) take_remote(*home);
        if (void* block = home->free[c]) {
            home->free[c] = next_of(block);
            home->free_bytes -= class_bytes(c);
            home->retained.store(home->free_bytes, std::memory_order_relaxed);
            count_one(home->hits);
            return block;
        }
    }
    if (home != nullptr) {
        count_one(home->misses);
    } else {
        g_unpooled_misses.fetch_add(1, std::memory_order_relaxed);
    }
    const bool pooled = home != nullptr && c < kPoolClasses;
    auto* h = static_cast<BlockHeader*>(::operator new(pooled ? class_bytes(c) : total));
    h->home = pooled ? home : nullptr;
    h->size_class = static_cast<std::uint32_t>(pooled ? c : kPoolClasses);
    return h + 1;
}

void pool_release_slow(ContextHome* current, void* block) noexcept {
    BlockHeader* h = header_of(block);
    ContextHome* home = h->home;
    if (home == nullptr) {
        free_to_heap(block);
    } else if (home == current) {
        keep_or_free(*home, block);
        home->retained.store(home->free_bytes, std::memory_order_relaxed);
    } else {
        void* head = home->remote_free.load(std::memory_order_relaxed);
        do {
            next_of(block) = head;
        } while (!home->remote_free.compare_exchange_weak(head, block, std::memory_order_release,
                                                          std::memory_order_relaxed));
    }
}

PoolCounts pool_counts() noexcept {
    Homes& h = homes();
    const std::lock_guard lock(h.mutex);
    PoolCounts counts{.misses = g_unpooled_misses.load(std::memory_order_relaxed)};
    for (const ContextHome* home : h.all) {
        counts.hits += home->hits.load(std::memory_order_relaxed);
        counts.misses += home->misses.load(std::memory_order_relaxed);
    }
    return counts;
}

std::size_t pooled_bytes() noexcept {
    Homes& h = homes();
    const std::lock_guard lock(h.mutex);
    std::size_t total = 0;
    for (const ContextHome* home : h.all) total += home->retained.load(std::memory_order_relaxed);
    return total;
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The memory behind request context: context nodes and their encoded forms come from the pool
// of the thread that makes them (the request-scoped recycling pattern: acquire from a
// per-thread free list, give back when the last reference goes, nothing on the heap in steady
// state). A block released on another thread goes back to its own thread's pool through a
// lock-free list, which that thread takes over when it next runs short. Each thread's pool
// (its ContextHome) outlives the thread: it is kept, emptied, for the next thread to adopt,
// so a reference to it never dangles. Hot path for Scope and Logger::with; no lock.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "encode/members.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "record/backtrace.hpp"

namespace fieldlog::detail {

struct ContextNode;

/// Size classes of pooled blocks: 128 bytes << c, for c < kPoolClasses (up to 64 KiB); a
/// larger block comes from the heap and goes back to it.
inline constexpr std::size_t kPoolClasses = 10;
inline constexpr std::size_t kPoolMinBlock = 128;
/// Free bytes one thread's pool keeps at least; what is released beyond the bound in force goes
/// back to the heap.
inline constexpr std::size_t kPoolRetainedBytes = 256 * 1024;
/// Sets the bound in force for async rings of `ring_bytes` each (0: sync mode): at least a
/// ring's size, since the records in a thread's ring hold their context until the writer has
/// written them, and it hands the blocks back in bulk: a smaller bound would free them only for
/// the thread to allocate them again.
void set_pool_retained_bound(std::size_t ring_bytes) noexcept;

/// An open Scope on its thread: `own` is the node its Scope object names, `chain` the node its
/// records carry (own, or a node made from it: a re-opened capture, or a rebuild after an
/// outer scope closed first). Each layer's chain descends from the layer's below it.
/// `kept`: the records its backtrace holds, or null when it keeps none (backtrace.hpp).
/// `level`: the level of every logger on this thread while it is the innermost with one.
struct ScopeLayer {
    ContextNode* own;
    ContextNode* chain;
    BacktraceStore* kept;
    std::optional<Level> level;
};

/// A Scope closed away from its thread's record path (on another thread, or inside a logging
/// call): queued for the owning thread, which closes it before its next record.
struct CloseTicket {
    CloseTicket* next;
    ContextNode* own;
};

/// One thread's pool and open scopes. Members above `remote_free` are the owning thread's
/// alone; the atomics are how other threads hand things back.
struct ContextHome {
    std::array<void*, kPoolClasses> free{};  ///< free blocks by class, linked through their first word
    std::size_t free_bytes = 0;
    std::vector<ScopeLayer> layers;  ///< open scopes, outermost first (capacity kept)
    ContextNode* top = nullptr;      ///< layers.back().chain, or null: what records carry
    std::uint32_t backtraces = 0;    ///< layers that keep a backtrace
    std::optional<Level> scope_level;  ///< the innermost layer's with a level: every logger's level here
    std::vector<SegmentMember> members;  ///< scratch of encode_context (capacity kept)
    std::vector<Field> gathered;         ///< scratch of a re-opened capture (capacity kept)

    std::atomic<void*> remote_free{nullptr};            ///< blocks released on other threads
    std::atomic<CloseTicket*> remote_closes{nullptr};   ///< scopes closed away from the record path
    std::atomic<std::uint32_t> generation{0};           ///< changes when the owning thread exits
    std::atomic<std::size_t> retained{0};               ///< free_bytes, for metrics
    // Blocks taken from a free list (hits) and from the heap (misses); owner-written, for metrics.
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
    ContextHome* next_orphan = nullptr;                 ///< guarded by the homes' registry mutex
};

/// A pool for a thread starting to use context: one left by an exited thread, else a new one.
ContextHome* adopt_home();
/// The owning thread is exiting: its free blocks go back to the heap and the home waits for
/// the next thread. MUST: no layer open.
void orphan_home(ContextHome* home) noexcept;

/// What precedes every block: the pool that made it (null: a heap block of its own size) and
/// its size class.
struct alignas(16) PoolBlockHeader {
    ContextHome* home;
    std::uint32_t size_class;  ///< kPoolClasses when not pooled
};

/// The smallest class whose blocks hold `total` bytes (header included), or kPoolClasses.
inline std::size_t pool_class_for(std::size_t total) noexcept {
    if (total <= kPoolMinBlock) return 0;
    const auto c = static_cast<std::size_t>(std::bit_width(total - 1) - std::bit_width(kPoolMinBlock - 1));
    return c < kPoolClasses ? c : kPoolClasses;
}

void* pool_allocate_slow(ContextHome* home, std::size_t bytes);

/// One more on an owner-written counter: a plain add, published for a reader on another thread.
inline void count_one(std::atomic<std::uint64_t>& counter) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
void pool_release_slow(ContextHome* current, void* block) noexcept;

/// `bytes` of memory from `home`'s pool (from the heap when it has no free block of that size,
/// or when `home` is null). Throws std::bad_alloc. Inline: a request takes a few.
inline void* pool_allocate(ContextHome* home, std::size_t bytes) {
    if (home != nullptr) {
        const std::size_t c = pool_class_for(bytes + sizeof(PoolBlockHeader));
        if (c < kPoolClasses) {
            if (void* block = home->free[c]) {
                home->free[c] = *static_cast<void**>(block);
                home->free_bytes -= kPoolMinBlock << c;
                home->retained.store(home->free_bytes, std::memory_order_relaxed);
                count_one(home->hits);
                return block;
            }
        }
    }
    return pool_allocate_slow(home, bytes);
}

/// Gives a block back: to `current`'s free list when it made it, else to its maker's pool.
/// `current` is the calling thread's home, or null. Inline: a request gives back a few.
inline void pool_release(ContextHome* current, void* block) noexcept {
    const PoolBlockHeader* h = static_cast<const PoolBlockHeader*>(block) - 1;
    if (current != nullptr && h->home == current) {
        const std::size_t bytes = kPoolMinBlock << h->size_class;
        // Within every bound; past this one the slow path asks the bound in force.
        if (current->free_bytes + bytes <= kPoolRetainedBytes) {
            *static_cast<void**>(block) = current->free[h->size_class];
            current->free[h->size_class] = block;
            current->free_bytes += bytes;
            current->retained.store(current->free_bytes, std::memory_order_relaxed);
            return;
        }
    }
    pool_release_slow(current, block);
}

/// The free bytes every pool keeps now (for metrics and the bound's test).
std::size_t pooled_bytes() noexcept;

/// Blocks every pool has handed out so far: from its free lists, and from the heap (a pool that
/// had none of that size, a block too large to pool, or a thread without a pool).
struct PoolCounts {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
};
PoolCounts pool_counts() noexcept;

}  // namespace fieldlog::detail

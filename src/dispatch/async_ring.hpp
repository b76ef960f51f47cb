// SPDX-License-Identifier: MIT
// What the async writer's files share (not included by anything else): the ring entry's
// header, the callers' reserve and commit (inline: ring_entry.cpp copies records between them),
// and the sleeps of the callers and the writer (base/platform.hpp: wait_on, wake_all).
//
//   ring_entry.cpp (reserve, the copy, commit) ─► a ring of ring_set.cpp ─► async_merge.cpp (the
//   writer's sweeps and batches) on the thread of async_writer.cpp; async_crash_walk.cpp (a
//   fatal signal)
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>

#include "base/platform.hpp"
#include "dispatch/async_writer.hpp"
#include "record/context_node.hpp"
#include "record/owned_record.hpp"
#include "record/thread_context.hpp"

namespace fieldlog::detail {

namespace async_entry {

// The record header at the start of each ring entry (offsets in bytes); the payload, the
// record's owned copy (ring_entry.hpp), follows it. The entry's size is the ring's.
inline constexpr std::size_t kAdmittedAt = 0;  // the logger's FilterBits
inline constexpr std::size_t kHeaderSize = 8;  // a multiple of 8: the payload is 8-aligned

template <typename T>
void put(char* at, T value) noexcept {
    std::memcpy(at, &value, sizeof value);
}
template <typename T>
T get(const char* at) noexcept {
    T value;
    std::memcpy(&value, at, sizeof value);
    return value;
}

/// The owned copy in the entry starting at `entry`.
inline const OwnedRecord& record_of(const char* entry) noexcept {
    return *reinterpret_cast<const OwnedRecord*>(entry + kHeaderSize);
}
/// The size of that copy, its fields and texts included.
inline std::size_t payload_size_of(const SpscRing::Entry& entry) noexcept { return entry.size - kHeaderSize; }
/// The filter bits of the logger that logged it, for the filtered sinks (routing.hpp).
inline FilterBits admitted_of(const char* entry) noexcept { return get<FilterBits>(entry + kAdmittedAt); }

/// The sort key of the entry at `entry`, which follows one of key `previous` in its ring: its
/// time in nanoseconds, raised to `previous` so that a clock that steps back cannot reorder one
/// thread's records. Worked out by the writer and the crash walk, so the caller stores the time
/// alone.
inline std::int64_t order_key_of(const char* entry, std::int64_t previous) noexcept {
    const Timestamp time = record_of(entry).time;
    std::int64_t key = 0;
    if (__builtin_mul_overflow(time.seconds, 1'000'000'000, &key) || __builtin_add_overflow(key, time.nanos, &key))
        [[unlikely]] {
        key = time.seconds < 0 ? INT64_MIN : INT64_MAX;
    }
    return std::max(key, previous);
}

}  // namespace async_entry

/// A batch's lines, reserved when the writer is made: a batch ends where the next record's lines
/// would not fit, so the writer allocates nothing after configure(). A single record larger
/// than this gets the room it needs, given back after its batch.
inline constexpr std::size_t kLineBytes = std::size_t{1} << 20;

/// The writer sleeps as soon as it finds every ring empty, at most this long; callers never pay
/// for a wake-up unless their ring is more than half full. It does not spin first: under a
/// steady trickle of records a spinning writer never sleeps and writes them one at a time,
/// taking a core from the threads that log.
inline constexpr std::chrono::milliseconds kIdleSleep{1};
/// After this many empty sweeps in a row the writer sleeps until the next record's commit
/// wakes it (or kLongSleep passes), so an idle program pays no polling; only the first record
/// after such a quiet spell pays for a wake-up.
inline constexpr std::uint32_t kEmptySweepsBeforeLongSleep = 100;
/// The long sleep's bound: rings let go by threads that exited meanwhile are recycled by then.
inline constexpr std::chrono::seconds kLongSleep{1};

/// This thread's ring: trivially destructible, so the record path reads it with no guard (and
/// initial-exec, like thread_context.hpp's t_context, with no call).
struct ThreadRing {
    std::uint64_t writer = 0;  // the serial of the writer it belongs to
    AsyncRing* ring = nullptr;
    bool exiting = false;  // the thread's ring was given back at its exit
};
[[gnu::tls_model("initial-exec")]] inline constinit thread_local ThreadRing t_ring;

// The callers' hot path, inline in the record's copy (ring_entry.cpp); the rest of the callers'
// side is async_callers.cpp.

inline AsyncWriter::Slot AsyncWriter::reserve(std::size_t size) noexcept {
    const std::size_t entry_size = async_entry::kHeaderSize + size;
    if (SpscRing::footprint(entry_size) > rings_.capacity() / 2) {
        if (overflow_ == OverflowPolicy::block) return {nullptr, Enqueued::too_large};
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return {nullptr, Enqueued::dropped};
    }
    AsyncRing* ring = t_ring.ring;
    if (t_ring.writer != serial_) [[unlikely]] {
        ring = attach();
        if (ring == nullptr) return {nullptr, t_ring.exiting ? Enqueued::too_large : Enqueued::dropped};
    }
    char* p = ring->queue.try_reserve(entry_size);
    if (p == nullptr) [[unlikely]] {
        p = wait_for_space(*ring, entry_size);
        if (p == nullptr) return {nullptr, Enqueued::dropped};
    }
    return {p + async_entry::kHeaderSize, Enqueued::queued};
}

inline void AsyncWriter::commit(char* payload, FilterBits admitted, ThreadCounters& counters) noexcept {
    const OwnedRecord& head = *std::launder(reinterpret_cast<const OwnedRecord*>(payload));
    if (head.bound != nullptr) retain(head.bound);
    if (head.scope != nullptr) retain(head.scope);
    ThreadCounters::bump(counters.records[static_cast<std::size_t>(head.level)]);
    AsyncRing* ring = t_ring.ring;
    async_entry::put(payload - async_entry::kHeaderSize + async_entry::kAdmittedAt, admitted);
    // seq_cst, and the seal's fence: either the crash path's walk sees this record, or this
    // caller sees the seal.
    ring->queue.commit(std::memory_order_seq_cst);
    if (attention_.load(std::memory_order_seq_cst) != 0) [[unlikely]] {
        if (attend() != Enqueued::queued) return;
    }

    const std::uint64_t used = ring->queue.used();
    if (used > ring->high_water.load(std::memory_order_relaxed)) [[unlikely]] raise_high_water(*ring, used);
    if (used > rings_.capacity() / 2 && writer_sleeping_.load(std::memory_order_relaxed)) wake_writer();
}

}  // namespace fieldlog::detail

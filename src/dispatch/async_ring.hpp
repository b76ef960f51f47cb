// SPDX-License-Identifier: MIT
// What the async writer's files share (not included by anything else): one thread's ring and
// what the writer and the crash path keep beside it, the ring entry's header, and the futex
// calls the callers and the writer wait and wake with.
//
//   async_rings.cpp (the callers' side and the ring set) ─► async_merge.cpp (the writer's
//   sweeps and batches) on the thread of async_writer.cpp; async_crash_walk.cpp (a fatal signal)
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>

#include "dispatch/async_writer.hpp"

namespace fieldlog::detail {

/// One thread's ring and what the writer and the crash path keep beside it.
struct AsyncWriter::Ring {
    Ring(std::size_t capacity, std::size_t sinks)
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
    std::uint64_t read = 0;       // everything below is handed out and released
    std::uint64_t sweep_end = 0;  // published end at the sweep's look
    std::uint64_t batch_end = 0;  // how far the current batch took
    // The crash path's walk (one final path ever runs).
    mutable std::uint64_t crash_read = 0;
};

namespace async_entry {

// The record header at the start of each ring entry (offsets in bytes); the payload follows it.
// The record's own level and time are in the payload (QueuedCodec::facts).
inline constexpr std::size_t kLengthAt = 0;
inline constexpr std::size_t kAdmittedAt = 4;  // the logger's LoggerMask
inline constexpr std::size_t kOrderKeyAt = 8;
inline constexpr std::size_t kHeaderSize = 16;  // a multiple of 8: the payload is 8-aligned

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

/// The entry starting at `entry` as the writer sees it.
inline QueuedView view_of(const QueuedCodec& codec, const char* entry) noexcept {
    QueuedView view{entry + kHeaderSize, get<std::uint32_t>(entry + kLengthAt), Level::info, Timestamp{},
                    get<LoggerMask>(entry + kAdmittedAt)};
    codec.facts(view.payload, view.level, view.time);
    return view;
}

/// The sort key of the entry at `entry`.
inline std::int64_t order_key_of(const char* entry) noexcept { return get<std::int64_t>(entry + kOrderKeyAt); }

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

inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) noexcept {
    const timespec relative{static_cast<time_t>(timeout.count() / 1'000'000'000),
                            static_cast<long>(timeout.count() % 1'000'000'000)};
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &relative, nullptr, 0);
}

inline void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

/// Lets go of a ring; the last of its owners frees it.
inline void let_go(AsyncWriter::Ring* ring) noexcept {
    if (ring->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ring;
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// What the async writer's files share (not included by anything else): the ring entry's
// header, and the sleeps of the callers and the writer (base/platform.hpp: wait_on, wake_all).
//
//   async_callers.cpp (reserve, commit) ─► a ring of ring_set.cpp ─► async_merge.cpp (the
//   writer's sweeps and batches) on the thread of async_writer.cpp; async_crash_walk.cpp (a
//   fatal signal)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "base/platform.hpp"
#include "dispatch/async_writer.hpp"
#include "record/owned_record.hpp"

namespace fieldlog::detail {

namespace async_entry {

// The record header at the start of each ring entry (offsets in bytes); the payload, the
// record's owned copy (ring_entry.hpp), follows it.
inline constexpr std::size_t kLengthAt = 0;
inline constexpr std::size_t kOrderKeyAt = 8;
inline constexpr std::size_t kAdmittedAt = 16;  // the logger's FilterBits
inline constexpr std::size_t kHeaderSize = 24;  // a multiple of 8: the payload is 8-aligned

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
inline std::size_t payload_size_of(const char* entry) noexcept { return get<std::uint32_t>(entry + kLengthAt); }
/// The filter bits of the logger that logged it, for the filtered sinks (routing.hpp).
inline FilterBits admitted_of(const char* entry) noexcept { return get<FilterBits>(entry + kAdmittedAt); }

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
/// After this many empty sweeps in a row the writer sleeps until the next record's commit
/// wakes it (or kLongSleep passes), so an idle program pays no polling; only the first record
/// after such a quiet spell pays for a wake-up.
inline constexpr std::uint32_t kEmptySweepsBeforeLongSleep = 100;
/// The long sleep's bound: rings let go by threads that exited meanwhile are recycled by then.
inline constexpr std::chrono::seconds kLongSleep{1};

}  // namespace fieldlog::detail

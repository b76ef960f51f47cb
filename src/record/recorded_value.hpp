// SPDX-License-Identifier: MIT
// A user type's value, recorded: the ValueEncoder calls its fieldlog_encode made (and any
// object or array that holds more than scalars and strings), as one run of bytes with every
// string in it and no pointer into itself. A copy of a record (a context node, a ring entry, a
// kept record) holds recordings among its strings: made once at the call, moved with memcpy,
// replayed into any encoder, any number of times, on any thread.
//
//   call site: Value ─► record_value(into a Buffer) ─► memcpy into the copy ─► recorded(at) ─► encoder
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fieldlog/field.hpp"

namespace fieldlog::detail {

class Buffer;

/// Appends to `out` the recording of `v` (a user type, a range, or any object or array): its
/// size, then its calls. Throws what the user's code throws, or std::bad_alloc.
void record_value(Buffer& out, const Value& v);

/// The bytes of the recording that starts at `at`, its size word included.
inline std::size_t recording_size(const char* at) noexcept {
    std::uint32_t size;
    std::memcpy(&size, at, sizeof size);
    return size;
}

/// A value that replays the recording at `at`, which MUST stay where it is while it is used.
Value recorded(const char* at) noexcept;

}  // namespace fieldlog::detail

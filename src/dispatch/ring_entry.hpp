// SPDX-License-Identifier: MIT
// A record in an async ring: its owned copy (owned_record.hpp) made by the logging thread, which
// encodes nothing; the writer thread makes the Record again from it and runs the same
// per-channel loop as sync mode (channels.hpp).
//
//   Logger::emit ─► queue_record: the owned copy into the thread's ring ─► writer: OwnedRecord::record,
//   for_each_channel ─► sinks
//   Logger::emit_call (a template of strings, bools and numbers; ring_entry.cpp) ─► the same copy,
//   made from the call's values in one pass, with no Record
#pragma once

#include <cstddef>
#include <span>

#include "base/record.hpp"
#include "dispatch/async_writer.hpp"
#include "dispatch/routing.hpp"
#include "record/owned_record.hpp"

namespace fieldlog::detail {

struct Pipeline;
struct ThreadContext;

/// Copies `record` into this thread's ring of `pipeline`'s writer (`admitted`: the logger's
/// filter bits). Its context goes as references to its nodes: the writer makes what encodings
/// of them are not made yet. True when the record is done with (queued; dropped by the
/// overflow policy or because a user type threw); false when it is too large for a ring: the
/// caller writes it.
bool queue_record(ThreadContext& context, const Pipeline& pipeline, const Record& record, FilterBits admitted) noexcept;

/// Whether each of `record`'s context nodes carries its encoding for `channel`. The crash path,
/// which makes none, writes a record whose context lacks one with context_as_fields.
bool context_encoded(const Record& record, const Channel& channel) noexcept;
/// `record`'s context as fields in `room`, the bound ones then the scopes', outermost first,
/// its own fields after them: the line they make is the one the encodings make. Of no data
/// (null) when they are more than `room` holds.
std::span<const Field> context_as_fields(const Record& record, std::span<Field> room) noexcept;

/// The most bytes `queued`'s line in `channel`'s format takes (`size`: its entry's payload),
/// its context encoded or as fields: the crash path, which may not grow a buffer, asks first.
std::size_t line_bound(const OwnedRecord& queued, std::size_t size, const Channel& channel) noexcept;

}  // namespace fieldlog::detail

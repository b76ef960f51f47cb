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

#include "base/record.hpp"
#include "dispatch/async_writer.hpp"
#include "dispatch/routing.hpp"
#include "record/owned_record.hpp"

namespace fieldlog::detail {

struct Pipeline;
struct ThreadContext;

/// Copies `record` into this thread's ring of `pipeline`'s writer (`admitted`: the logger's
/// filter bits). Every context encoding the writer will need is made first, here, so that neither the
/// writer nor the crash path ever makes one. True when the record is done with (queued;
/// dropped by the overflow policy or because a user type threw); false when it is too large
/// for a ring: the caller writes it.
bool queue_record(ThreadContext& context, const Pipeline& pipeline, const Record& record, FilterBits admitted) noexcept;

/// The most bytes `queued`'s line in `channel`'s format takes (`size`: its entry's payload):
/// the crash path, which may not grow a buffer, asks first.
std::size_t line_bound(const OwnedRecord& queued, std::size_t size, const Channel& channel) noexcept;

}  // namespace fieldlog::detail

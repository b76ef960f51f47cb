// SPDX-License-Identifier: MIT
// A record in an async ring: its owned copy (owned_record.hpp) made by the logging thread, which
// encodes nothing; the writer thread makes the Record again from it and encodes it once per
// format in use, or hands channels of parts its parts, through queued_codec.
//
//   Logger::emit ─► queue_record: the owned copy into the thread's ring ─► writer: queued_codec ─► sinks
#pragma once

#include "base/record.hpp"
#include "dispatch/async_writer.hpp"

namespace fieldlog::detail {

struct Pipeline;
struct ThreadContext;

/// Copies `record` into this thread's ring of `pipeline`'s writer (`admitted`: the logger's
/// mask). Every context encoding the writer will need is made first, here, so that neither the
/// writer nor the crash path ever makes one. True when the record is done with (queued;
/// dropped by the overflow policy or because a user type threw); false when it is too large
/// for a ring: the caller writes it.
bool queue_record(ThreadContext& context, const Pipeline& pipeline, const Record& record, LoggerMask admitted) noexcept;

/// How the writer (and the crash path) make lines and views of parts of queued records, and let go of them.
extern const QueuedCodec queued_codec;

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The record's typed form in an async ring: what a logging thread copies instead of encoding,
// and what the writer thread encodes once per format in use (through queued_codec). It is
// self-contained and points only into itself, or at what lives longer: the message and the
// call's fields with every byte they hold (user types as recordings), references to the
// logger's and the thread's context nodes, the logger (which lives for the whole program), the
// call site, the thread's id.
//
//   Logger::emit ─► queue_record: copy into the thread's ring ─► writer: queued_codec.encode ─► sinks
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dispatch/async_writer.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/logger.hpp"

namespace fieldlog::detail {

struct ContextNode;
struct Pipeline;
struct ThreadContext;

/// The payload of a ring entry (the ring's header holds the level, time and logger mask).
struct QueuedRecord {
    const LoggerCore* logger;
    ContextNode* bound;  ///< the logger's context: a reference, given back once written
    ContextNode* scope;  ///< the thread's open scopes: likewise
    SourceLocation where;
    std::string_view message;  ///< formatted already when the call gave fmt arguments
    const Field* fields;
    std::uint32_t field_count;
    int thread_id;
};

/// Copies a record into this thread's ring of `pipeline`'s writer (`scope`: the thread's open
/// scopes when it was logged). Every context encoding the writer will need is made first,
/// here, so that neither the writer nor the crash path ever makes one. True when the record
/// is done with (queued; dropped by the overflow policy or because a user type threw); false
/// when it is too large for a ring: the caller writes it.
bool queue_record(ThreadContext& context, const Pipeline& pipeline, const LoggerCore& logger, ContextNode* bound,
                  ContextNode* scope, Level level, const Message& message, std::span<const Field> fields,
                  LoggerMask admitted, Timestamp now) noexcept;

/// How the writer (and the crash path) make lines of QueuedRecords and let go of them.
extern const QueuedCodec queued_codec;

}  // namespace fieldlog::detail

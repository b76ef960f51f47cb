// SPDX-License-Identifier: MIT
// A queued record as the async writer sees it, and the codec through which the writer makes its
// lines and views of parts: the record layer's (record/queued_record.hpp), handed over by
// configure(), since dispatch may not include record or encode.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/buffer.hpp"
#include "dispatch/routing.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

struct Pipeline;

/// A queued record as the writer sees it: the payload the record layer wrote
/// (record/queued_record.hpp), opaque here, with the facts the writer routes it by.
struct QueuedView {
    const char* payload;  ///< 8-aligned; stays where it is until the writer releases it
    std::size_t size;
    Level level;
    Timestamp time;
    LoggerMask admitted;  ///< the logger's mask, for the filtered sinks (routing.hpp)
};

/// How the writer makes lines and views of parts of payloads, and lets go of them: the record
/// layer's, which writes them (record/queued_record.hpp).
struct QueuedCodec {
    /// The level and time of the record in `payload`.
    void (*facts)(const char* payload, Level& level, Timestamp& time) noexcept;
    /// Appends the line of `record` in `channel`'s format to `out`; false when it could not be
    /// made (memory ran out): that channel's sinks miss the record.
    bool (*encode)(const QueuedView& record, const Channel& channel, Buffer& out, Buffer& scratch) noexcept;
    /// The most bytes encode() appends for `record` in `channel`'s format (the crash path, which
    /// may not grow a buffer, asks first).
    std::size_t (*line_bound)(const QueuedView& record, const Channel& channel) noexcept;
    /// Gives back what the payload holds (its context references) once every sink has its lines.
    void (*release)(const QueuedView& record) noexcept;
    /// The name of `record`'s logger (RecordView::logger).
    std::string_view (*logger_name)(const QueuedView& record) noexcept;
    /// Hands `record`'s parts to `sink` of the channel of parts `channel` (the caller holds its
    /// mutex).
    void (*write_parts)(const QueuedView& record, const Pipeline& pipeline, const Channel& channel, Sink& sink) noexcept;
};

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The per-channel loop every record goes through: on the logging thread in sync mode, on the
// writer thread in async mode. For each channel that takes the record it makes the channel's
// form once (the line of its encoder, or the record's parts) and hands it on; only what takes
// it differs (the sinks at once, or the writer's batch).
//
//   Record ─► for_each_channel: encode_line or make_parts_view ─► take(channel, RecordView)
#pragma once

#include <cstddef>

#include "base/buffer.hpp"
#include "base/record.hpp"
#include "dispatch/pipeline.hpp"
#include "encode/encode.hpp"
#include "fieldlog/sink.hpp"
#include "record/context_node.hpp"
#include "record/parts_view.hpp"

namespace fieldlog::detail {

/// What making a record's forms reuses from one record to the next.
struct FormBuffers {
    Buffer& line;     ///< the line being made, or a template's text for a view of parts
    Buffer& scratch;  ///< the encoders'
    /// Where a context encoding not made yet is made and kept: the logging thread's pool, or
    /// the async writer's.
    ContextHome* home;
    PartsViewStorage& parts;
    bool oversized = false;  ///< a line outgrew the buffer's kept size (the room was given back)
};

/// Appends `record`'s line in `channel`'s format to `out`, making in `home` the context
/// encodings not made yet (with a null `home` one not made yet throws bad_alloc: the crash path
/// asks context_encoded first). Throws what a user formatter throws, or std::bad_alloc.
inline void encode_line(const Channel& channel, const Record& record, ContextHome* home, Buffer& out, Buffer& scratch) {
    const ContextEncoding encoding{channel.options, channel.options_id};
    const EncodedContexts contexts{context_encoding(home, record.bound, encoding, out, scratch),
                                   context_encoding(home, record.scope, encoding, out, scratch)};
    encode_record(channel.options, out, scratch, record, contexts);
}

/// Calls `take(channel, view)` for each channel of `pipeline` that takes `record` (its logger's
/// filter bits `admitted`), with the channel's form of it. Line channels come first (the routing
/// table keeps them so), so a caller that stops at a line has handed no parts yet. A line that
/// cannot be made (a user formatter threw, memory ran out) is skipped: that channel's sinks
/// miss the record. Returns false as soon as `take` does.
template <typename Take>
inline bool for_each_channel(const Pipeline& pipeline, const Record& record, FilterBits admitted,
                             FormBuffers& buffers, Take&& take) noexcept {
    for (const Channel& channel : pipeline.routing.channels) {
        if (!channel.takes(record.level, admitted)) continue;
        if (!channel.lines) [[unlikely]] {
            RecordView parts;
            const bool made = make_parts_view(record, channel.options, pipeline.redact, buffers.parts, buffers.line, parts);
            if (made) take(channel, parts);
            buffers.oversized = buffers.line.shrink() || buffers.oversized;
            continue;
        }
        buffers.line.clear();
        try {
            encode_line(channel, record, buffers.home, buffers.line, buffers.scratch);
        } catch (...) {
            buffers.line.shrink();
            continue;
        }
        const bool taken =
            take(channel, RecordView{buffers.line.span(), record.level, record.time, record.logger.name.text});
        buffers.oversized = buffers.line.shrink() || buffers.oversized;
        if (!taken) return false;
    }
    return true;
}

}  // namespace fieldlog::detail

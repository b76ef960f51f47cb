// SPDX-License-Identifier: MIT
// A Record as the sinks that read parts see it (RecordView, fieldlog/sink.hpp): its context
// gathered into typed fields, every value the redaction rules name replaced, a template's message
// made text (so that it is plain text or fmt's, as for any sink). Made for each
// channel of parts a record reaches, by sync dispatch on the logging thread and by the async
// writer from the ring's copy, the same way.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/buffer.hpp"
#include "base/record.hpp"
#include "encode/redact.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// What a view of parts refers to besides the record, reused from one record to the next so
/// that it allocates only while it grows; valid until the next view is made.
struct PartsViewStorage {
    std::vector<Field> gathered;
    std::vector<Field> redacted;       ///< copies of the fields, named values replaced
    std::vector<RedactedValue> held;   ///< what those replaced values refer to
    std::optional<Message> message;    ///< a template's message, made text
};

/// Makes `view` the parts of `record` for a channel of parts of `options`, under the redaction
/// rules `redact`; what it refers to besides the record is in `storage`, and a template's text in
/// `text`. False when memory ran out gathering the fields or a template's value threw: the sinks
/// that read parts miss this record.
bool make_parts_view(const Record& record, const EncoderOptions& options, std::span<const std::string> redact,
                     PartsViewStorage& storage, Buffer& text, RecordView& view) noexcept;

}  // namespace fieldlog::detail

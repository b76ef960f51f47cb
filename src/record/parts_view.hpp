// SPDX-License-Identifier: MIT
// A Record as the sinks that read parts see it (RecordView, fieldlog/sink.hpp): its context
// gathered into typed fields, every value the redaction rules name replaced. Made for each
// channel of parts a record reaches, by sync dispatch on the logging thread and by the async
// writer from the ring's copy, the same way.
#pragma once

#include <span>
#include <string>
#include <vector>

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
};

/// Makes `view` the parts of `record` for a channel of parts of `options`, under the redaction
/// rules `redact`; what it refers to besides the record is in `storage`. False when memory ran
/// out gathering the fields: the sinks that read parts miss this record.
bool make_parts_view(const Record& record, const EncoderOptions& options, std::span<const std::string> redact,
                     PartsViewStorage& storage, RecordView& view) noexcept;

}  // namespace fieldlog::detail

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
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// What making views of parts reuses from one record to the next, so that they allocate only while
/// it grows.
struct PartsViewStorage {
    std::vector<Field> gathered;
};

/// Calls `use(view, argument)` with `record`'s parts for a channel of parts of `options`, under
/// the redaction rules `redact`. Nothing when memory runs out gathering the fields: the sinks
/// that read parts miss this record.
void with_parts_view(const Record& record, const EncoderOptions& options, std::span<const std::string> redact,
                     PartsViewStorage& storage, void (*use)(const RecordView& view, const void* argument),
                     const void* argument) noexcept;

}  // namespace fieldlog::detail

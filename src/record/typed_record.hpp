// SPDX-License-Identifier: MIT
// A Record in the form typed outputs read (TypedRecordView, fieldlog/sink.hpp): its context
// gathered into typed fields, every value the redaction rules name replaced. Made for each typed
// channel a record reaches, by sync dispatch on the logging thread and by the async writer from
// the ring's copy, the same way.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/record.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// What making typed views reuses from one record to the next, so that they allocate only while
/// it grows.
struct TypedViewStorage {
    std::vector<Field> gathered;
};

/// Calls `use(view, argument)` with `record`'s typed form for a typed channel of `options`,
/// under the redaction rules `redact`. Nothing when memory runs out gathering the fields: the
/// typed outputs miss this record.
void with_typed_view(const Record& record, const EncoderOptions& options, std::span<const std::string> redact,
                     TypedViewStorage& storage, void (*use)(const TypedRecordView& view, const void* argument),
                     const void* argument) noexcept;

}  // namespace fieldlog::detail

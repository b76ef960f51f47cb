// The one entry point from the record path into the encoders: picks the encoder for a format.
#pragma once

#include <span>

#include "encode/record_input.hpp"
#include "fieldlog/encoder.hpp"
#include "record/buffer.hpp"

namespace fieldlog::detail {

/// Appends one whole record line in `options.format`.
void encode_record(const EncoderOptions& options, Buffer& out, Buffer& scratch, const RecordInput& record);

/// Appends fields in the form bound and scope fields are kept in (with leading separators).
void encode_fields(const EncoderOptions& options, Buffer& out, Buffer& scratch, std::span<const Field> fields);

}  // namespace fieldlog::detail

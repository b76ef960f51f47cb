// SPDX-License-Identifier: MIT
// The one entry point from the record path into the encoders: picks the encoder for a format.
#pragma once

#include <cstdint>
#include <span>

#include "base/buffer.hpp"
#include "encode/members.hpp"
#include "base/record.hpp"
#include "fieldlog/encoder.hpp"

namespace fieldlog::detail {

/// Appends one whole record line in `options.format`; `context` is the record's bound and
/// scope context encoded under `options`.
void encode_record(const EncoderOptions& options, Buffer& out, Buffer& scratch, const Record& record,
                   const EncodedContexts& context);

/// Bytes between the start of a top-level member written under `options` and its key.
std::uint8_t member_key_offset(const EncoderOptions& options) noexcept;

/// A run of top-level members being made (bound or scope fields): where their member table
/// goes, and what encode_fields found.
struct FieldsRun {
    std::span<SegmentMember> members;  ///< filled up to its size
    std::size_t count = 0;             ///< members in the run (may exceed members.size())
    std::uint64_t mask = 0;
};

/// Appends `parent` (a run in this format) and then `fields` as top-level members with leading
/// separators (the form bound and scope fields are kept in), keys made unique, and describes
/// the members from where it started in `run`.
void encode_fields(const EncoderOptions& options, Buffer& out, Buffer& scratch, const Segment& parent,
                   std::span<const Field> fields, FieldsRun& run);

}  // namespace fieldlog::detail

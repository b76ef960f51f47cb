// SPDX-License-Identifier: MIT
// The otel encoder: one JSON object per line in the names of the OpenTelemetry logs data model
// (timestamp, observed_timestamp, severity_text, severity_number, body, trace_id, span_id,
// trace_flags, attributes, resource, instrumentation_scope). The record's fields, bound, scope
// and call, are the members of `attributes`, written by the JSON encoder under the JSON
// format's rules (duplicate keys, reserved keys, escaping); the trace context a scope holds is
// lifted out of them to the top level.
#pragma once

#include <span>

#include "base/buffer.hpp"
#include "encode/json_encoder.hpp"
#include "encode/members.hpp"
#include "base/record.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {

class OtelEncoder final {
public:
    /// Bytes between a member's start and its key: bound and scope fields are JSON members.
    static constexpr std::uint8_t kKeyOffset = JsonEncoder::kKeyOffset;

    OtelEncoder(Buffer& out, Buffer& scratch, const EncoderOptions& options) noexcept
        : out_(out), scratch_(scratch), options_(options), attributes_(out, scratch, options) {}

    /// Appends one whole record, ending in '\n', through an encoder of its own: the record
    /// path's one frame in the encoder (record() is inlined into it).
    static void write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options, const Record& record,
                             const EncodedContexts& context);
    /// Bound and scope fields, kept as JSON members (they become attributes).
    void fields(const Segment& parent, std::span<const Field> fields) { attributes_.fields(parent, fields); }
    [[nodiscard]] const MemberIndex& members() const noexcept { return attributes_.members(); }

private:
    /// write_record()'s body.
    void record(const Record& record, const EncodedContexts& context);
    /// The call's facts the options ask for, as attributes with the semantic conventions' keys.
    void write_call_facts(const Record& record);
    /// `,"resource":{…}` from the options.
    void write_resource();

    Buffer& out_;
    Buffer& scratch_;
    const EncoderOptions& options_;
    JsonEncoder attributes_;
};

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The format switch: one encoder per format, all writing the same record.
#include "encode/encode.hpp"

#include "encode/console_encoder.hpp"
#include "encode/console_style.hpp"
#include "encode/json_encoder.hpp"
#include "encode/logfmt_encoder.hpp"
#include "encode/otel_encoder.hpp"

namespace fieldlog::detail {
namespace {

template <typename Encoder>
void fields_with(Encoder encoder, Buffer& out, const Segment& parent, std::span<const Field> fields, FieldsRun& run) {
    const std::size_t base = out.size();
    encoder.fields(parent, fields);
    run.count = encoder.members().top_members(base, run.members);
    run.mask = encoder.members().top_mask();
}

}  // namespace

std::uint8_t member_key_offset(const EncoderOptions& options) noexcept {
    if (options.format == Format::json) return JsonEncoder::kKeyOffset;
    if (options.format == Format::otel) return OtelEncoder::kKeyOffset;
    return console_key_offset(options.format == Format::console && options.colour);
}

void encode_record(const EncoderOptions& options, Buffer& out, Buffer& scratch, const Record& record,
                   const EncodedContexts& context) {
    // Tail calls: this switch has no frame of its own (an encoder built here would give it one).
    switch (options.format) {
        case Format::json: return JsonEncoder::write_record(out, scratch, options, record, context);
        case Format::logfmt: return LogfmtEncoder::write_record(out, scratch, options, record, context);
        case Format::console: return ConsoleEncoder::write_record(out, scratch, options, record, context);
        case Format::otel: return OtelEncoder::write_record(out, scratch, options, record, context);
    }
}

void encode_fields(const EncoderOptions& options, Buffer& out, Buffer& scratch, const Segment& parent,
                   std::span<const Field> fields, FieldsRun& run) {
    switch (options.format) {
        case Format::json: fields_with(JsonEncoder(out, scratch, options), out, parent, fields, run); break;
        case Format::logfmt: fields_with(LogfmtEncoder(out, scratch, options), out, parent, fields, run); break;
        case Format::console: fields_with(ConsoleEncoder(out, scratch, options), out, parent, fields, run); break;
        case Format::otel: fields_with(OtelEncoder(out, scratch, options), out, parent, fields, run); break;
    }
}

}  // namespace fieldlog::detail

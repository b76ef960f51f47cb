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

void encode_record(const EncoderOptions& options, Buffer& out, Buffer& scratch, const RecordInput& record) {
    switch (options.format) {
        case Format::json: JsonEncoder(out, scratch, options).record(record); break;
        case Format::logfmt: LogfmtEncoder(out, scratch, options).record(record); break;
        case Format::console: ConsoleEncoder(out, scratch, options).record(record); break;
        case Format::otel: OtelEncoder(out, scratch, options).record(record); break;
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

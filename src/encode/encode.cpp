#include "encode/encode.hpp"

#include "encode/json_encoder.hpp"

namespace fieldlog::detail {

void encode_record(const EncoderOptions& options, Buffer& out, Buffer& scratch, const RecordInput& record) {
    switch (options.format) {
        case Format::json:
        case Format::logfmt:
        case Format::console:
            JsonEncoder(out, scratch, options).record(record);
            break;
    }
}

void encode_fields(const EncoderOptions& options, Buffer& out, Buffer& scratch, std::span<const Field> fields) {
    switch (options.format) {
        case Format::json:
        case Format::logfmt:
        case Format::console:
            JsonEncoder(out, scratch, options).fields(fields);
            break;
    }
}

}  // namespace fieldlog::detail

// The JSON encoder: one object per line, keys ts, level, logger, msg, bound fields, scope
// fields, call fields. Streams values with a small explicit stack (depth limit kMaxDepth), so
// user types can write nested objects and arrays without recursion into the heap.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "encode/record_input.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"
#include "record/buffer.hpp"

namespace fieldlog::detail {

class JsonEncoder final : public ValueEncoder {
public:
    static constexpr int kMaxDepth = 32;
    /// Written in place of a container nested deeper than kMaxDepth.
    static constexpr std::string_view kDepthPlaceholder = "\"[depth limit]\"";

    /// `scratch` is where fmt-formatted text is assembled before it is escaped.
    JsonEncoder(Buffer& out, Buffer& scratch, const EncoderOptions& options) noexcept
        : out_(out), scratch_(scratch), options_(options) {}

    /// Appends one whole record, ending in '\n'.
    void record(const RecordInput& record);
    /// Appends `,"key":value` for each field (the form bound and scope fields are kept in).
    void fields(std::span<const Field> fields);

    void value(const Value& v) override;
    void begin_array() override;
    void end_array() override;
    void begin_object() override;
    void key(std::string_view k) override;
    void end_object() override;
    void formatted(fmt::string_view format, fmt::format_args args) override;

private:
    bool begin_value();
    void write_value(const Value& v);
    bool open(char bracket, bool is_array);
    void close(char bracket);
    void write_timestamp(Timestamp t);

    Buffer& out_;
    Buffer& scratch_;
    const EncoderOptions& options_;
    int depth_ = 0;
    int ignored_ = 0;  ///< containers being skipped (too deep, or a value without a key)
    bool after_key_ = false;
    bool is_array_[kMaxDepth + 1] = {};
    bool has_items_[kMaxDepth + 1] = {};
};

}  // namespace fieldlog::detail

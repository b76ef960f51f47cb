// SPDX-License-Identifier: MIT
// The key=value encoders: logfmt (`ts=… level=info logger=http msg="request done" status=200`)
// and, built on the same field writer, the console format (console_encoder.hpp). Scalars are
// written bare and quoted only when the logfmt convention needs it (empty, space, '=', '"',
// control characters, invalid UTF-8); nested objects and arrays are written as compact JSON
// by an embedded JsonEncoder (quoted as one logfmt value when needed).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/buffer.hpp"
#include "encode/json_encoder.hpp"
#include "encode/members.hpp"
#include "base/record.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {

/// Writes ` key=value` members; LogfmtEncoder and ConsoleEncoder add the record around them.
class KeyValueEncoder : public ValueEncoder {
public:
    /// Appends `parent` then ` key=value` for each field (the form bound and scope fields are
    /// kept in), keys made unique; members() then describes the run.
    void fields(const Segment& parent, std::span<const Field> fields);
    [[nodiscard]] const MemberIndex& members() const noexcept { return members_; }

    void value(const Value& v) final;
    void begin_array() final;
    void end_array() final;
    void begin_object() final;
    void key(std::string_view k) final;
    void end_object() final;
    void formatted(fmt::string_view format, fmt::format_args args) final;

protected:
    /// `console`: nested JSON stays bare, C1 controls are escaped too (a terminal reads it),
    /// keys are dim with colour and a string value's lines go on lines of their own.
    KeyValueEncoder(Buffer& out, Buffer& scratch, const EncoderOptions& options, bool console) noexcept
        : out_(out),
          scratch_(scratch),
          options_(options),
          console_(console),
          dim_keys_(console && options.colour),
          members_(out),
          json_(out, scratch, options) {}
    ~KeyValueEncoder() = default;

    /// The members of a record: bound, scope, then call fields, keys unique.
    void record_fields(const Record& record, const EncodedContexts& context);
    /// Writes `text` bare, or quoted and escaped when the logfmt convention needs quotes.
    void text_value(std::string_view text);
    /// The record's own time (the thread's clock cache).
    void write_timestamp(Timestamp t);
    /// A time value in a field (the thread's field-value cache).
    void write_time_value(Timestamp t);

    Buffer& out_;
    Buffer& scratch_;
    const EncoderOptions& options_;

private:
    /// The call's own members the options ask for: caller (and function), tid.
    void write_call_facts(const Record& record);
    void write_fields(std::span<const Field> fields);
    void write_scalar(const Value& v);
    void begin_nested();
    void end_nested();
    /// A console string value holding line breaks: quoted and escaped, each break a new line
    /// after the indent.
    void multi_line_value(std::string_view text);

    bool console_;
    bool dim_keys_;  ///< console with colour: ` \x1b[2mkey=\x1b[0mvalue`
    MemberIndex members_;
    JsonEncoder json_;        ///< writes nested containers
    bool in_nested_ = false;  ///< json_ is writing a container
    std::size_t nested_start_ = 0;
    bool nested_keyless_ = false;  ///< a container with no key: dropped when it ends
    bool after_key_ = false;
};

class LogfmtEncoder final : public KeyValueEncoder {
public:
    LogfmtEncoder(Buffer& out, Buffer& scratch, const EncoderOptions& options) noexcept
        : KeyValueEncoder(out, scratch, options, false) {}

    /// Appends one whole record, ending in '\n', through an encoder of its own: the record
    /// path's one frame in the encoder (record() is inlined into it).
    static void write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options, const Record& record,
                             const EncodedContexts& context);

private:
    /// write_record()'s body.
    void record(const Record& record, const EncodedContexts& context);
};

/// Appends `key` as a logfmt key: bytes that would end or break it (space, '=', '"', control
/// and C1 control characters, invalid UTF-8) become '_'; an empty key is "_".
void append_logfmt_key(Buffer& out, std::string_view key);

/// True when `text` must be quoted to be one logfmt value.
bool logfmt_needs_quotes(std::string_view text, bool escape_c1) noexcept;

/// Appends `text` escaped like a JSON string body, with U+0080–U+009F escaped too when
/// `escape_c1` (terminals may act on them).
void append_escaped(Buffer& out, std::string_view text, bool escape_c1);

}  // namespace fieldlog::detail

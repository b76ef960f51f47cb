// SPDX-License-Identifier: MIT
// The OTLP encoder (otlp_encoder.hpp). One value writer serves both encodings: the generic part
// walks values (fields, nested objects and arrays, a user type's encoder calls) and decides
// each one's OTLP kind; a format part (ProtoFormat, JsonFormat) writes the bytes. Everything goes
// into buffers the encoder keeps, so a record allocates nothing once they have grown.
#include "otlp_encoder.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "base/platform.hpp"
#include "base/value_calls.hpp"
#include "encode/text.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {
namespace {

// ---- text --------------------------------------------------------------------------------


std::size_t repaired_size(std::string_view s) {
    std::size_t size = 0;
    for_each_repaired_run(s, [&](std::string_view run) { size += run.size(); });
    return size;
}

constexpr char kHexDigits[] = "0123456789abcdef";

/// The value of `text`, `digits` lower-case hex digits (the W3C form), into `out`; false when
/// it is not of that form.
bool parse_hex(std::string_view text, std::size_t digits, unsigned char* out) noexcept {
    if (text.size() != digits) return false;
    for (std::size_t i = 0; i < digits; i += 2) {
        unsigned value = 0;
        for (std::size_t j = i; j < i + 2; ++j) {
            const char c = text[j];
            const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (digit < 0) return false;
            value = value * 16 + static_cast<unsigned>(digit);
        }
        out[i / 2] = static_cast<unsigned char>(value);
    }
    return true;
}

bool all_zero(const unsigned char* bytes, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        if (bytes[i] != 0) return false;
    }
    return true;
}

/// The data model's number for a level: the first of its range (trace 1 … fatal 21).
int severity_number(Level level) noexcept {
    return level >= Level::off ? 0 : 1 + 4 * static_cast<int>(level);
}

/// Nanoseconds since the epoch as OTLP's unsigned field holds them: 0 (unknown) before 1970,
/// the largest value past 2554.
std::uint64_t unix_nanos(Timestamp t) noexcept {
    if (t.seconds < 0) return 0;
    const auto seconds = static_cast<std::uint64_t>(t.seconds);
    constexpr std::uint64_t kMaxSeconds = std::numeric_limits<std::uint64_t>::max() / 1'000'000'000 - 1;
    if (seconds > kMaxSeconds) return std::numeric_limits<std::uint64_t>::max();
    return seconds * 1'000'000'000 + t.nanos;
}

// ---- protobuf ----------------------------------------------------------------------------

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

std::size_t varint_size(std::uint64_t v) noexcept {
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

char* put_varint(char* o, std::uint64_t v) noexcept {
    while (v >= 0x80) {
        *o++ = static_cast<char>(v | 0x80);
        v >>= 7;
    }
    *o++ = static_cast<char>(v);
    return o;
}

void varint(Buffer& out, std::uint64_t v) { out.commit(put_varint(out.reserve(10), v)); }
void tag(Buffer& out, std::uint32_t field, WireType type) { varint(out, (field << 3) | type); }

void fixed64(Buffer& out, std::uint32_t field, std::uint64_t v) {
    tag(out, field, kFixed64);
    char* o = out.reserve(8);
    for (int i = 0; i < 8; ++i) o[i] = static_cast<char>(v >> (8 * i));
    out.commit(o + 8);
}

void fixed32(Buffer& out, std::uint32_t field, std::uint32_t v) {
    tag(out, field, kFixed32);
    char* o = out.reserve(4);
    for (int i = 0; i < 4; ++i) o[i] = static_cast<char>(v >> (8 * i));
    out.commit(o + 4);
}

void bytes_field(Buffer& out, std::uint32_t field, std::string_view bytes) {
    tag(out, field, kLengthDelimited);
    varint(out, bytes.size());
    out.append(bytes);
}

/// A `string` field: protobuf requires UTF-8, so ill-formed sequences become U+FFFD.
void string_field(Buffer& out, std::uint32_t field, std::string_view text) {
    tag(out, field, kLengthDelimited);
    const std::size_t size = repaired_size(text);
    varint(out, size);
    if (size == text.size()) {
        out.append(text);
        return;
    }
    for_each_repaired_run(text, [&](std::string_view run) { out.append(run); });
}

/// Opens a nested message: its length, unknown yet, takes one byte for now; returns where the
/// message's bytes start, for close_message().
std::size_t open_message(Buffer& out, std::uint32_t field) {
    tag(out, field, kLengthDelimited);
    out.push_back('\0');
    return out.size();
}

/// Writes the length of the message opened at `start`, moving its bytes up when the length
/// needs more than the one byte kept for it.
void close_message(Buffer& out, std::size_t start) {
    const std::size_t length = out.size() - start;
    const std::size_t extra = varint_size(length) - 1;
    if (extra > 0) {
        out.reserve(extra);
        std::memmove(out.data() + start + extra, out.data() + start, length);
        out.resize(out.size() + extra);
    }
    put_varint(out.data() + start - 1, length);
}

// Field numbers of opentelemetry/proto/{logs,common,resource}/v1.
namespace pb {
constexpr std::uint32_t kRequestResourceLogs = 1;
constexpr std::uint32_t kResourceLogsResource = 1, kResourceLogsScopeLogs = 2;
constexpr std::uint32_t kResourceAttributes = 1;
constexpr std::uint32_t kScopeLogsScope = 1, kScopeLogsLogRecords = 2;
constexpr std::uint32_t kScopeName = 1;
constexpr std::uint32_t kTime = 1, kSeverityNumber = 2, kSeverityText = 3, kBody = 5, kAttributes = 6, kFlags = 8,
                        kTraceId = 9, kSpanId = 10, kObservedTime = 11;
constexpr std::uint32_t kString = 1, kBool = 2, kInt = 3, kDouble = 4, kArray = 5, kKvlist = 6, kBytes = 7;
constexpr std::uint32_t kListValues = 1;  // ArrayValue.values, KeyValueList.values
constexpr std::uint32_t kKey = 1, kValue = 2;
}  // namespace pb

/// The protobuf form of AnyValue and KeyValue.
struct ProtoFormat {
    using Mark = std::size_t;
    static constexpr Mark kNone = 0;

    static void separator(Buffer&, bool) {}
    /// A KeyValue in a repeated field `field` (attributes, a kvlist's values), up to its value.
    static Mark open_member(Buffer& out, std::uint32_t field, std::string_view key) {
        const Mark member = open_message(out, field);
        string_field(out, pb::kKey, key);
        return member;
    }
    static void close_member(Buffer& out, Mark member) { close_message(out, member); }
    /// An AnyValue: a KeyValue's value (in_array false) or an ArrayValue's element.
    static Mark open_any(Buffer& out, bool in_array) { return open_message(out, in_array ? pb::kListValues : pb::kValue); }
    static void close_any(Buffer& out, Mark any) { close_message(out, any); }
    static Mark begin_kvlist(Buffer& out) { return open_message(out, pb::kKvlist); }
    static void end_kvlist(Buffer& out, Mark list) { close_message(out, list); }
    static Mark begin_array(Buffer& out) { return open_message(out, pb::kArray); }
    static void end_array(Buffer& out, Mark list) { close_message(out, list); }

    static void null(Buffer&) {}  // an AnyValue with no value set
    static void boolean(Buffer& out, bool b) {
        tag(out, pb::kBool, kVarint);
        out.push_back(b ? '\1' : '\0');
    }
    static void int64(Buffer& out, std::int64_t v) {
        tag(out, pb::kInt, kVarint);
        varint(out, static_cast<std::uint64_t>(v));
    }
    static void float64(Buffer& out, double v) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        fixed64(out, pb::kDouble, bits);
    }
    static void string(Buffer& out, std::string_view s) { string_field(out, pb::kString, s); }
    static void bytes(Buffer& out, std::span<const std::byte> b) {
        bytes_field(out, pb::kBytes, {reinterpret_cast<const char*>(b.data()), b.size()});
    }
};

// ---- JSON ----------------------------------------------------------------------------------

/// OTLP/JSON's form of AnyValue and KeyValue (proto3's JSON mapping, lowerCamelCase names).
struct JsonFormat {
    using Mark = std::size_t;
    static constexpr Mark kNone = 0;

    static void separator(Buffer& out, bool first) {
        if (!first) out.push_back(',');
    }
    static Mark open_member(Buffer& out, std::uint32_t, std::string_view key) {
        out.append("{\"key\":");
        append_json_string(out, key);
        out.append(",\"value\":");
        return kNone;
    }
    static void close_member(Buffer& out, Mark) { out.push_back('}'); }
    static Mark open_any(Buffer& out, bool) {
        out.push_back('{');
        return kNone;
    }
    static void close_any(Buffer& out, Mark) { out.push_back('}'); }
    static Mark begin_kvlist(Buffer& out) {
        out.append("\"kvlistValue\":{\"values\":[");
        return kNone;
    }
    static void end_kvlist(Buffer& out, Mark) { out.append("]}"); }
    static Mark begin_array(Buffer& out) {
        out.append("\"arrayValue\":{\"values\":[");
        return kNone;
    }
    static void end_array(Buffer& out, Mark) { out.append("]}"); }

    static void null(Buffer&) {}
    static void boolean(Buffer& out, bool b) { out.append(b ? "\"boolValue\":true" : "\"boolValue\":false"); }
    static void int64(Buffer& out, std::int64_t v) {
        out.append("\"intValue\":\"");
        append_int(out, v);
        out.push_back('"');
    }
    static void float64(Buffer& out, double v) {
        out.append("\"doubleValue\":");
        if (std::isfinite(v)) {
            append_double(out, v);
        } else {
            out.append(std::isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        }
    }
    static void string(Buffer& out, std::string_view s) {
        out.append("\"stringValue\":");
        append_json_string(out, s);
    }
    static void bytes(Buffer& out, std::span<const std::byte> b) {
        out.append("\"bytesValue\":\"");
        append_base64(out, b);
        out.push_back('"');
    }
};

// ---- values --------------------------------------------------------------------------------

/// Whether fields[i] is followed, in `fields`, by one of the same key: then the later one is
/// the member (field.hpp's rule: a key written again replaces the earlier member).
bool replaced_later(std::span<const Field> fields, std::size_t i) noexcept {
    for (std::size_t j = i + 1; j < fields.size(); ++j) {
        if (fields[j].key == fields[i].key) return true;
    }
    return false;
}

/// Writes values as AnyValue contents in Format. A user type's calls (ValueEncoder) are taken
/// as a stream: each opens the slot its container needs (an array element, a kvlist member);
/// calls out of order are ignored, as a value at the top after the first.
template <typename Format>
class ValueWriter final : public ValueEncoder {
public:
    using Mark = typename Format::Mark;

    ValueWriter(Buffer& out, Buffer& scratch) : out_(out), scratch_(scratch) { frames_.reserve(32); }

    /// Durations and times as `options` (the sink's, as configure() worked them out) say; the
    /// defaults without them.
    void use(const EncoderOptions* options) noexcept {
        duration_ = options != nullptr ? options->duration : DurationFormat::string;
        timestamp_ = options != nullptr ? options->timestamp : TimestampFormat{};
    }

    /// The AnyValue contents of `v` (the AnyValue is open).
    void contents(const Value& v) {
        switch (v.kind()) {
            case Value::Kind::null: Format::null(out_); return;
            case Value::Kind::boolean: Format::boolean(out_, v.as_bool()); return;
            case Value::Kind::int64: Format::int64(out_, v.as_int64()); return;
            case Value::Kind::uint64: unsigned_integer(v.as_uint64()); return;
            case Value::Kind::float64: Format::float64(out_, v.as_double()); return;
            case Value::Kind::string: Format::string(out_, v.as_string()); return;
            case Value::Kind::duration: duration(v.as_duration_nanos()); return;
            case Value::Kind::time: time(v.as_time()); return;
            case Value::Kind::error_code:
                scratch_.clear();
                append_error_code(scratch_, v.as_error_code());
                Format::string(out_, scratch_.view());
                return;
            case Value::Kind::bytes: Format::bytes(out_, v.as_bytes()); return;
            case Value::Kind::object: object(v.as_object()); return;
            case Value::Kind::array: array(v.as_array()); return;
            case Value::Kind::custom: custom(v); return;
        }
        Format::null(out_);  // a kind past the list: null, as the other encoders write it
    }

    /// A KeyValue in the repeated field `field` of the message being written.
    void member(std::uint32_t field, std::string_view key, const Value& v, bool first) {
        Format::separator(out_, first);
        const Mark m = Format::open_member(out_, field, key);
        const Mark any = Format::open_any(out_, false);
        contents(v);
        Format::close_any(out_, any);
        Format::close_member(out_, m);
    }

    // ValueEncoder: a user type's calls.
    void value(const Value& v) override {
        Slot slot;
        if (!enter(slot)) return;
        contents(v);
        leave(slot);
    }
    void begin_array() override { begin(Frame::Kind::array); }
    void end_array() override { end(Frame::Kind::array); }
    void begin_object() override { begin(Frame::Kind::object); }
    void key(std::string_view k) override {
        key_.clear();
        key_.append(k);
    }
    void end_object() override { end(Frame::Kind::object); }
    void formatted(fmt::string_view format, fmt::format_args args) override {
        Slot slot;
        if (!enter(slot)) return;
        scratch_.clear();
        fmt::vformat_to(std::back_inserter(scratch_), format, args);
        Format::string(out_, scratch_.view());
        leave(slot);
    }

private:
    struct Slot {
        Mark member = Format::kNone;
        Mark any = Format::kNone;
        bool has_member = false;
        bool has_any = false;
    };
    struct Frame {
        enum class Kind : std::uint8_t { root, array, object, ignored } kind;
        bool first = true;       ///< no element written yet (root: no value yet)
        Mark list = Format::kNone;
        Slot slot{};             ///< what the container sits in
    };

    void unsigned_integer(std::uint64_t v) {
        if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            Format::int64(out_, static_cast<std::int64_t>(v));
            return;
        }
        // AnyValue has no unsigned integer: one past int64's range keeps its exact digits.
        scratch_.clear();
        append_uint(scratch_, v);
        Format::string(out_, scratch_.view());
    }

    void duration(std::int64_t nanos) {
        switch (duration_) {
            case DurationFormat::nanos: Format::int64(out_, nanos); return;
            case DurationFormat::seconds: Format::float64(out_, static_cast<double>(nanos) / 1e9); return;
            case DurationFormat::string:
            case DurationFormat::string_ascii:
                scratch_.clear();
                if (duration_ == DurationFormat::string) {
                    append_go_duration(scratch_, nanos);
                } else {
                    append_go_duration_ascii(scratch_, nanos);
                }
                Format::string(out_, scratch_.view());
                return;
        }
    }

    void time(Timestamp t) {
        if (timestamp_.precision == TimestampPrecision::unix_seconds_float) {
            Format::float64(out_, static_cast<double>(t.seconds) + static_cast<double>(t.nanos) / 1e9);
            return;
        }
        char text[max_rfc3339_size];
        const char* end = append_rfc3339_value(text, t, timestamp_);
        const std::string_view written(text, static_cast<std::size_t>(end - text));
        if (timestamp_.precision == TimestampPrecision::unix_nanos) {
            std::int64_t nanos = 0;
            const auto [at, error] = std::from_chars(written.data(), written.data() + written.size(), nanos);
            if (error == std::errc() && at == written.data() + written.size()) {
                Format::int64(out_, nanos);
                return;
            }
        }
        Format::string(out_, written);
    }

    void object(std::span<const Field> fields) {
        const Mark list = Format::begin_kvlist(out_);
        bool first = true;
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (replaced_later(fields, i)) continue;
            member(pb::kListValues, fields[i].key, fields[i].value, first);
            first = false;
        }
        Format::end_kvlist(out_, list);
    }

    void array(std::span<const Value> values) {
        const Mark list = Format::begin_array(out_);
        bool first = true;
        for (const Value& element : values) {
            Format::separator(out_, first);
            first = false;
            const Mark any = Format::open_any(out_, true);
            contents(element);
            Format::close_any(out_, any);
        }
        Format::end_array(out_, list);
    }

    /// A user type, container or fmt-formattable value: its calls fill the open AnyValue.
    void custom(const Value& v) {
        const std::size_t depth = frames_.size();
        frames_.push_back(Frame{.kind = Frame::Kind::root});
        write_as_calls(*this, v);
        while (frames_.size() > depth + 1) close_top();  // containers the type left open
        const bool empty = frames_.back().first;
        frames_.pop_back();
        if (empty) Format::null(out_);
    }

    /// Opens the slot for the next value in the innermost container; false when the value is
    /// to be ignored.
    bool enter(Slot& slot) {
        if (frames_.empty()) return false;
        Frame& in = frames_.back();
        switch (in.kind) {
            case Frame::Kind::ignored: return false;
            case Frame::Kind::root:
                if (!in.first) return false;
                in.first = false;
                return true;
            case Frame::Kind::array:
                Format::separator(out_, in.first);
                in.first = false;
                slot.any = Format::open_any(out_, true);
                slot.has_any = true;
                return true;
            case Frame::Kind::object:
                Format::separator(out_, in.first);
                in.first = false;
                slot.member = Format::open_member(out_, pb::kListValues, key_.view());
                slot.has_member = true;
                slot.any = Format::open_any(out_, false);
                slot.has_any = true;
                return true;
        }
        return false;
    }

    void leave(const Slot& slot) {
        if (slot.has_any) Format::close_any(out_, slot.any);
        if (slot.has_member) Format::close_member(out_, slot.member);
    }

    void begin(typename Frame::Kind kind) {
        Slot slot;
        if (!enter(slot)) {
            frames_.push_back(Frame{.kind = Frame::Kind::ignored});
            return;
        }
        const Mark list = kind == Frame::Kind::array ? Format::begin_array(out_) : Format::begin_kvlist(out_);
        frames_.push_back(Frame{.kind = kind, .first = true, .list = list, .slot = slot});
    }

    void end(typename Frame::Kind kind) {
        if (frames_.empty()) return;
        const Frame& top = frames_.back();
        if (top.kind == Frame::Kind::ignored) {
            frames_.pop_back();
            return;
        }
        if (top.kind == kind) close_top();
    }

    void close_top() {
        const Frame top = frames_.back();
        frames_.pop_back();
        if (top.kind == Frame::Kind::array) Format::end_array(out_, top.list);
        if (top.kind == Frame::Kind::object) Format::end_kvlist(out_, top.list);
        leave(top.slot);
    }

    Buffer& out_;
    Buffer& scratch_;
    DurationFormat duration_ = DurationFormat::string;
    TimestampFormat timestamp_{};
    std::vector<Frame> frames_;
    Buffer key_;
};

// ---- records -------------------------------------------------------------------------------

/// The record's field lists as written: bound, scope, the call's.
std::array<std::span<const Field>, 3> field_lists(const RecordView& r) noexcept { return {r.bound, r.scope, r.fields}; }

/// The trace context a record's scope fields hold in the W3C form (Scope{TraceContext}).
struct TraceContextFields {
    unsigned char trace_id[16]{};
    unsigned char span_id[8]{};
    unsigned char flags = 0;
    const Field* trace_field = nullptr;  ///< the scope fields they came from (nullptr: none)
    const Field* span_field = nullptr;
    const Field* flags_field = nullptr;

    [[nodiscard]] bool lifted(const Field* f) const noexcept { return f == trace_field || f == span_field || f == flags_field; }
};

/// The scope's trace_id, span_id and trace_flags, when they have the W3C form (ids not all
/// zeros); the innermost scope's win. Fields of those names elsewhere stay attributes.
TraceContextFields find_trace_context(std::span<const Field> scope) noexcept {
    TraceContextFields found;
    for (const Field& f : scope) {
        if (f.value.kind() != Value::Kind::string) continue;
        const std::string_view text = f.value.as_string();
        if (f.key == "trace_id") {
            unsigned char id[16];
            if (parse_hex(text, 32, id) && !all_zero(id, 16)) {
                std::memcpy(found.trace_id, id, 16);
                found.trace_field = &f;
            }
        } else if (f.key == "span_id") {
            unsigned char id[8];
            if (parse_hex(text, 16, id) && !all_zero(id, 8)) {
                std::memcpy(found.span_id, id, 8);
                found.span_field = &f;
            }
        } else if (f.key == "trace_flags") {
            unsigned char flags = 0;
            if (parse_hex(text, 2, &flags)) {
                found.flags = flags;
                found.flags_field = &f;
            }
        }
    }
    return found;
}

/// Whether a field of the record other than the lifted trace context has the key `key`.
bool has_field(const RecordView& r, const TraceContextFields& trace, std::string_view key) noexcept {
    for (const std::span<const Field> list : field_lists(r)) {
        for (const Field& f : list) {
            if (f.key == key && !trace.lifted(&f)) return true;
        }
    }
    return false;
}

/// The record's attributes in order, each key once: the call's facts the sink asks for, under
/// the semantic conventions' keys, then bound, scope and call fields, a later one replacing an
/// earlier one of the same key, the lifted trace context left out. Calls
/// on_member(key, value, first) for each.
template <typename OnMember>
void for_each_attribute(const RecordView& r, const TraceContextFields& trace, OnMember&& on_member) {
    bool first = true;
    const auto member = [&](std::string_view key, const Value& value) {
        on_member(key, value, first);
        first = false;
    };
    const std::uint8_t facts = r.options != nullptr ? r.options->call_facts : 0;
    if (facts != 0) [[unlikely]] {
        const SourceLocation where = r.message->where();
        const auto fact = [&](std::string_view key, const Value& value) {
            if (!has_field(r, trace, key)) member(key, value);
        };
        if ((facts & caller_fact) != 0) {
            fact("code.file.path", Value(std::string_view(where.file_name())));
            fact("code.line.number", Value(static_cast<std::int64_t>(where.line())));
            if ((facts & function_fact) != 0) fact("code.function.name", Value(std::string_view(where.function_name())));
        }
        if ((facts & thread_id_fact) != 0) fact("thread.id", Value(static_cast<std::int64_t>(r.thread_id)));
    }
    const auto lists = field_lists(r);
    for (std::size_t l = 0; l < 3; ++l) {
        for (std::size_t i = 0; i < lists[l].size(); ++i) {
            const Field& f = lists[l][i];
            if (trace.lifted(&f)) continue;
            bool replaced = false;
            for (std::size_t m = l; m < 3 && !replaced; ++m) {
                for (std::size_t j = m == l ? i + 1 : 0; j < lists[m].size(); ++j) {
                    if (lists[m][j].key == f.key && !trace.lifted(&lists[m][j])) {
                        replaced = true;
                        break;
                    }
                }
            }
            if (replaced) continue;
            member(f.key, f.value);
        }
    }
}

std::string_view hex(const unsigned char* bytes, std::size_t n, char* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        out[2 * i] = kHexDigits[bytes[i] >> 4];
        out[2 * i + 1] = kHexDigits[bytes[i] & 0xF];
    }
    return {out, 2 * n};
}

class Encoder final : public OtlpRecordEncoder {
public:
    explicit Encoder(const OtlpSinkOptions& options)
        : json_(options.encoding == OtlpEncoding::json),
          proto_values_(forward_, scratch_),
          json_values_(forward_, scratch_) {
        write_resource(options.resource);
    }

    std::string_view log_record(const RecordView& r) override {
        message_.clear();
        const Message& message = *r.message;
        if (message.formatted()) {
            fmt::vformat_to(std::back_inserter(message_), message.text(), message.args());
        } else {
            message_.append(message.text());
        }
        const TraceContextFields trace = find_trace_context(r.scope);
        forward_.clear();
        if (json_) {
            json_record(r, trace);
        } else {
            proto_record(r, trace);
        }
        return forward_.view();
    }

    void request(std::span<const LogRecordBytes> records, Buffer& out) override {
        if (json_) {
            json_request(records, out);
        } else {
            proto_request(records, out);
        }
    }

    [[nodiscard]] std::size_t request_bound(std::span<const LogRecordBytes> records) const noexcept override {
        // Per record: its bytes, its tag and length, and a ScopeLogs around it whose name may
        // grow sixfold (JSON escapes; U+FFFD for a bad byte in protobuf); a varint reserves 10.
        std::size_t bound = resource_.size() + 64;
        for (const LogRecordBytes& r : records) bound += r.log_record.size() + 6 * r.logger.size() + 64;
        return bound;
    }

    [[nodiscard]] std::int64_t rejected_records(std::string_view response) const noexcept override {
        return json_ ? json_rejected(response) : proto_rejected(response);
    }

    [[nodiscard]] std::string_view content_type() const noexcept override {
        return json_ ? "application/json" : "application/x-protobuf";
    }

private:
    void proto_record(const RecordView& r, const TraceContextFields& trace) {
        Buffer& b = forward_;
        const std::uint64_t time = unix_nanos(r.time);
        fixed64(b, pb::kTime, time);
        fixed64(b, pb::kObservedTime, time);
        tag(b, pb::kSeverityNumber, kVarint);
        varint(b, static_cast<std::uint64_t>(severity_number(r.level)));
        string_field(b, pb::kSeverityText, to_string(r.level));
        const std::size_t body = open_message(b, pb::kBody);
        string_field(b, pb::kString, message_.view());
        close_message(b, body);
        proto_values_.use(r.options);
        for_each_attribute(r, trace, [&](std::string_view key, const Value& value, bool first) {
            proto_values_.member(pb::kAttributes, key, value, first);
        });
        if (trace.trace_field != nullptr) bytes_field(b, pb::kTraceId, {reinterpret_cast<const char*>(trace.trace_id), 16});
        if (trace.span_field != nullptr) bytes_field(b, pb::kSpanId, {reinterpret_cast<const char*>(trace.span_id), 8});
        if (trace.flags_field != nullptr) fixed32(b, pb::kFlags, trace.flags);
    }

    void json_record(const RecordView& r, const TraceContextFields& trace) {
        Buffer& b = forward_;
        const std::uint64_t time = unix_nanos(r.time);
        b.append("{\"timeUnixNano\":\"");
        append_uint(b, time);
        b.append("\",\"observedTimeUnixNano\":\"");
        append_uint(b, time);
        b.append("\",\"severityNumber\":");
        append_int(b, severity_number(r.level));
        b.append(",\"severityText\":\"");
        b.append(to_string(r.level));
        b.append("\",\"body\":{\"stringValue\":");
        append_json_string(b, message_.view());
        b.append("},\"attributes\":[");
        json_values_.use(r.options);
        for_each_attribute(r, trace, [&](std::string_view key, const Value& value, bool first) {
            json_values_.member(pb::kAttributes, key, value, first);
        });
        b.push_back(']');
        char text[32];
        if (trace.flags_field != nullptr) {
            b.append(",\"flags\":");
            append_uint(b, trace.flags);
        }
        if (trace.trace_field != nullptr) {
            b.append(",\"traceId\":\"");
            b.append(hex(trace.trace_id, 16, text));
            b.push_back('"');
        }
        if (trace.span_field != nullptr) {
            b.append(",\"spanId\":\"");
            b.append(hex(trace.span_id, 8, text));
            b.push_back('"');
        }
        b.push_back('}');
    }

    void write_resource(const std::vector<ResourceAttribute>& attributes) {
        std::vector<ResourceAttribute> resource = attributes;
        const bool named = std::any_of(resource.begin(), resource.end(),
                                       [](const ResourceAttribute& a) { return a.key == "service.name"; });
        if (!named) resource.insert(resource.begin(), ResourceAttribute{"service.name", unknown_service_name()});
        const auto value_of = [](const ResourceAttribute& a) {
            return std::visit(
                [](const auto& v) -> Value {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::string>) {
                        return Value(std::string_view(v));
                    } else {
                        return Value(v);
                    }
                },
                a.value);
        };
        // Protobuf: the whole `resource` field of ResourceLogs; JSON: `"resource":{…}`.
        forward_.clear();
        if (json_) {
            forward_.append("\"resource\":{\"attributes\":[");
            bool first = true;
            for (const ResourceAttribute& a : resource) {
                json_values_.member(pb::kResourceAttributes, a.key, value_of(a), first);
                first = false;
            }
            forward_.append("]}");
        } else {
            const std::size_t start = open_message(forward_, pb::kResourceLogsResource);
            for (const ResourceAttribute& a : resource) proto_values_.member(pb::kResourceAttributes, a.key, value_of(a), true);
            close_message(forward_, start);
        }
        resource_.assign(forward_.data(), forward_.size());
    }

    void proto_request(std::span<const LogRecordBytes> records, Buffer& out) {
        const std::size_t resource_logs = open_message(out, pb::kRequestResourceLogs);
        out.append(resource_);
        std::size_t i = 0;
        while (i < records.size()) {
            const std::string_view logger = records[i].logger;
            const std::size_t scope_logs = open_message(out, pb::kResourceLogsScopeLogs);
            const std::size_t scope = open_message(out, pb::kScopeLogsScope);
            if (!logger.empty()) string_field(out, pb::kScopeName, logger);
            close_message(out, scope);
            for (; i < records.size() && records[i].logger == logger; ++i) {
                bytes_field(out, pb::kScopeLogsLogRecords, records[i].log_record);
            }
            close_message(out, scope_logs);
        }
        close_message(out, resource_logs);
    }

    void json_request(std::span<const LogRecordBytes> records, Buffer& out) {
        out.append("{\"resourceLogs\":[{");
        out.append(resource_);
        out.append(",\"scopeLogs\":[");
        std::size_t i = 0;
        while (i < records.size()) {
            const std::string_view logger = records[i].logger;
            if (i > 0) out.push_back(',');
            out.append("{\"scope\":{\"name\":");
            append_json_string(out, logger);
            out.append("},\"logRecords\":[");
            for (const std::size_t first = i; i < records.size() && records[i].logger == logger; ++i) {
                if (i > first) out.push_back(',');
                out.append(records[i].log_record);
            }
            out.append("]}");
        }
        out.append("]}]}");
    }

    /// ExportLogsServiceResponse.partial_success (1).rejected_log_records (1).
    static std::int64_t proto_rejected(std::string_view response) noexcept {
        std::int64_t rejected = 0;
        for_each_field(response, [&](std::uint32_t field, std::uint64_t, std::string_view message) {
            if (field != 1) return;
            for_each_field(message, [&](std::uint32_t inner, std::uint64_t number, std::string_view) {
                if (inner == 1) rejected = static_cast<std::int64_t>(number);
            });
        });
        return rejected;
    }

    /// Calls on_field(number, varint value, length-delimited bytes) for each field of a
    /// protobuf message; stops at the first malformed one.
    template <typename OnField>
    static void for_each_field(std::string_view message, OnField&& on_field) noexcept {
        std::size_t i = 0;
        const auto read_varint = [&](std::uint64_t& v) {
            v = 0;
            for (int shift = 0; shift < 64 && i < message.size(); shift += 7) {
                const auto byte = static_cast<unsigned char>(message[i++]);
                v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
                if ((byte & 0x80) == 0) return true;
            }
            return false;
        };
        while (i < message.size()) {
            std::uint64_t key = 0;
            if (!read_varint(key)) return;
            const auto field = static_cast<std::uint32_t>(key >> 3);
            switch (key & 7) {
                case kVarint: {
                    std::uint64_t v = 0;
                    if (!read_varint(v)) return;
                    on_field(field, v, {});
                    break;
                }
                case kFixed64: i += 8; break;
                case kFixed32: i += 4; break;
                case kLengthDelimited: {
                    std::uint64_t length = 0;
                    if (!read_varint(length) || length > message.size() - i) return;
                    on_field(field, 0, message.substr(i, length));
                    i += length;
                    break;
                }
                default: return;
            }
        }
    }

    /// `"rejectedLogRecords":"N"` (or a number) in the response.
    static std::int64_t json_rejected(std::string_view response) noexcept {
        constexpr std::string_view kKey = "\"rejectedLogRecords\"";
        std::size_t at = response.find(kKey);
        if (at == std::string_view::npos) return 0;
        at += kKey.size();
        while (at < response.size() && (response[at] == ' ' || response[at] == ':' || response[at] == '"')) ++at;
        std::int64_t rejected = 0;
        std::from_chars(response.data() + at, response.data() + response.size(), rejected);
        return rejected;
    }

    bool json_;
    Buffer forward_;  ///< the record (or the resource) being written: the value writers write here
    Buffer scratch_;  ///< a value's text (a duration, an error code, a formatted string)
    Buffer message_;  ///< the record's message, formatted
    std::string resource_;
    ValueWriter<ProtoFormat> proto_values_;
    ValueWriter<JsonFormat> json_values_;
};

}  // namespace

std::unique_ptr<OtlpRecordEncoder> make_otlp_encoder(const OtlpSinkOptions& options) {
    return std::make_unique<Encoder>(options);
}

}  // namespace fieldlog::detail

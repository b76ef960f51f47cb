// SPDX-License-Identifier: MIT
#include "encode/otel_encoder.hpp"

#include <array>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <variant>

#include "base/thread_id.hpp"
#include "encode/message_text.hpp"
#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

/// OTLP/JSON's form of a time: nanoseconds since the epoch, a decimal string (a JSON number
/// that large loses digits in readers that hold numbers as doubles).
constexpr TimestampFormat kUnixNanos{.precision = TimestampPrecision::unix_nanos};

/// `","severity_text":"<name>","severity_number":<n>,"body":"` for each level: the first of
/// each range in the data model's table (trace 1, debug 5, info 9, warn 13, error 17, fatal 21).
struct SeverityMembers {
    char text[64];
    std::size_t size;
};
constexpr std::array<SeverityMembers, level_count> kSeverityMembers = [] {
    std::array<SeverityMembers, level_count> table{};
    for (int i = 0; i < level_count; ++i) {
        const int number = static_cast<Level>(i) == Level::off ? 0 : 1 + 4 * i;
        const char digits[2] = {static_cast<char>('0' + number / 10), static_cast<char>('0' + number % 10)};
        const std::string_view parts[] = {"\",\"severity_text\":\"", to_string(static_cast<Level>(i)),
                                          "\",\"severity_number\":", std::string_view(digits + (number < 10 ? 1 : 0), number < 10 ? 1 : 2),
                                          ",\"body\":\""};
        SeverityMembers& members = table[static_cast<std::size_t>(i)];
        for (const std::string_view part : parts) {
            for (const char c : part) members.text[members.size++] = c;
        }
    }
    return table;
}();

/// The keys of a trace context's scope fields (Scope{TraceContext}), and their values' hex digits.
constexpr std::array<std::string_view, 3> kTraceKeys = {"trace_id", "span_id", "trace_flags"};
constexpr std::array<std::size_t, 3> kTraceDigits = {32, 16, 2};
constexpr std::uint64_t kTraceKeyBits = key_bit(key_tag(kTraceKeys[0].data(), kTraceKeys[0].size())) |
                                        key_bit(key_tag(kTraceKeys[1].data(), kTraceKeys[1].size())) |
                                        key_bit(key_tag(kTraceKeys[2].data(), kTraceKeys[2].size()));

/// `value` (a JSON value's bytes) is a string of `digits` lower-case hex digits, not all zero
/// unless `zero_allowed`: the W3C form of a trace id, span id or flags.
bool is_trace_hex(std::string_view value, std::size_t digits, bool zero_allowed) noexcept {
    if (value.size() != digits + 2 || value.front() != '"' || value.back() != '"') return false;
    bool zero = true;
    for (const char c : value.substr(1, digits)) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        zero = zero && c == '0';
    }
    return zero_allowed || !zero;
}

/// Which members of a scope's run hold its trace context (by index; count when absent).
struct TraceMembers {
    std::array<std::size_t, 3> index{};
    bool any = false;
};

TraceMembers find_trace_members(const EncodedContext& scope) noexcept {
    TraceMembers found;
    found.index.fill(scope.count);
    const SegmentMember* members = scope.members();
    for (std::size_t i = 0; i < scope.count; ++i) {
        const std::size_t key_start = members[i].start + OtelEncoder::kKeyOffset;
        const std::size_t end = i + 1 < scope.count ? members[i + 1].start : scope.size;
        const std::string_view key(scope.bytes() + key_start, members[i].key_len);
        for (std::size_t k = 0; k < kTraceKeys.size(); ++k) {
            if (key != kTraceKeys[k]) continue;
            const std::size_t value_start = key_start + key.size() + 2;  // after `":`
            const std::string_view value(scope.bytes() + value_start, end - value_start);
            if (is_trace_hex(value, kTraceDigits[k], k == 2)) {
                found.index[k] = i;
                found.any = true;
            }
        }
    }
    return found;
}

/// Member `i` of `scope`'s run, its leading separator included.
std::string_view member_bytes(const EncodedContext& scope, std::size_t i) noexcept {
    const SegmentMember* members = scope.members();
    const std::size_t end = i + 1 < scope.count ? members[i + 1].start : scope.size;
    return {scope.bytes() + members[i].start, end - members[i].start};
}

}  // namespace

inline void OtelEncoder::record(const Record& r, const EncodedContexts& context) {
    // `{"timestamp":"<ns>","observed_timestamp":"<ns>` : the record's time is both, as the data
    // model says of records made at their source.
    char* o = out_.reserve(2 * max_rfc3339_size + 40);
    std::memcpy(o, "{\"timestamp\":\"", 14);
    char* const time = o + 14;
    o = append_rfc3339(time, r.time, kUnixNanos);
    const auto time_size = static_cast<std::size_t>(o - time);
    std::memcpy(o, "\",\"observed_timestamp\":\"", 24);
    std::memmove(o + 24, time, time_size);
    out_.commit(o + 24 + time_size);
    const SeverityMembers& severity = kSeverityMembers[static_cast<std::size_t>(r.level)];
    out_.append(severity.text, severity.size);
    if (r.message.kind() != Message::Kind::plain) {
        scratch_.clear();
        append_message_text(scratch_, r.message, options_.redact);
        append_json_escaped(out_, scratch_.view());
        scratch_.shrink();
    } else {
        append_json_escaped(out_, r.message.text());
    }
    out_.push_back('"');

    TraceMembers trace;
    if (context.scope != nullptr && (context.scope->mask & kTraceKeyBits) != 0) [[unlikely]] {
        trace = find_trace_members(*context.scope);
        for (const std::size_t i : trace.index) {
            if (i < context.scope->count) out_.append(member_bytes(*context.scope, i));
        }
    }

    // Members with leading separators, as the JSON format's top level; the first one's comma
    // becomes the object's opening brace.
    out_.append(",\"attributes\":");
    const std::size_t attributes = out_.size();
    MemberIndex& index = attributes_.index();
    if (options_.call_facts != 0) [[unlikely]] write_call_facts(r);
    index.append_context(context.bound, kKeyOffset);
    if (!trace.any) {
        index.append_context(context.scope, kKeyOffset);
    } else {
        for (std::size_t i = 0; i < context.scope->count; ++i) {
            if (i == trace.index[0] || i == trace.index[1] || i == trace.index[2]) continue;
            const std::size_t member = out_.size();
            out_.append(member_bytes(*context.scope, i));
            index.add(member, 1, member + kKeyOffset, context.scope->members()[i].key_len);
        }
    }
    attributes_.top_fields(r.fields);
    if (out_.size() == attributes) {
        out_.append("{}");
    } else {
        out_.data()[attributes] = '{';
        out_.push_back('}');
    }

    write_resource();
    out_.append(",\"instrumentation_scope\":{\"name\":");
    append_json_string(out_, r.logger.name.text);
    out_.append("}}\n");
}

void OtelEncoder::write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options, const Record& record,
                               const EncodedContexts& context) {
    OtelEncoder(out, scratch, options).record(record, context);
}

void OtelEncoder::write_call_facts(const Record& r) {
    const SourceLocation where = r.message.where();
    MemberIndex& index = attributes_.index();
    // Each key written and reported before its value, as the JSON encoder does: a later field
    // with the same key replaces it.
    const auto key = [&](std::string_view member) {
        const std::size_t start = out_.size();
        out_.append(member);
        index.add(start, 1, start + kKeyOffset, member.size() - kKeyOffset - 2);
    };
    if ((options_.call_facts & caller_fact) != 0) {
        key(",\"code.file.path\":");
        append_json_string(out_, where.file_name());
        key(",\"code.line.number\":");
        append_uint(out_, where.line());
        if ((options_.call_facts & function_fact) != 0) {
            key(",\"code.function.name\":");
            append_json_string(out_, where.function_name());
        }
    }
    if ((options_.call_facts & thread_id_fact) != 0) {
        key(",\"thread.id\":");
        append_int(out_, r.thread_id != 0 ? r.thread_id : cached_thread_id());
    }
}

void OtelEncoder::write_resource() {
    out_.append(",\"resource\":{");
    bool first = true;
    for (const ResourceAttribute& attribute : options_.resource) {
        if (!first) out_.push_back(',');
        first = false;
        append_json_string(out_, attribute.key);
        out_.push_back(':');
        std::visit(
            [&](const auto& value) {
                using T = std::decay_t<decltype(value)>;
                if constexpr (std::is_same_v<T, std::string>) {
                    append_json_string(out_, value);
                } else if constexpr (std::is_same_v<T, bool>) {
                    out_.append(value ? "true" : "false");
                } else if constexpr (std::is_same_v<T, double>) {
                    // A float keeps a fraction (1.0, not 1), so a reader that types values by
                    // their text (the Go SDK's INT64 or FLOAT64) takes it as a float.
                    const std::size_t start = out_.size();
                    append_float_value(out_, value, "\"");
                    const std::string_view text(out_.data() + start, out_.size() - start);
                    if (text.find_first_not_of("-0123456789") == std::string_view::npos) out_.append(".0");
                } else {
                    append_int(out_, value);
                }
            },
            attribute.value);
    }
    out_.push_back('}');
}

}  // namespace fieldlog::detail

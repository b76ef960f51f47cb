// SPDX-License-Identifier: MIT
// logfmt, and the key=value field writer the console format shares: see logfmt_encoder.hpp.
#include "encode/logfmt_encoder.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "base/thread_id.hpp"
#include "encode/console_style.hpp"
#include "encode/message_text.hpp"
#include "encode/redact.hpp"
#include "encode/reserved_keys.hpp"
#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

// ASCII bytes that end or break a bare logfmt token: space and controls, '=', '"', DEL.
constexpr std::array<bool, 128> kBreaksToken = [] {
    std::array<bool, 128> table{};
    for (int c = 0; c <= 0x20; ++c) table[c] = true;
    table['='] = table['"'] = table[0x7F] = true;
    return table;
}();

constexpr char kHex[] = "0123456789abcdef";

/// Non-zero when one of the 8 bytes of `v` is not plain ASCII a bare token may hold (SWAR:
/// each test is exact about "some byte matches").
constexpr std::uint64_t token_breaks(std::uint64_t v) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    const auto zero_byte = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
    return ((v - ones * 0x21) & ~v & highs)                             // space and controls
           | zero_byte(v ^ (ones * '=')) | zero_byte(v ^ (ones * '"'))  // '=', '"'
           | zero_byte(v ^ (ones * 0x7F)) | (v & highs);                 // DEL, non-ASCII
}

/// True when every byte of p[0, n) is plain ASCII a bare logfmt token may hold: whole words,
/// the last one overlapping, so short keys and values need no byte loop.
bool all_bare_ascii(const unsigned char* p, std::size_t n) noexcept {
    const auto load = [p](std::size_t at, std::size_t size) {
        std::uint64_t v = 0;
        std::memcpy(&v, p + at, size);
        return v;
    };
    if (n >= 8) {
        for (std::size_t i = 0; i + 8 < n; i += 8) {
            if (token_breaks(load(i, 8)) != 0) return false;
        }
        return token_breaks(load(n - 8, 8)) == 0;
    }
    if (n >= 4) return token_breaks(load(0, 4) | (load(n - 4, 4) << 32)) == 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (p[i] >= 0x80 || kBreaksToken[p[i]]) return false;
    }
    return true;
}

bool is_c1(const unsigned char* p, std::size_t n) noexcept {
    return n >= 2 && p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
}

/// `\u00XX` for a control code point XX (DEL or C1).
void append_control_escape(Buffer& out, unsigned char code) {
    char* o = out.reserve(6);
    *o++ = '\\';
    *o++ = 'u';
    *o++ = '0';
    *o++ = '0';
    *o++ = kHex[code >> 4];
    *o++ = kHex[code & 0xF];
    out.commit(o);
}

/// For a terminal, DEL and the C1 controls are escaped as `\u00XX` too (JSON leaves them as
/// they are). Calls `append_run(from, to)` for each stretch of `text` between them. Neither
/// 0x7F nor 0xC2 ever continues a UTF-8 sequence, so cutting there keeps the replacement of
/// invalid sequences exactly as for the whole text.
template <class AppendRun>
void for_each_terminal_run(Buffer& out, std::string_view text, AppendRun append_run) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    std::size_t from = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const bool del = p[i] == 0x7F;
        if (del || is_c1(p + i, text.size() - i)) {
            append_run(from, i);
            append_control_escape(out, del ? p[i] : p[i + 1]);
            if (!del) ++i;
            from = i + 1;
        }
    }
    append_run(from, text.size());
}

}  // namespace

bool logfmt_needs_quotes(std::string_view text, bool escape_c1) noexcept {
    if (text.empty()) return true;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    if (all_bare_ascii(p, n)) return false;
    for (std::size_t i = 0; i < n;) {
        if (p[i] < 0x80) {
            if (kBreaksToken[p[i]]) return true;
            ++i;
            continue;
        }
        const int length = utf8_sequence(p + i, n - i);
        if (length < 0 || (escape_c1 && is_c1(p + i, n - i))) return true;
        i += static_cast<std::size_t>(length);
    }
    return false;
}

void append_escaped(Buffer& out, std::string_view text, bool escape_c1) {
    if (!escape_c1) {
        append_json_escaped(out, text);
        return;
    }
    for_each_terminal_run(out, text, [&out, text](std::size_t from, std::size_t to) {
        append_json_escaped(out, text.substr(from, to - from));
    });
}

void append_logfmt_key(Buffer& out, std::string_view key) {
    if (key.empty()) {
        out.push_back('_');
        return;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(key.data());
    const std::size_t n = key.size();
    if (all_bare_ascii(p, n)) {
        out.append(key);
        return;
    }
    for (std::size_t i = 0; i < n;) {
        std::size_t run = i;
        while (run < n && p[run] < 0x80 && !kBreaksToken[p[run]]) ++run;
        out.append(key.data() + i, run - i);
        i = run;
        if (i == n) break;
        if (p[i] < 0x80) {
            out.push_back('_');
            ++i;
            continue;
        }
        const int length = utf8_sequence(p + i, n - i);
        if (length < 0 || is_c1(p + i, n - i)) {
            out.push_back('_');
        } else {
            out.append(key.data() + i, static_cast<std::size_t>(length));
        }
        i += static_cast<std::size_t>(length < 0 ? -length : length);
    }
}

void KeyValueEncoder::fields(const Segment& parent, std::span<const Field> fields) {
    members_.append_segment(parent);
    write_fields(fields);
}

void KeyValueEncoder::record_fields(const Record& record, const EncodedContexts& context) {
    if (options_.call_facts != 0) [[unlikely]] write_call_facts(record);
    const std::uint8_t key_offset = console_key_offset(dim_keys_);
    members_.append_context(context.bound, key_offset);
    members_.append_context(context.scope, key_offset);
    write_fields(record.fields);
}

void KeyValueEncoder::write_call_facts(const Record& record) {
    const SourceLocation where = record.message.where();
    if ((options_.call_facts & caller_fact) != 0) {
        out_.append(" caller=");
        const std::string_view file = source_file_tail(where.file_name());
        char line[16];
        const auto end = fmt::format_to_n(line, sizeof line, ":{}", where.line());
        scratch_.clear();
        scratch_.append(file);
        scratch_.append(std::string_view(line, end.out));
        text_value(scratch_.view());
        scratch_.shrink();
        if ((options_.call_facts & function_fact) != 0) {
            out_.append(" function=");
            text_value(where.function_name());
        }
    }
    if ((options_.call_facts & thread_id_fact) != 0) {
        out_.append(" tid=");
        append_int(out_, record.thread_id != 0 ? record.thread_id : cached_thread_id());
    }
}

void KeyValueEncoder::write_fields(std::span<const Field> fields) {
    if (is_guarded(options_)) [[unlikely]] {
        // Under redaction rules or a cap: through a RedactingEncoder (redact.hpp).
        RedactingEncoder guard(*this, policy_of(options_, scratch_));
        for (const Field& f : fields) {
            guard.key(f.key);
            guard.value(f.value);
        }
    } else {
        for (const Field& f : fields) {
            key(f.key);
            value(f.value);
        }
    }
    if (after_key_) {  // a custom value wrote nothing
        out_.append("null");
        after_key_ = false;
    }
}

void KeyValueEncoder::key(std::string_view k) {
    if (in_nested_) {
        json_.key(k);
        return;
    }
    if (after_key_) out_.append("null");  // the previous key got no value
    const std::size_t start = out_.size();
    out_.push_back(' ');
    if (dim_keys_) out_.append(kSgrDim);
    const std::size_t key_start = out_.size();
    if (is_reserved_key(k)) out_.append(kReservedKeyPrefix);
    append_logfmt_key(out_, k);
    members_.add(start, 1, key_start, out_.size() - key_start);
    out_.push_back('=');
    if (dim_keys_) out_.append(kSgrReset);
    after_key_ = true;
}

void KeyValueEncoder::value(const Value& v) {
    if (in_nested_) {
        json_.value(v);
        return;
    }
    if (!after_key_) return;  // a value needs a key at the top level
    switch (v.kind()) {
        case Value::Kind::custom:
            v.encode_custom_into(*this);  // it calls back into value()/begin_*()
            if (in_nested_) {            // it left a container open
                json_.close_all();
                end_nested();
            }
            return;
        case Value::Kind::object:
        case Value::Kind::array:
            begin_nested();
            json_.value(v);
            end_nested();
            return;
        default:
            after_key_ = false;
            write_scalar(v);
            return;
    }
}

void KeyValueEncoder::begin_nested() {
    in_nested_ = true;
    nested_start_ = out_.size();
    nested_keyless_ = !after_key_;
    if (after_key_) json_.expect_value();
    after_key_ = false;
}

void KeyValueEncoder::end_nested() {
    in_nested_ = false;
    const std::size_t length = out_.size() - nested_start_;
    const std::string_view json(out_.data() + nested_start_, length);
    if (nested_keyless_) {
        out_.truncate(nested_start_);
    } else if (!console_ ? logfmt_needs_quotes(json, false) : json.find_first_of("\x7F\xC2") != std::string_view::npos) {
        // logfmt: the JSON becomes one quoted value. console: it stays bare, but DEL and C1
        // controls (only ever inside its strings) are escaped for the terminal.
        scratch_.clear();
        scratch_.append(json);
        out_.truncate(nested_start_);
        if (console_) {
            for_each_terminal_run(out_, scratch_.view(), [this](std::size_t from, std::size_t to) {
                out_.append(scratch_.data() + from, to - from);
            });
        } else {
            out_.push_back('"');
            append_json_escaped(out_, scratch_.view());
            out_.push_back('"');
        }
        scratch_.shrink();
    }
}

void KeyValueEncoder::begin_array() {
    if (!in_nested_) begin_nested();
    json_.begin_array();
}
void KeyValueEncoder::begin_object() {
    if (!in_nested_) begin_nested();
    json_.begin_object();
}
void KeyValueEncoder::end_array() {
    if (!in_nested_) return;  // nothing of ours is open
    json_.end_array();
    if (json_.idle()) end_nested();
}
void KeyValueEncoder::end_object() {
    if (!in_nested_) return;
    json_.end_object();
    if (json_.idle()) end_nested();
}

void KeyValueEncoder::formatted(fmt::string_view format, fmt::format_args args) {
    if (in_nested_) {
        json_.formatted(format, args);
        return;
    }
    if (!after_key_) return;
    after_key_ = false;
    scratch_.clear();
    fmt::vformat_to(std::back_inserter(scratch_), format, args);
    text_value(scratch_.view());
    scratch_.shrink();
}

void KeyValueEncoder::text_value(std::string_view text) {
    if (console_ && text.find('\n') != std::string_view::npos) {
        multi_line_value(text);
    } else if (logfmt_needs_quotes(text, console_)) {
        out_.push_back('"');
        append_escaped(out_, text, console_);
        out_.push_back('"');
    } else {
        out_.append(text);
    }
}

void KeyValueEncoder::multi_line_value(std::string_view text) {
    out_.push_back('"');
    for (std::size_t newline; (newline = text.find('\n')) != std::string_view::npos;) {
        std::string_view line = text.substr(0, newline);
        if (line.ends_with('\r')) line.remove_suffix(1);
        append_escaped(out_, line, true);
        out_.push_back('\n');
        out_.append(kConsoleIndent);
        text.remove_prefix(newline + 1);
    }
    append_escaped(out_, text, true);
    out_.push_back('"');
}

void KeyValueEncoder::write_timestamp(Timestamp t) {
    char* o = out_.reserve(max_rfc3339_size);
    out_.commit(append_rfc3339(o, t, options_.timestamp));
}

void KeyValueEncoder::write_time_value(Timestamp t) {
    char* o = out_.reserve(max_rfc3339_size);
    out_.commit(append_rfc3339_value(o, t, options_.timestamp));
}

void KeyValueEncoder::write_scalar(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::null: out_.append("null"); break;
        case Value::Kind::boolean: out_.append(v.as_bool() ? "true" : "false"); break;
        case Value::Kind::int64: append_int(out_, v.as_int64()); break;
        case Value::Kind::uint64: append_uint(out_, v.as_uint64()); break;
        case Value::Kind::float64: append_float_value(out_, v.as_double(), ""); break;
        case Value::Kind::string: text_value(v.as_string()); break;
        case Value::Kind::duration:
            switch (options_.duration) {
                case DurationFormat::string: append_go_duration(out_, v.as_duration_nanos()); break;
                case DurationFormat::string_ascii: append_go_duration_ascii(out_, v.as_duration_nanos()); break;
                case DurationFormat::nanos: append_int(out_, v.as_duration_nanos()); break;
                case DurationFormat::seconds:
                    append_double(out_, static_cast<double>(v.as_duration_nanos()) / 1e9);
                    break;
            }
            break;
        case Value::Kind::time: write_time_value(v.as_time()); break;
        case Value::Kind::error_code:
        case Value::Kind::bytes:
            scratch_.clear();
            if (v.kind() == Value::Kind::bytes) {
                append_base64(scratch_, v.as_bytes());
            } else {
                append_error_code(scratch_, v.as_error_code());
            }
            text_value(scratch_.view());
            scratch_.shrink();
            break;
        case Value::Kind::object:
        case Value::Kind::array:
        case Value::Kind::custom: break;  // handled by value()
    }
}

inline void LogfmtEncoder::record(const Record& r, const EncodedContexts& context) {
    out_.append("ts=");
    write_timestamp(r.time);
    out_.append(" level=");
    out_.append(to_string(r.level));
    out_.append(" logger=");
    text_value(r.logger.name.text);
    out_.append(" msg=");
    if (r.message.kind() != Message::Kind::plain) {
        scratch_.clear();
        append_message_text(scratch_, r.message, options_.redact);
        text_value(scratch_.view());
        scratch_.shrink();
    } else {
        text_value(r.message.text());
    }
    record_fields(r, context);
    out_.push_back('\n');
}

void LogfmtEncoder::write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options,
                                const Record& record, const EncodedContexts& context) {
    LogfmtEncoder(out, scratch, options).record(record, context);
}

}  // namespace fieldlog::detail

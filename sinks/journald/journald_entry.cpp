// SPDX-License-Identifier: MIT
// The journal entry of a record's parts (journald_entry.hpp): journald's native-protocol
// fields, its values written as the JSON encoder writes them, strings as their bytes.
#include "journald_entry.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "encode/json_encoder.hpp"
#include "encode/redact.hpp"
#include "encode/reserved_keys.hpp"
#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

constexpr std::size_t kFieldNameLimit = 64;  // journald ignores longer names
constexpr std::size_t kCrashFields = 16;     // more than the crash path's `fatal` record has
constexpr std::string_view kNamePrefix = "F_";

/// The syslog priority of a level, as journald's PRIORITY field writes it.
char priority(Level level) noexcept {
    switch (level) {
        case Level::trace:
        case Level::debug: return '7';
        case Level::info: return '6';
        case Level::warn: return '4';
        case Level::error: return '3';
        case Level::fatal:
        case Level::off: return '2';
    }
    return '6';
}

/// The value written since `start` (just after its `=`): kept as it is, or, when it holds a
/// newline, moved into the binary-safe form (`\n` in place of the `=`, then the 64-bit
/// little-endian length); then the closing `\n`.
void finish_value(Buffer& entry, std::size_t start) {
    const std::size_t size = entry.size() - start;
    if (size != 0 && std::memchr(entry.data() + start, '\n', size) != nullptr) {
        entry.resize(entry.size() + 8);
        char* const value = entry.data() + start;
        std::memmove(value + 8, value, size);
        value[-1] = '\n';
        std::uint64_t length = size;
        for (int i = 0; i < 8; ++i, length >>= 8) value[i] = static_cast<char>(length & 0xFF);
    }
    entry.push_back('\n');
}

/// One field of the native protocol: `name` (valid as it is) with the bytes `value`.
void append_field(Buffer& entry, std::string_view name, std::string_view value) {
    entry.append(name);
    entry.push_back('=');
    const std::size_t start = entry.size();
    entry.append(value);
    finish_value(entry, start);
}

/// The same with the text as JSON would carry it: invalid UTF-8 replaced.
void append_text_field(Buffer& entry, std::string_view name, std::string_view text) {
    entry.append(name);
    entry.push_back('=');
    const std::size_t start = entry.size();
    append_utf8_repaired(entry, text);
    finish_value(entry, start);
}

/// The field name of a record's key, from the key as the JSON line writes it (a reserved key
/// with its `fields.` prefix): see JournaldSink. `scratch` is where that key is assembled.
void append_field_name(Buffer& entry, Buffer& scratch, std::string_view key) {
    scratch.clear();
    if (is_reserved_key(key)) scratch.append(kReservedKeyPrefix);
    append_utf8_repaired(scratch, key);
    for (char& c : std::span<char>(scratch.data(), scratch.size())) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        } else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
            c = '_';
        }
    }
    const std::string_view name = scratch.view();
    std::size_t room = kFieldNameLimit;
    if (name.empty() || name[0] == '_' || (name[0] >= '0' && name[0] <= '9')) {
        entry.append(kNamePrefix);
        room -= kNamePrefix.size();
    }
    entry.append(name.substr(0, room));
}

bool is_ascii(std::string_view text) noexcept {
    return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

/// True when the JSON line writes keys `a` and `b` as one member name: a reserved key with the
/// `fields.` prefix (so `msg` and `fields.msg` meet there), invalid UTF-8 replaced (so two
/// keys of different invalid bytes may meet). `first` and `second` hold the repaired keys.
bool same_written_key(std::string_view a, std::string_view b, Buffer& first, Buffer& second) {
    if (a == b) return true;
    const bool a_ascii = is_ascii(a);
    if (a_ascii != is_ascii(b)) return false;  // a replacement is never ASCII
    if (!a_ascii) {
        first.clear();
        second.clear();
        append_utf8_repaired(first, a);
        append_utf8_repaired(second, b);
        return first.view() == second.view();
    }
    const bool a_reserved = is_reserved_key(a);
    if (a_reserved == is_reserved_key(b)) return false;
    const std::string_view reserved = a_reserved ? a : b;
    const std::string_view plain = a_reserved ? b : a;
    return plain.size() == kReservedKeyPrefix.size() + reserved.size() &&
           plain.starts_with(kReservedKeyPrefix) && plain.ends_with(reserved);
}

/// Writes field values as the journal gets them: a string as its bytes (invalid UTF-8 replaced,
/// as in the JSON line), any other scalar as the JSON encoder writes it without quotes, an
/// object or array as its compact JSON text. A user type goes through this encoder: the first
/// value it writes at the top is the field's, written by the same rule. Strings over
/// options.max_value_bytes are cut, at every depth, as every format cuts them.
class FieldValues final : public ValueEncoder {
public:
    /// `scratch` holds a message or error text on its way, `json_scratch` the JSON encoder's,
    /// `cut_scratch` a string being cut.
    FieldValues(Buffer& entry, Buffer& scratch, Buffer& json_scratch, Buffer& cut_scratch,
                const EncoderOptions& options) noexcept
        : entry_(entry), scratch_(scratch), json_(entry, json_scratch, options),
          cap_{.max_value_bytes = options.max_value_bytes, .scratch = &cut_scratch} {}

    /// `name=value\n` (or the binary-safe form) for a field's value.
    void field(const Value& v) {
        entry_.push_back('=');
        const std::size_t start = entry_.size();
        written_ = false;
        if (cap_.max_value_bytes != 0) {
            RedactingEncoder capped(*this, cap_);
            capped.value(v);
        } else {
            top_value(v);
        }
        json_.close_all();  // what a user type left open
        if (!written_) entry_.append("null");  // a user type that wrote nothing, as in JSON
        finish_value(entry_, start);
    }

    void value(const Value& v) override {
        if (!json_.idle()) {
            json_.value(v);
        } else if (!written_) {
            top_value(v);
        }
    }
    void begin_array() override {
        open_at_top();
        json_.begin_array();
    }
    void begin_object() override {
        open_at_top();
        json_.begin_object();
    }
    void end_array() override { json_.end_array(); }
    void end_object() override { json_.end_object(); }
    void key(std::string_view k) override {
        if (!json_.idle()) json_.key(k);  // at the top a key has no object to go in
    }
    void formatted(fmt::string_view format, fmt::format_args args) override {
        if (!json_.idle()) {
            json_.formatted(format, args);
            return;
        }
        if (written_) return;
        written_ = true;
        scratch_.clear();
        fmt::vformat_to(std::back_inserter(scratch_), format, args);
        append_utf8_repaired(entry_, scratch_.view());
    }

private:
    void top_value(const Value& v) {
        switch (v.kind()) {
            case Value::Kind::custom: v.encode_custom_into(*this); return;
            case Value::Kind::string:
                written_ = true;
                append_utf8_repaired(entry_, v.as_string());
                return;
            case Value::Kind::error_code:
                written_ = true;
                scratch_.clear();
                append_error_code(scratch_, v.as_error_code());
                append_utf8_repaired(entry_, scratch_.view());
                return;
            default: break;
        }
        written_ = true;
        const std::size_t start = entry_.size();
        json_.expect_value();
        json_.value(v);
        // A scalar the encoder quotes (a time, a duration, bytes, NaN) needs no escape inside.
        if (entry_.size() - start >= 2 && entry_[start] == '"') {
            entry_.erase(start, start + 1);
            entry_.truncate(entry_.size() - 1);
        }
    }
    /// A container opened at the top is the field's value, unless one was written already
    /// (then the encoder skips it, having no key for it).
    void open_at_top() {
        if (!json_.idle() || written_) return;
        written_ = true;
        json_.expect_value();
    }

    Buffer& entry_;
    Buffer& scratch_;
    JsonEncoder json_;
    ValuePolicy cap_;
    bool written_ = false;
};

}  // namespace

JournaldEntry::JournaldEntry(std::string identifier) : identifier_(std::move(identifier)) {
    fields_.reserve(kCrashFields);  // the crash path's record never grows it
}

void JournaldEntry::build(const RecordView& record) {
    static const EncoderOptions defaults{};
    // How values are written: the time's and durations' forms, the call facts, the value cap.
    const EncoderOptions& encoding = record.options != nullptr ? *record.options : defaults;
    entry_.clear();
    const char level_digit = priority(record.level);
    append_field(entry_, "PRIORITY", {&level_digit, 1});
    // None where the program's name is unknown: journald then shows the process's own (_COMM).
    if (!identifier_.empty()) append_field(entry_, "SYSLOG_IDENTIFIER", identifier_);
    char time[max_rfc3339_size];
    append_field(entry_, "FIELDLOG_TS",
                 {time, static_cast<std::size_t>(append_rfc3339(time, record.time, encoding.timestamp) - time)});
    append_text_field(entry_, "FIELDLOG_LOGGER", record.logger);
    const Message& message = *record.message;
    if (message.formatted()) {
        scratch_.clear();
        fmt::vformat_to(std::back_inserter(scratch_), message.text(), message.args());
        append_text_field(entry_, "MESSAGE", scratch_.view());
    } else {
        append_text_field(entry_, "MESSAGE", message.text());
    }
    if ((encoding.call_facts & caller_fact) != 0) {
        const SourceLocation where = message.where();
        append_text_field(entry_, "CODE_FILE", source_file_tail(where.file_name()));
        char line[24];
        const auto written = fmt::format_to_n(line, sizeof line, "{}", where.line());
        append_field(entry_, "CODE_LINE", {line, written.size});
        if ((encoding.call_facts & function_fact) != 0) append_text_field(entry_, "CODE_FUNC", where.function_name());
    }
    if ((encoding.call_facts & thread_id_fact) != 0) {
        char tid[16];
        const auto written = fmt::format_to_n(tid, sizeof tid, "{}", record.thread_id);
        append_field(entry_, "TID", {tid, written.size});
    }
    // Bound, then scope, then the call's fields; of a key given again the last one counts,
    // where it stands (field.hpp's rule, as the JSON line has it).
    fields_.clear();
    for (const std::span<const Field> part : {record.bound, record.scope, record.fields}) {
        for (const Field& f : part) fields_.push_back(&f);
    }
    FieldValues values(entry_, scratch_, json_scratch_, cut_scratch_, encoding);
    for (std::size_t i = 0; i < fields_.size(); ++i) {
        const std::string_view key = fields_[i]->key;
        const bool replaced =
            std::any_of(fields_.begin() + static_cast<std::ptrdiff_t>(i) + 1, fields_.end(), [&](const Field* later) {
                return same_written_key(key, later->key, scratch_, cut_scratch_);  // both free between values
            });
        if (replaced) continue;
        append_field_name(entry_, scratch_, key);
        values.field(fields_[i]->value);
    }
}

}  // namespace fieldlog::detail

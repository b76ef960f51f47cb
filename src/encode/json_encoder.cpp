// SPDX-License-Identifier: MIT
#include "encode/json_encoder.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "base/thread_id.hpp"
#include "encode/encoded_name.hpp"
#include "encode/json_safe.hpp"
#include "encode/message_text.hpp"
#include "encode/redact.hpp"
#include "encode/reserved_keys.hpp"
#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

/// `,"level":"<name>","logger":` for each level, padded to a fixed block so that the record
/// header is written with fixed-size copies and no length-dependent library call.
struct LevelMember {
    char text[32];
    std::size_t size;
};
constexpr std::array<LevelMember, level_count> kLevelMembers = [] {
    std::array<LevelMember, level_count> table{};
    for (int i = 0; i < level_count; ++i) {
        const std::string_view parts[] = {",\"level\":\"", to_string(static_cast<Level>(i)), "\",\"logger\":"};
        LevelMember& member = table[static_cast<std::size_t>(i)];
        for (const std::string_view part : parts) {
            for (const char c : part) member.text[member.size++] = c;
        }
    }
    return table;
}();

/// What follows the logger's name.
constexpr std::string_view kMessageKey = ",\"msg\":\"";

}  // namespace

EncodedName::EncodedName(std::string_view name) {
    Buffer form;
    append_json_string(form, name);
    form.append(kMessageKey);
    json_size_ = form.size();
    json_padded_ = (json_size_ + kBlock - 1) / kBlock * kBlock;
    json_ = std::make_unique<char[]>(json_padded_);
    std::memcpy(json_.get(), form.data(), json_size_);
}

LoggerName::LoggerName(std::string_view name) : text(name), encoded(new EncodedName(name)) {}
LoggerName::~LoggerName() { delete encoded; }

inline void JsonEncoder::record(const Record& r, const EncodedContexts& context) {
    // `{"ts":<time>,"level":"<level>","logger":"<name>","msg":"` with one reservation.
    const EncodedName& name = *r.logger.name.encoded;
    char* o = out_.reserve(6 + max_rfc3339_size + 2 + sizeof(LevelMember::text) + name.json_padded());
    std::memcpy(o, "{\"ts\":", 6);
    o = write_timestamp<append_rfc3339>(o + 6, r.time);
    const LevelMember& level = kLevelMembers[static_cast<std::size_t>(r.level)];  // the record path made it valid
    std::memcpy(o, level.text, sizeof level.text);
    o += level.size;
    out_.commit(name.copy_json(o));
    if (r.message.kind() != Message::Kind::plain) {
        scratch_.clear();
        append_message_text(scratch_, r.message, options_.redact);
        append_json_escaped(out_, scratch_.view());
        scratch_.shrink();
    } else {
        append_json_escaped(out_, r.message.text());
    }
    out_.push_back('"');
    if (options_.call_facts != 0) [[unlikely]] write_call_facts(r);
    members_.append_context(context.bound, kKeyOffset);
    members_.append_context(context.scope, kKeyOffset);
    if (!r.fields.empty()) write_top_fields(r.fields, false);
    out_.append("}\n");
}

void JsonEncoder::write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options, const Record& record,
                               const EncodedContexts& context) {
    JsonEncoder(out, scratch, options).record(record, context);
}

void JsonEncoder::write_call_facts(const Record& r) {
    const SourceLocation where = r.message.where();
    if ((options_.call_facts & caller_fact) != 0) {
        out_.append(",\"caller\":\"");
        append_json_escaped(out_, source_file_tail(where.file_name()));
        out_.push_back(':');
        append_uint(out_, where.line());
        out_.push_back('"');
        if ((options_.call_facts & function_fact) != 0) {
            out_.append(",\"function\":");
            append_json_string(out_, where.function_name());
        }
    }
    if ((options_.call_facts & thread_id_fact) != 0) {
        out_.append(",\"tid\":");
        append_int(out_, r.thread_id != 0 ? r.thread_id : cached_thread_id());
    }
}

namespace {

/// Members an Object may have and still be written as given (see write_object()): a key is
/// compared with the earlier ones of its length, so the cost grows with the square of this.
constexpr std::size_t kMaxPlainMembers = 16;

/// True when the key of `fields[i]` equals an earlier one's. `lengths` has bit (n & 63) set
/// for each earlier key of n bytes: most keys differ in length from all before them and are
/// not compared.
inline bool repeats_earlier_key(std::span<const Field> fields, std::size_t i,
                                std::uint64_t lengths) noexcept {
    const std::string_view key = fields[i].key;
    if ((lengths & (std::uint64_t{1} << (key.size() & 63))) == 0) [[likely]] return false;
    for (std::size_t j = 0; j < i; ++j) {
        if (fields[j].key == key) return true;
    }
    return false;
}

}  // namespace

inline void JsonEncoder::write_key(std::string_view k) {
    if (ignored_ > 0 || is_array_[depth_]) return;
    if (after_key_) out_.append("null");  // the previous key got no value
    const std::size_t start = out_.size();
    const std::size_t separator = has_items_[depth_] ? 1 : 0;
    has_items_[depth_] = true;
    // `,"` [prefix] key `":` in this one reservation when the key is short and needs no escaping.
    char* const begin = out_.reserve(2 + kReservedKeyPrefix.size() + kShortJsonText + 2);
    char* o = begin + separator;
    *begin = ',';
    *o++ = '"';
    if (depth_ == 0 && is_reserved_key(k)) [[unlikely]]
        o = std::copy(kReservedKeyPrefix.begin(), kReservedKeyPrefix.end(), o);
    const std::size_t key_start = start + separator + 1;
    std::size_t key_len;
    if (char* end = copy_short_json_safe(o, k)) [[likely]] {
        key_len = static_cast<std::size_t>(end - begin) - separator - 1;
        end[0] = '"';
        end[1] = ':';
        out_.commit(end + 2);
    } else {
        out_.commit(o);
        append_json_escaped(out_, k);
        key_len = out_.size() - key_start;
        out_.append("\":");
    }
    members_.add(start, separator, key_start, key_len);
    after_key_ = true;
}

inline bool JsonEncoder::write_plain_key(std::string_view k) {
    const std::size_t separator = has_items_[depth_] ? 1 : 0;
    char* const begin = out_.reserve(2 + kShortJsonText + 2);
    char* o = begin + separator;
    char* const end = copy_short_json_safe(o + 1, k);
    if (end == nullptr) [[unlikely]] return false;
    *begin = ',';
    *o = '"';
    end[0] = '"';
    end[1] = ':';
    out_.commit(end + 2);
    has_items_[depth_] = true;
    return true;
}

void JsonEncoder::write_object(std::span<const Field> fields) {
    if (depth_ == kMaxDepth) {
        out_.append(kDepthPlaceholder);
        return;
    }
    if (fields.size() <= kMaxPlainMembers) {
        // Written as given, with no duplicate-key index level, while every key is short,
        // JSON-safe and new, and no value is a user type (which may write further keys into
        // this object): then no member can repeat another. Any other member undoes it all.
        const std::size_t start = out_.size();
        out_.push_back('{');
        ++depth_;
        is_array_[depth_] = false;
        has_items_[depth_] = false;
        bool plain = true;
        std::uint64_t lengths = 0;
        for (std::size_t i = 0; i < fields.size(); ++i) {
            const Field& f = fields[i];
            if (f.value.kind() == Value::Kind::custom || repeats_earlier_key(fields, i, lengths) ||
                !write_plain_key(f.key)) [[unlikely]] {
                plain = false;
                break;
            }
            lengths |= std::uint64_t{1} << (f.key.size() & 63);
            write_value(f.value);
        }
        --depth_;
        if (plain) [[likely]] {
            out_.push_back('}');
            return;
        }
        out_.truncate(start);
    }
    open('{', false);
    for (const Field& f : fields) {
        write_key(f.key);
        write_member_value(f.value);
    }
    close();
}

void JsonEncoder::key(std::string_view k) { write_key(k); }

void JsonEncoder::fields(const Segment& parent, std::span<const Field> fields) {
    members_.append_segment(parent);
    write_top_fields(fields, true);
}

void JsonEncoder::write_fields(std::span<const Field> fields, bool indexed) {
    depth_ = 0;
    is_array_[0] = false;
    has_items_[0] = true;
    // Members written with no entry in the duplicate-key index yet: their keys' bits are in
    // the top level's mask, and their entries are made (in order, before any other) only when
    // something may need them: a key that cannot take this path, a user type (which may write
    // keys into this object), a caller that reads members().
    PendingMembers pending;
    for (const Field& f : fields) {
        if (f.value.kind() != Value::Kind::custom && write_pending_key(f.key, pending)) [[likely]] {
            write_value(f.value);
            continue;
        }
        index_pending(pending);
        write_key(f.key);
        write_member_value(f.value);
    }
    if (indexed) index_pending(pending);
    if (after_key_) {  // a custom value wrote nothing: keep the member valid
        out_.append("null");
        after_key_ = false;
    }
}

void JsonEncoder::write_guarded_fields(std::span<const Field> fields) {
    depth_ = 0;
    is_array_[0] = false;
    has_items_[0] = true;
    // Every key through key(), so indexed as it is written.
    RedactingEncoder guard(*this, policy_of(options_, scratch_));
    for (const Field& f : fields) {
        guard.key(f.key);
        guard.value(f.value);
    }
    if (after_key_) {  // a custom value wrote nothing: keep the member valid
        out_.append("null");
        after_key_ = false;
    }
}

inline bool JsonEncoder::write_pending_key(std::string_view k, PendingMembers& pending) {
    if (after_key_ || pending.count == PendingMembers::kMax || k.size() > kShortJsonText || is_reserved_key(k))
        [[unlikely]]
        return false;
    // `,"` key `":`: every top-level member follows another (the header's msg at least).
    char* const begin = out_.reserve(2 + kShortJsonText + 2);
    char* const end = copy_short_json_safe(begin + 2, k);
    if (end == nullptr) [[unlikely]] return false;  // written escaped, not as given: the index reads it
    const std::uint64_t tag = key_tag(k.data(), k.size());
    const std::uint64_t bit = key_bit(tag);
    if (!members_.claim_top_bit(bit)) {
        // A key before has this bit: an indexed one (the index compares), or a pending one,
        // compared here (with 64 bits, two of a few keys often share one).
        if ((pending.bits & bit) == 0) return false;
        for (std::size_t j = 0; j < pending.count; ++j) {
            if (pending.tag[j] == tag && pending.key_len[j] == k.size() &&
                (k.empty() || std::memcmp(out_.data() + pending.start[j] + kKeyOffset, k.data(), k.size()) == 0))
                return false;
        }
    }
    pending.bits |= bit;
    pending.start[pending.count] = out_.size();
    pending.tag[pending.count] = static_cast<std::uint32_t>(tag);
    pending.key_len[pending.count] = static_cast<std::uint32_t>(k.size());
    ++pending.count;
    begin[0] = ',';
    begin[1] = '"';
    end[0] = '"';
    end[1] = ':';
    out_.commit(end + 2);
    return true;
}

void JsonEncoder::index_pending(PendingMembers& pending) {
    for (std::size_t j = 0; j < pending.count; ++j) {
        members_.push_claimed(pending.start[j], 1, pending.start[j] + kKeyOffset, pending.key_len[j], pending.tag[j]);
    }
    pending.count = 0;
    pending.bits = 0;
}

[[gnu::always_inline]] inline void JsonEncoder::write_value(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::int64: append_int(out_, v.as_int64()); return;
        case Value::Kind::string: append_json_string(out_, v.as_string()); return;
        case Value::Kind::time: write_time(v.as_time()); return;
        default: write_other_value(v);
    }
}

void JsonEncoder::write_time(Timestamp t) { append_json_time_value(out_, t, options_.timestamp); }

void JsonEncoder::value(const Value& v) {
    if (v.kind() == Value::Kind::custom) {
        // A value that cannot be written (too deep, no key) is not asked to write itself: a
        // recursive user type then stops here instead of recursing without bound.
        if (ignored_ > 0 || (!is_array_[depth_] && !after_key_)) return;
        write_custom(v);
        return;
    }
    if (begin_value()) write_value(v);
}

void JsonEncoder::write_custom(const Value& v) {
    const int depth_floor = depth_floor_;
    const int ignored_floor = ignored_floor_;
    depth_floor_ = depth_;
    ignored_floor_ = ignored_;
    v.encode_custom_into(*this);  // it calls back into value()/begin_*()
    ignored_ = ignored_floor_;
    while (depth_ > depth_floor_) close();
    depth_floor_ = depth_floor;
    ignored_floor_ = ignored_floor;
}

void JsonEncoder::close_all() {
    ignored_ = 0;
    while (depth_ > 0) close();
}

inline bool JsonEncoder::open(char bracket, bool is_array) {
    if (depth_ == kMaxDepth) {
        out_.append(kDepthPlaceholder);
        return false;
    }
    out_.push_back(bracket);
    ++depth_;
    is_array_[depth_] = is_array;
    has_items_[depth_] = false;
    if (!is_array) members_.open_object();
    return true;
}

inline void JsonEncoder::close() {
    if (after_key_) {
        out_.append("null");
        after_key_ = false;
    }
    // The bracket of what is open, whichever end_*() was called: the line stays valid.
    out_.push_back(is_array_[depth_] ? ']' : '}');
    if (!is_array_[depth_]) members_.close_object();
    --depth_;
}

void JsonEncoder::begin_array() {
    if (!begin_value() || !open('[', true)) ++ignored_;
}
void JsonEncoder::begin_object() {
    if (!begin_value() || !open('{', false)) ++ignored_;
}
void JsonEncoder::end_array() { end_container(); }
void JsonEncoder::end_object() { end_container(); }
void JsonEncoder::end_container() {
    if (ignored_ > ignored_floor_) {
        --ignored_;
    } else if (depth_ > depth_floor_) {
        close();
    }
}

void JsonEncoder::formatted(fmt::string_view format, fmt::format_args args) {
    if (!begin_value()) return;
    scratch_.clear();
    fmt::vformat_to(std::back_inserter(scratch_), format, args);
    append_json_string(out_, scratch_.view());
    scratch_.shrink();
}

void JsonEncoder::write_other_value(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::null: out_.append("null"); break;
        case Value::Kind::boolean: out_.append(v.as_bool() ? "true" : "false"); break;
        case Value::Kind::uint64: append_uint(out_, v.as_uint64()); break;
        case Value::Kind::float64: append_float_value(out_, v.as_double(), "\""); break;
        case Value::Kind::duration:
            switch (options_.duration) {
                case DurationFormat::string:
                    out_.push_back('"');
                    append_go_duration(out_, v.as_duration_nanos());
                    out_.push_back('"');
                    break;
                case DurationFormat::string_ascii:
                    out_.push_back('"');
                    append_go_duration_ascii(out_, v.as_duration_nanos());
                    out_.push_back('"');
                    break;
                case DurationFormat::nanos: append_int(out_, v.as_duration_nanos()); break;
                case DurationFormat::seconds:
                    append_double(out_, static_cast<double>(v.as_duration_nanos()) / 1e9);
                    break;
            }
            break;
        case Value::Kind::int64:
        case Value::Kind::string:
        case Value::Kind::time: write_value(v); break;  // write_value's own kinds: the switch stays total
        case Value::Kind::error_code:
            out_.push_back('"');
            {
                const std::size_t start = out_.size();
                append_error_code(out_, v.as_error_code());
                // The message text is not ours: escape it in place via the scratch buffer.
                scratch_.clear();
                scratch_.append(out_.data() + start, out_.size() - start);
                out_.truncate(start);
                append_json_escaped(out_, scratch_.view());
            }
            out_.push_back('"');
            break;
        case Value::Kind::bytes:
            out_.push_back('"');
            append_base64(out_, v.as_bytes());
            out_.push_back('"');
            break;
        case Value::Kind::object: write_object(v.as_object()); break;
        case Value::Kind::array:
            if (open('[', true)) {
                for (const Value& element : v.as_array()) value(element);
                close();
            }
            break;
        case Value::Kind::custom: write_custom(v); break;
    }
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The test observer (see fieldlog/testing/observer.hpp): it keeps each record's owned copy
// (copy_record) and makes the ObservedRecords a test reads from it, through the ValueEncoder
// calls an encoder gets; and the observer's queries.
#include "fieldlog/testing/observer.hpp"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "base/value_calls.hpp"
#include "fieldlog/config.hpp"

namespace fieldlog::testing {
namespace {

/// Sets `key` in `members` by field.hpp's rule: a key given again replaces the earlier member,
/// and the value moves to the end.
void set_member(std::vector<ObservedMember>& members, std::string key, ObservedValue value) {
    const auto same = std::find_if(members.begin(), members.end(), [&](const ObservedMember& m) { return m.key == key; });
    if (same != members.end()) members.erase(same);
    members.push_back(ObservedMember{std::move(key), std::move(value)});
}

/// An encoder that builds an ObservedValue of what it is given. Calls out of order (a value
/// in an object without its key, an end without a begin) are taken as the encoders take them:
/// the value under an empty key, the end ignored; a container left open is closed by take().
class Builder final : public ValueEncoder {
public:
    /// The value built: the first one given at the top (null if none).
    ObservedValue take() && {
        while (!open_.empty()) close();
        return root_ ? std::move(*root_) : ObservedValue();
    }

    void value(const Value& v) override {
        switch (v.kind()) {
            case Value::Kind::null: put(ObservedValue()); return;
            case Value::Kind::boolean: put(ObservedValue(v.as_bool())); return;
            case Value::Kind::int64: put(ObservedValue(v.as_int64())); return;
            case Value::Kind::uint64: put(ObservedValue(v.as_uint64())); return;
            case Value::Kind::float64: put(ObservedValue(v.as_double())); return;
            case Value::Kind::string: put(ObservedValue(v.as_string())); return;
            case Value::Kind::duration: put(ObservedValue(std::chrono::nanoseconds(v.as_duration_nanos()))); return;
            case Value::Kind::time: put(ObservedValue(v.as_time())); return;
            case Value::Kind::error_code: put(ObservedValue(v.as_error_code())); return;
            case Value::Kind::bytes: {
                const std::span<const std::byte> bytes = v.as_bytes();
                put(ObservedValue(std::vector<std::byte>(bytes.begin(), bytes.end())));
                return;
            }
            case Value::Kind::object:
            case Value::Kind::array:
            case Value::Kind::custom: detail::write_as_calls(*this, v); return;
        }
        put(ObservedValue());  // a kind past the list: null, as the encoders write it
    }
    void begin_array() override { open(false); }
    void end_array() override { close_if(false); }
    void begin_object() override { open(true); }
    void key(std::string_view k) override { key_ = std::string(k); }
    void end_object() override { close_if(true); }
    void formatted(fmt::string_view format, fmt::format_args args) override {
        put(ObservedValue(fmt::vformat(format, args)));
    }

private:
    struct Open {
        bool object;
        std::string key;  ///< its key in the object around it
        std::vector<ObservedValue> elements;
        std::vector<ObservedMember> members;
    };

    void put(ObservedValue v) {
        if (open_.empty()) {
            if (!root_) root_ = std::move(v);
            return;
        }
        Open& in = open_.back();
        if (in.object) {
            set_member(in.members, std::exchange(key_, {}), std::move(v));
        } else {
            in.elements.push_back(std::move(v));
        }
    }
    void open(bool object) { open_.push_back(Open{object, std::exchange(key_, {}), {}, {}}); }
    void close_if(bool object) {
        if (!open_.empty() && open_.back().object == object) close();
    }
    void close() {
        Open done = std::move(open_.back());
        open_.pop_back();
        key_ = std::move(done.key);
        put(done.object ? ObservedValue(std::move(done.members)) : ObservedValue(std::move(done.elements)));
    }

    std::vector<Open> open_;  ///< the containers begun and not yet ended, outermost first
    std::optional<ObservedValue> root_;
    std::string key_;  ///< the key given for the next member
};

void append_quoted(std::string& out, std::string_view text) {
    out += '"';
    for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    out += '"';
}

void append_text(std::string& out, const ObservedValue& v) {
    using Kind = ObservedValue::Kind;
    switch (v.kind()) {
        case Kind::null: out += "null"; return;
        case Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
        case Kind::int64: out += std::to_string(v.as_int64()); return;
        case Kind::uint64: out += std::to_string(v.as_uint64()) + "u"; return;
        case Kind::float64: out += fmt::format("{}", v.as_double()); return;
        case Kind::string: append_quoted(out, v.as_string()); return;
        case Kind::bytes: {
            out += "bytes(";
            for (const std::byte b : v.as_bytes()) out += fmt::format("{:02x}", static_cast<unsigned>(b));
            out += ')';
            return;
        }
        case Kind::duration: out += std::to_string(v.as_duration().count()) + "ns"; return;
        case Kind::time: out += fmt::format("time({}.{:09})", v.as_time().seconds, v.as_time().nanos); return;
        case Kind::error_code: {
            const ObservedValue::ErrorCode& ec = v.as_error_code();
            out += fmt::format("error_code({}:{} ", ec.category, ec.value);
            append_quoted(out, ec.message);
            out += ')';
            return;
        }
        case Kind::array: {
            out += '[';
            for (const ObservedValue& element : v.as_array()) {
                if (out.back() != '[') out += ", ";
                append_text(out, element);
            }
            out += ']';
            return;
        }
        case Kind::object: {
            out += '{';
            for (const ObservedMember& member : v.as_object()) {
                if (out.back() != '{') out += ", ";
                append_quoted(out, member.key);
                out += ": ";
                append_text(out, member.value);
            }
            out += '}';
            return;
        }
    }
}

/// The integer `v` holds, as int64 and uint64 alike, for comparing across them.
bool integers_equal(const ObservedValue& a, const ObservedValue& b) noexcept {
    using Kind = ObservedValue::Kind;
    if (a.kind() == Kind::int64 && b.kind() == Kind::int64) return a.as_int64() == b.as_int64();
    if (a.kind() == Kind::uint64 && b.kind() == Kind::uint64) return a.as_uint64() == b.as_uint64();
    if (a.kind() == Kind::int64) return std::cmp_equal(a.as_int64(), b.as_uint64());
    return std::cmp_equal(a.as_uint64(), b.as_int64());
}

ObservedRecords keep_if(const std::vector<ObservedRecord>& records, const std::function<bool(const ObservedRecord&)>& keep) {
    std::vector<ObservedRecord> kept;
    std::copy_if(records.begin(), records.end(), std::back_inserter(kept), keep);
    return ObservedRecords(std::move(kept));
}

/// The record a test reads, made from a kept copy's view.
ObservedRecord observed(const RecordView& record) {
    const SourceLocation where = record.message->where();
    ObservedRecord made{
        .level = record.level,
        .time = record.time,
        .logger = std::string(record.logger),
        .message = std::string(record.message->text()),  // a copy's message is formatted already
        .caller = {.file = where.file_name() != nullptr ? where.file_name() : "",
                   .line = where.line(),
                   .function = where.function_name() != nullptr ? where.function_name() : ""},
        .fields = {},
    };
    for (const std::span<const Field> list : {record.bound, record.scope, record.fields}) {
        for (const Field& f : list) set_member(made.fields, std::string(f.key), ObservedValue::of(f.value));
    }
    return made;
}

std::vector<ObservedRecord> observed(const std::vector<std::shared_ptr<const OwnedRecord>>& copies) {
    std::vector<ObservedRecord> made;
    made.reserve(copies.size());
    for (const auto& copy : copies) made.push_back(observed(view_of(*copy)));
    return made;
}

}  // namespace

ObservedValue::ObservedValue() noexcept = default;
ObservedValue::ObservedValue(std::nullptr_t) noexcept {}

ObservedValue::ObservedValue(const char* s) {
    if (s != nullptr) value_.emplace<std::string>(s);
}

ObservedValue::ObservedValue(Timestamp t) noexcept : value_(t) {}

ObservedValue::ObservedValue(ErrorCode ec) noexcept : value_(std::in_place_type<ErrorCode>, std::move(ec)) {}

ObservedValue::ObservedValue(std::vector<std::byte> bytes) noexcept
    : value_(std::in_place_type<std::vector<std::byte>>, std::move(bytes)) {}

ObservedValue::ObservedValue(std::vector<ObservedValue> array) noexcept
    : value_(std::in_place_type<std::vector<ObservedValue>>, std::move(array)) {}

ObservedValue::ObservedValue(const std::error_code& ec)
    : value_(std::in_place_type<ErrorCode>, ErrorCode{ec.value(), ec.category().name(), ec.message()}) {}

ObservedValue::ObservedValue(std::vector<ObservedMember> object)
    : value_(std::make_shared<const std::vector<ObservedMember>>(std::move(object))) {}

const std::vector<ObservedMember>& ObservedValue::as_object() const { return *std::get<Members>(value_); }

ObservedValue ObservedValue::of(const Value& value) {
    Builder builder;
    builder.value(value);
    return std::move(builder).take();
}

const ObservedValue* ObservedValue::find(std::string_view key) const noexcept {
    const Members* shared = std::get_if<Members>(&value_);
    if (shared == nullptr) return nullptr;
    const std::vector<ObservedMember>* members = shared->get();
    const auto found = std::find_if(members->begin(), members->end(), [&](const ObservedMember& m) { return m.key == key; });
    return found != members->end() ? &found->value : nullptr;
}

std::string ObservedValue::to_string() const {
    std::string out;
    append_text(out, *this);
    return out;
}

bool ObservedValue::equals(const ObservedValue& other) const noexcept {
    const auto is_integer = [](Kind k) { return k == Kind::int64 || k == Kind::uint64; };
    if (is_integer(kind()) && is_integer(other.kind())) return integers_equal(*this, other);
    if (kind() == Kind::object && other.kind() == Kind::object) return as_object() == other.as_object();
    return value_ == other.value_;
}

ObservedField ObservedRecord::field(std::string_view key) const noexcept {
    const auto found = std::find_if(fields.begin(), fields.end(), [&](const ObservedMember& m) { return m.key == key; });
    return ObservedField(found != fields.end() ? &found->value : nullptr);
}

ObservedRecords ObservedRecords::filter_level(Level level) const {
    return keep_if(records_, [level](const ObservedRecord& r) { return r.level == level; });
}

ObservedRecords ObservedRecords::filter_logger(std::string_view name) const {
    return keep_if(records_, [name](const ObservedRecord& r) { return r.logger == name; });
}

ObservedRecords ObservedRecords::filter_message(std::string_view message) const {
    return keep_if(records_, [message](const ObservedRecord& r) { return r.message == message; });
}

ObservedRecords ObservedRecords::filter_field(std::string_view key, const ObservedValue& value) const {
    return keep_if(records_, [key, &value](const ObservedRecord& r) { return r.field(key) == value; });
}

ObservedRecords ObservedRecords::filter(const std::function<bool(const ObservedRecord&)>& keep) const {
    return keep_if(records_, keep);
}

void Observer::write(const RecordView& record) { records_.push_back(copy_record(record)); }

ObservedRecords Observer::records() const { return ObservedRecords(all()); }

std::vector<ObservedRecord> Observer::all() const {
    fieldlog::flush();
    const std::lock_guard lock(mutex());
    return observed(records_);
}

std::size_t Observer::size() const {
    fieldlog::flush();
    const std::lock_guard lock(mutex());
    return records_.size();
}

ObservedRecords Observer::filter_level(Level level) const { return records().filter_level(level); }
ObservedRecords Observer::filter_logger(std::string_view name) const { return records().filter_logger(name); }
ObservedRecords Observer::filter_message(std::string_view message) const { return records().filter_message(message); }
ObservedRecords Observer::filter_field(std::string_view key, const ObservedValue& value) const {
    return records().filter_field(key, value);
}

std::vector<ObservedRecord> Observer::take_all() {
    fieldlog::flush();
    const std::lock_guard lock(mutex());
    return observed(std::exchange(records_, {}));
}

void Observer::clear() {
    fieldlog::flush();
    const std::lock_guard lock(mutex());
    records_.clear();
}

}  // namespace fieldlog::testing

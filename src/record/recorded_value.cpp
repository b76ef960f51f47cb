// SPDX-License-Identifier: MIT
// Recordings (recorded_value.hpp): ops of one byte, each followed by what it needs, with no
// padding and no alignment (every word is read with memcpy). A string is its length and bytes.
// An object or array of at most kFlatMost scalars and strings is one op, replayed as one
// value() call with its members rebuilt on the stack, so that the encoders take their fast path
// for it; any other container is recorded as the calls that make it. A user type's value within
// is a recording of its own, replayed as one value(): the encoders bound each user type's
// calls (closing what it left open, ignoring an end it did not begin) as they do when it is
// written at the call.
#include "record/recorded_value.hpp"

#include <iterator>
#include <new>
#include <span>
#include <string_view>
#include <system_error>

#include "base/buffer.hpp"
#include "base/value_calls.hpp"
#include "encode/json_safe.hpp"
#include "fieldlog/logger.hpp"

namespace fieldlog::detail {
namespace {

enum class Op : std::uint8_t {
    null, no, yes, int64, uint64, float64, duration, time, string, bytes, error_code, key, formatted,
    begin_array, end_array, begin_object, end_object, flat_object, flat_array, recording,
};

constexpr std::size_t kFlatMost = 16;
constexpr std::size_t kSizeWord = sizeof(std::uint32_t);

template <typename T>
char* put(char* o, T word) noexcept {
    std::memcpy(o, &word, sizeof word);
    return o + sizeof word;
}

template <typename T>
T get(const char*& p) noexcept {
    T word;
    std::memcpy(&word, p, sizeof word);
    p += sizeof word;
    return word;
}

/// The encoder a user type writes itself into: every call appends its op to `out`.
class Recorder final : public ValueEncoder {
public:
    explicit Recorder(Buffer& out) noexcept : out_(out) {}

    void value(const Value& v) override {
        switch (v.kind()) {
            case Value::Kind::object:
                if (!put_flat_object(v.as_object())) write_as_calls(*this, v);
                return;
            case Value::Kind::array:
                if (!put_flat_array(v.as_array())) write_as_calls(*this, v);
                return;
            case Value::Kind::custom: {  // a recording of its own: replayed as one value, as written
                char* o = out_.reserve(1 + kSizeWord);
                *o = static_cast<char>(Op::recording);
                const std::size_t at = out_.size() + 1;
                out_.commit(o + 1 + kSizeWord);
                v.encode_custom_into(*this);
                put(out_.data() + at, static_cast<std::uint32_t>(out_.size() - at));
                return;
            }
            case Value::Kind::error_code: {
                const std::error_code& code = v.as_error_code();
                char* o = out_.reserve(1 + sizeof(int) + sizeof(const std::error_category*));
                *o++ = static_cast<char>(Op::error_code);
                o = put(o, code.value());
                out_.commit(put(o, &code.category()));
                return;
            }
            default: {
                char* o = out_.reserve(flat_room(v));
                out_.commit(put_flat(o, v));
                return;
            }
        }
    }
    void begin_array() override { out_.push_back(static_cast<char>(Op::begin_array)); }
    void end_array() override { out_.push_back(static_cast<char>(Op::end_array)); }
    void begin_object() override { out_.push_back(static_cast<char>(Op::begin_object)); }
    void end_object() override { out_.push_back(static_cast<char>(Op::end_object)); }
    void key(std::string_view k) override {
        char* o = out_.reserve(1 + kSizeWord + k.size());
        *o = static_cast<char>(Op::key);
        out_.commit(put_text(o + 1, k));
    }
    void formatted(fmt::string_view format, fmt::format_args args) override {
        const std::size_t at = out_.size();
        char* o = out_.reserve(1 + kSizeWord);
        *o = static_cast<char>(Op::formatted);
        out_.commit(o + 1 + kSizeWord);
        fmt::vformat_to(std::back_inserter(out_), format, args);
        put(out_.data() + at + 1, static_cast<std::uint32_t>(out_.size() - at - 1 - kSizeWord));
    }

private:
    // A flat value's op: at most this many bytes besides the text it holds.
    static constexpr std::size_t kLongestFlat = 1 + sizeof(std::int64_t) + sizeof(std::uint32_t);

    [[gnu::always_inline]] static char* put_text(char* o, std::string_view s) noexcept {
        o = put(o, static_cast<std::uint32_t>(s.size()));
        if (s.size() <= kShortJsonText) {
            copy_short(o, s.data(), s.size());
        } else {
            std::memcpy(o, s.data(), s.size());
        }
        return o + s.size();
    }
    /// Writes flat `v` at `o`, which has room for kLongestFlat bytes and its text.
    [[gnu::always_inline]] static char* put_flat(char* o, const Value& v) noexcept {
        switch (v.kind()) {
            case Value::Kind::null: *o = static_cast<char>(Op::null); return o + 1;
            case Value::Kind::boolean: *o = static_cast<char>(v.as_bool() ? Op::yes : Op::no); return o + 1;
            case Value::Kind::int64: *o = static_cast<char>(Op::int64); return put(o + 1, v.as_int64());
            case Value::Kind::uint64: *o = static_cast<char>(Op::uint64); return put(o + 1, v.as_uint64());
            case Value::Kind::float64: *o = static_cast<char>(Op::float64); return put(o + 1, v.as_double());
            case Value::Kind::duration: *o = static_cast<char>(Op::duration); return put(o + 1, v.as_duration_nanos());
            case Value::Kind::time: {
                *o = static_cast<char>(Op::time);
                return put(put(o + 1, v.as_time().seconds), v.as_time().nanos);
            }
            case Value::Kind::string: *o = static_cast<char>(Op::string); return put_text(o + 1, v.as_string());
            case Value::Kind::bytes: {
                const std::span<const std::byte> b = v.as_bytes();
                *o = static_cast<char>(Op::bytes);
                return put_text(o + 1, std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
            }
            default: return o;  // not flat: never given
        }
    }
    /// The room flat `v` takes, or 0 when it is not flat (then its container is not either).
    static std::size_t flat_room(const Value& v) noexcept {
        switch (v.kind()) {
            case Value::Kind::string: return kLongestFlat + v.as_string().size();
            case Value::Kind::bytes: return kLongestFlat + v.as_bytes().size();
            case Value::Kind::error_code:
            case Value::Kind::object:
            case Value::Kind::array:
            case Value::Kind::custom: return 0;
            default: return kLongestFlat;
        }
    }
    /// Records `members` as one op when they are few and flat; false, recording nothing, if not.
    bool put_flat_object(std::span<const Field> members) {
        if (members.size() > kFlatMost) return false;
        std::size_t room = 1 + kSizeWord;
        for (const Field& f : members) {
            const std::size_t value_room = flat_room(f.value);
            if (value_room == 0) return false;
            room += kSizeWord + f.key.size() + value_room;
        }
        char* o = out_.reserve(room);
        *o = static_cast<char>(Op::flat_object);
        o = put(o + 1, static_cast<std::uint32_t>(members.size()));
        for (const Field& f : members) o = put_flat(put_text(o, f.key), f.value);
        out_.commit(o);
        return true;
    }
    bool put_flat_array(std::span<const Value> elements) {
        if (elements.size() > kFlatMost) return false;
        std::size_t room = 1 + kSizeWord;
        for (const Value& e : elements) {
            const std::size_t value_room = flat_room(e);
            if (value_room == 0) return false;
            room += value_room;
        }
        char* o = out_.reserve(room);
        *o = static_cast<char>(Op::flat_array);
        o = put(o + 1, static_cast<std::uint32_t>(elements.size()));
        for (const Value& e : elements) o = put_flat(o, e);
        out_.commit(o);
        return true;
    }

    Buffer& out_;
};

std::string_view get_text(const char*& p) noexcept {
    const auto n = get<std::uint32_t>(p);
    const std::string_view text(p, n);
    p += n;
    return text;
}

/// The flat value whose op `op` was just read, its payload at `p`.
Value get_flat(Op op, const char*& p) noexcept {
    switch (op) {
        case Op::null: return Value();
        case Op::no: return Value(false);
        case Op::yes: return Value(true);
        case Op::int64: return Value(get<std::int64_t>(p));
        case Op::uint64: return Value(get<std::uint64_t>(p));
        case Op::float64: return Value(get<double>(p));
        case Op::duration: return Value(std::chrono::nanoseconds(get<std::int64_t>(p)));
        case Op::time: {
            const auto seconds = get<std::int64_t>(p);
            return Value(Timestamp(seconds, get<std::uint32_t>(p)));
        }
        case Op::string: return Value(get_text(p));
        case Op::bytes: {
            const std::string_view b = get_text(p);
            return Value(Bytes{std::span(reinterpret_cast<const std::byte*>(b.data()), b.size())});
        }
        default: return Value();  // not flat: never recorded as such
    }
}

Value get_flat(const char*& p) noexcept {
    const auto op = static_cast<Op>(*p++);
    return get_flat(op, p);
}

void replay(ValueEncoder& enc, const char* p, const char* end) {
    while (p < end) {
        const auto op = static_cast<Op>(*p++);
        switch (op) {
            case Op::error_code: {
                const int code = get<int>(p);
                const std::error_code value(code, *get<const std::error_category*>(p));
                enc.value(Value(value));
                break;
            }
            case Op::key: enc.key(get_text(p)); break;
            case Op::formatted: {
                const std::string_view text = get_text(p);
                enc.formatted("{}", fmt::make_format_args(text));
                break;
            }
            case Op::begin_array: enc.begin_array(); break;
            case Op::end_array: enc.end_array(); break;
            case Op::begin_object: enc.begin_object(); break;
            case Op::end_object: enc.end_object(); break;
            case Op::flat_object: {
                Field members[kFlatMost];
                const auto n = get<std::uint32_t>(p);
                for (std::uint32_t i = 0; i < n; ++i) {
                    const std::string_view k = get_text(p);
                    members[i] = Field{k, get_flat(p)};
                }
                enc.value(Value(Object(std::span<const Field>(members, n))));
                break;
            }
            case Op::flat_array: {
                Value elements[kFlatMost];
                const auto n = get<std::uint32_t>(p);
                for (std::uint32_t i = 0; i < n; ++i) elements[i] = get_flat(p);
                enc.value(Value(Array(std::span<const Value>(elements, n))));
                break;
            }
            case Op::recording:
                enc.value(recorded(p));
                p += recording_size(p);
                break;
            default: enc.value(get_flat(op, p)); break;
        }
    }
}

}  // namespace

/// What a recorded Value points at: the recording's first byte (its size word).
struct Recording {
    char first;
};

void fieldlog_encode(ValueEncoder& enc, const Recording& recording) {
    const char* at = &recording.first;
    replay(enc, at + kSizeWord, at + recording_size(at));
}

void record_value(Buffer& out, const Value& v) {
    const std::size_t at = out.size();
    out.commit(out.reserve(kSizeWord) + kSizeWord);
    Recorder recorder(out);
    write_as_calls(recorder, v);
    put(out.data() + at, static_cast<std::uint32_t>(out.size() - at));
}

Value recorded(const char* at) noexcept { return Value(*std::launder(reinterpret_cast<const Recording*>(at))); }

}  // namespace fieldlog::detail

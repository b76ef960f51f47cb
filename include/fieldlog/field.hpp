// SPDX-License-Identifier: MIT
// Fields: typed key/value pairs written at the call site, e.g. {{"status", 200}, {"ok", true}}.
// A Field only *refers* to its value (strings, objects, arrays and user types by address), so
// building one costs a few stores and no heap; the encoder turns it into bytes before the
// logging call returns.
// A copy of a Field (a std::vector<Field> kept for reuse) copies the nested Object{...} and
// Array{...} brace lists its value holds, which end with the statement that wrote them, onto
// the heap, and owns them; strings and user objects it refers to as the original did. A Value
// copied on its own refers, as before. A named Object or Array does not compile as a value.
//
// Duplicate keys (one policy, every format; the output never repeats a member name, RFC 7493):
// - A user key equal to a key the record writes itself (ts, level, logger, msg) at the top
//   level is written as "fields.<key>": {"msg":"hi","fields.msg":"user's"}.
// - Within one object, the top level included, a key written again replaces the earlier
//   member, and the value sits where it was written last. At the top level the order of
//   writing is bound fields (parent, then child), scope fields (outer, then inner), then the
//   call's fields, so the most specific value wins: a call field overrides a scope field, which
//   overrides a bound one. Keys are compared as written (after escaping or logfmt's '_').
//
// User types: give a type `void fieldlog_encode(fieldlog::ValueEncoder&, const T&)` in its own
// namespace (found by ADL) and it is written through the encoder of each sink, as an object, an
// array or a scalar, with no allocation. A type with only an fmt::formatter is written as the
// string fmt makes of it; containers of loggable elements are arrays, ranges of pairs with
// string keys (std::map<std::string, int>) are objects, std::optional is its value or null.
// Anything else fails to compile with a message that says so.
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include <fmt/core.h>

#include "fieldlog/export.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog {

class Value;
struct Field;
class ValueEncoder;
struct Bytes;
class Object;
class Array;

namespace detail {
template <typename T>
concept HasFieldlogEncode = requires(ValueEncoder& enc, const T& value) { fieldlog_encode(enc, value); };

/// std::ranges::input_range and range_reference_t, made from <iterator> alone: <ranges> is
/// one of the heaviest standard headers, and every file that logs would parse it.
template <typename R>
concept InputRange = requires(R& r) {
    std::ranges::begin(r);
    std::ranges::end(r);
} && std::input_iterator<decltype(std::ranges::begin(std::declval<R&>()))>;
template <InputRange R>
using RangeReference = std::iter_reference_t<decltype(std::ranges::begin(std::declval<R&>()))>;

/// A range whose elements are (key, value) pairs with string keys: written as an object.
template <typename R>
concept KeyValueRange = InputRange<const R> && requires(RangeReference<const R> e) {
    { e.first } -> std::convertible_to<std::string_view>;
    e.second;
};

template <typename T>
inline constexpr bool is_optional = false;
template <typename T>
inline constexpr bool is_optional<std::optional<T>> = true;

template <typename T>
inline constexpr bool is_duration = false;
template <typename Rep, typename Period>
inline constexpr bool is_duration<std::chrono::duration<Rep, Period>> = true;

template <typename T>
inline constexpr bool is_sys_time = false;
template <typename Duration>
inline constexpr bool is_sys_time<std::chrono::sys_time<Duration>> = true;

/// Every kind of value some Value constructor takes (element types of ranges are checked when
/// the range is written, with the same message).
template <typename T>
concept Loggable =
    std::same_as<T, bool> || std::same_as<T, std::nullptr_t> ||
    (std::integral<T> && !std::same_as<T, char> && !std::same_as<T, char8_t>) || std::floating_point<T> ||
    std::convertible_to<const T&, std::string_view> || std::convertible_to<const T&, const char*> ||
    is_duration<T> || is_sys_time<T> || std::convertible_to<const T&, Timestamp> ||
    std::convertible_to<const T&, const std::error_code&> || std::derived_from<T, std::exception> ||
    std::same_as<T, std::exception_ptr> || std::same_as<T, Value> || std::same_as<T, Bytes> ||
    std::same_as<T, Object> || std::same_as<T, Array> ||
    HasFieldlogEncode<T> || InputRange<const T> || is_optional<T> ||
    (!std::is_arithmetic_v<T> && !std::is_pointer_v<T> && fmt::is_formattable<T>::value);

template <typename T>
inline constexpr bool always_false = false;

/// Write an exception (`object` is a const std::exception*) or a std::exception_ptr (a const
/// std::exception_ptr*): {"type":…,"what":…,"causes":[…]}. Out of line, in src/encode/.
FIELDLOG_API void encode_exception(ValueEncoder& enc, const void* object);
FIELDLOG_API void encode_exception_ptr(ValueEncoder& enc, const void* object);
}  // namespace detail

/// A span of bytes, written base64-encoded (RFC 4648, with padding) in every format.
struct FIELDLOG_API Bytes {
    std::span<const std::byte> data;
};

/// A nested object: {"user", fieldlog::Object{{"name", n}, {"id", 7}}}. Written where the
/// field is: a Value is made only from an Object that is not named (an rvalue).
class FIELDLOG_API Object {
public:
    constexpr Object(std::initializer_list<Field> fields) noexcept;  // NOLINT: braces are the API
    /// Fields whose storage the caller keeps alive as long as the Value made of this Object.
    constexpr explicit Object(std::span<const Field> fields) noexcept : fields_(fields) {}
    [[nodiscard]] constexpr std::span<const Field> fields() const noexcept { return fields_; }
    /// Whether the fields are a brace list's, which ends with the expression that wrote it.
    [[nodiscard]] constexpr bool from_braces() const noexcept { return from_braces_; }

private:
    std::span<const Field> fields_;
    bool from_braces_ = false;
};

/// A nested array of mixed values: {"ids", fieldlog::Array{1, 2, "three"}}. Containers of a
/// supported element type (std::vector<int>, std::array<User, 3>, …) need no wrapper. Like an
/// Object, written where the field is.
class FIELDLOG_API Array {
public:
    constexpr Array(std::initializer_list<Value> values) noexcept;  // NOLINT: braces are the API
    /// Values whose storage the caller keeps alive as long as the Value made of this Array.
    constexpr explicit Array(std::span<const Value> values) noexcept : values_(values) {}
    [[nodiscard]] constexpr std::span<const Value> values() const noexcept { return values_; }
    /// Whether the values are a brace list's, which ends with the expression that wrote it.
    [[nodiscard]] constexpr bool from_braces() const noexcept { return from_braces_; }

private:
    std::span<const Value> values_;
    bool from_braces_ = false;
};

/// One value of a field. Kinds are few on purpose (zap's lesson): scalars, strings, time,
/// nested containers, and `custom` for everything a user teaches us to write.
class FIELDLOG_API Value {
public:
    enum class Kind : std::uint8_t {
        null, boolean, int64, uint64, float64, string, duration, time, error_code, bytes,
        object, array, custom,
    };
    /// Writes a custom value through the encoder; `object` is what the Value points at.
    using CustomFn = void (*)(ValueEncoder& enc, const void* object);

    constexpr Value() noexcept : kind_(Kind::null), int_(0) {}
    constexpr Value(std::nullptr_t) noexcept : Value() {}
    constexpr Value(bool b) noexcept : kind_(Kind::boolean), bool_(b) {}
    template <std::signed_integral T>
        requires(!std::same_as<T, bool> && !std::same_as<T, char>)
    constexpr Value(T v) noexcept : kind_(Kind::int64), int_(static_cast<std::int64_t>(v)) {}
    template <std::unsigned_integral T>
        requires(!std::same_as<T, bool> && !std::same_as<T, char> && !std::same_as<T, char8_t>)
    constexpr Value(T v) noexcept : kind_(Kind::uint64), uint_(static_cast<std::uint64_t>(v)) {}
    template <std::floating_point T>
    constexpr Value(T v) noexcept : kind_(Kind::float64), double_(static_cast<double>(v)) {}
    constexpr Value(std::string_view s) noexcept : kind_(Kind::string), string_(s) {}
    constexpr Value(const char* s) noexcept : Value(s ? std::string_view(s) : std::string_view("null")) {
        if (s == nullptr) kind_ = Kind::null;
    }
    Value(const std::string& s) noexcept : Value(std::string_view(s)) {}
    /// Any std::chrono::duration, held as nanoseconds (saturating at ±292 years).
    template <typename Rep, typename Period>
    constexpr Value(std::chrono::duration<Rep, Period> d) noexcept : kind_(Kind::duration), int_(to_nanos(d)) {}
    /// Any system_clock time point, any precision.
    template <typename Duration>
    constexpr Value(std::chrono::sys_time<Duration> t) noexcept : kind_(Kind::time), time_(Timestamp(t)) {}
    constexpr Value(Timestamp t) noexcept : kind_(Kind::time), time_(t) {}
    Value(const std::error_code& ec) noexcept : kind_(Kind::error_code), error_(&ec) {}
    constexpr Value(Bytes b) noexcept : kind_(Kind::bytes), bytes_(b.data) {}
    constexpr Value(Object&& o) noexcept
        : kind_(Kind::object), nested_(o.from_braces() ? Nested::brace_list : Nested::kept_by_caller),
          object_(o.fields()) {}
    constexpr Value(Array&& a) noexcept
        : kind_(Kind::array), nested_(a.from_braces() ? Nested::brace_list : Nested::kept_by_caller),
          array_(a.values()) {}
    /// A named Object or Array: refused, since its brace list ended with the line that made it.
    template <typename T>
        requires(std::same_as<std::remove_cv_t<T>, Object> || std::same_as<std::remove_cv_t<T>, Array>)
    Value(T&) noexcept : Value() {  // NOLINT: implicit so that the error names the field's type
        static_assert(detail::always_false<T>,
                      "fieldlog: a named fieldlog::Object or fieldlog::Array refers to a brace list that ended with "
                      "the line that made it. Write Object{...} or Array{...} inside the field itself, or keep the "
                      "fields in a std::vector<fieldlog::Field> and log that.");
    }

    /// Any std::exception: {"type":"std::runtime_error","what":"…"}, and the exceptions nested
    /// in it (std::throw_with_nested) as "causes", outermost first. README: "Exceptions".
    template <typename E>
        requires(std::derived_from<E, std::exception> && !detail::HasFieldlogEncode<E>)
    Value(const E& e) noexcept
        : kind_(Kind::custom), custom_{static_cast<const std::exception*>(&e), &detail::encode_exception} {}
    /// A std::exception_ptr: what it holds, as above (null when empty).
    Value(const std::exception_ptr& p) noexcept : kind_(Kind::custom), custom_{&p, &detail::encode_exception_ptr} {}

    /// A type with `fieldlog_encode(fieldlog::ValueEncoder&, const T&)` found by ADL.
    template <typename T>
        requires detail::HasFieldlogEncode<T>
    constexpr Value(const T& v) noexcept : kind_(Kind::custom), custom_{&v, &encode_custom<T>} {}

    /// A container whose elements are Values (and is not a string): written as an array.
    template <typename R>
        requires(!detail::HasFieldlogEncode<R> && detail::InputRange<const R> &&
                 !std::convertible_to<const R&, std::string_view> && !detail::KeyValueRange<R> &&
                 std::constructible_from<Value, detail::RangeReference<const R>>)
    constexpr Value(const R& range) noexcept : kind_(Kind::custom), custom_{&range, &encode_range<R>} {}

    /// A range of (string key, value) pairs, such as std::map<std::string, int>: an object.
    template <typename R>
        requires(!detail::HasFieldlogEncode<R> && detail::KeyValueRange<R> &&
                 !std::convertible_to<const R&, std::string_view>)
    constexpr Value(const R& range) noexcept : kind_(Kind::custom), custom_{&range, &encode_map<R>} {}

    /// std::optional: its value, or null when empty.
    template <typename T>
        requires(!detail::HasFieldlogEncode<std::optional<T>>)
    constexpr Value(const std::optional<T>& v) noexcept : kind_(Kind::custom), custom_{&v, &encode_optional<T>} {}

    /// A type that only has an fmt::formatter: written as the string fmt makes of it.
    template <typename T>
        requires(!detail::HasFieldlogEncode<T> && !detail::InputRange<const T> && !detail::is_optional<T> &&
                 !std::is_arithmetic_v<T> && !std::is_pointer_v<T> && !std::derived_from<T, std::exception> &&
                 fmt::is_formattable<T>::value)
    constexpr Value(const T& v) noexcept : kind_(Kind::custom), custom_{&v, &encode_formatted<T>} {}

    /// Everything else: a compile-time error that says what to do.
    template <typename T>
        requires(!detail::Loggable<T>)
    Value(const T&) noexcept : Value() {  // NOLINT: implicit so that the error names the field's type
        static_assert(detail::always_false<T>,
                      "fieldlog: this type cannot be logged. Give it `void fieldlog_encode(fieldlog::ValueEncoder&, "
                      "const T&)` in its own namespace (found by ADL), or an fmt::formatter to log it as a string. "
                      "A char: log std::string_view(&c, 1) or int(c); a pointer: fmt::ptr(p); an enum: its "
                      "underlying value, or one of the above.");
    }

    [[nodiscard]] constexpr Kind kind() const noexcept { return kind_; }
    [[nodiscard]] constexpr bool as_bool() const noexcept { return bool_; }
    [[nodiscard]] constexpr std::int64_t as_int64() const noexcept { return int_; }
    [[nodiscard]] constexpr std::uint64_t as_uint64() const noexcept { return uint_; }
    [[nodiscard]] constexpr double as_double() const noexcept { return double_; }
    [[nodiscard]] constexpr std::string_view as_string() const noexcept { return string_; }
    [[nodiscard]] constexpr std::int64_t as_duration_nanos() const noexcept { return int_; }
    [[nodiscard]] constexpr Timestamp as_time() const noexcept { return time_; }
    [[nodiscard]] const std::error_code& as_error_code() const noexcept { return *error_; }
    [[nodiscard]] constexpr std::span<const std::byte> as_bytes() const noexcept { return bytes_; }
    [[nodiscard]] constexpr std::span<const Field> as_object() const noexcept { return object_; }
    [[nodiscard]] constexpr std::span<const Value> as_array() const noexcept { return array_; }
    /// Writes a custom value (user type, container, fmt-formattable) through `enc`.
    void encode_custom_into(ValueEncoder& enc) const { custom_.fn(enc, custom_.object); }

private:
    friend struct Field;
    /// Where an object's or array's elements live; every other kind is kept_by_caller. Only a
    /// Field owns (a Value is copied as the few bytes it is, on the hot path): a Field's copy
    /// makes its value's nested lists owned copies, and its destructor frees them. An owned
    /// list's block names the Field that owns it, so a Value copied out of that Field, or a
    /// Field made of such a Value, refers to the list without owning it.
    enum class Nested : std::uint8_t { kept_by_caller, brace_list, owned };

    /// Makes the elements of this object or array, and the lists nested in them, heap copies
    /// owned by `owner` (an empty list refers to nothing instead). Throws std::bad_alloc.
    void own_nested(const Field* owner);
    /// Whether the owned list is `owner`'s.
    [[nodiscard]] bool owned_by(const Field* owner) const noexcept;
    /// Makes the owned list `owner`'s, after a move.
    void pass_to(const Field* owner) noexcept;
    /// Frees the owned list and what it holds when it is `owner`'s.
    void free_if_owned_by(const Field* owner) noexcept;
    void free_nested() noexcept;

    template <typename Rep, typename Period>
    static constexpr std::int64_t to_nanos(std::chrono::duration<Rep, Period> d) noexcept {
        using namespace std::chrono;
        using Wide = duration<long double, std::nano>;
        const auto wide = duration_cast<Wide>(d).count();
        if (wide >= static_cast<long double>(INT64_MAX)) return INT64_MAX;
        if (wide <= static_cast<long double>(INT64_MIN)) return INT64_MIN;
        return static_cast<std::int64_t>(duration_cast<nanoseconds>(d).count());
    }
    template <typename T>
    static void encode_custom(ValueEncoder& enc, const void* object);
    template <typename R>
    static void encode_range(ValueEncoder& enc, const void* object);
    template <typename R>
    static void encode_map(ValueEncoder& enc, const void* object);
    template <typename T>
    static void encode_optional(ValueEncoder& enc, const void* object);
    template <typename T>
    static void encode_formatted(ValueEncoder& enc, const void* object);

    struct Custom {
        const void* object;
        CustomFn fn;
    };

    Kind kind_;
    Nested nested_ = Nested::kept_by_caller;
    union {
        bool bool_;
        std::int64_t int_;
        std::uint64_t uint_;
        double double_;
        std::string_view string_;
        Timestamp time_;
        const std::error_code* error_;
        std::span<const std::byte> bytes_;
        std::span<const Field> object_;
        std::span<const Value> array_;
        Custom custom_;
    };
};

/// A key and its value. Keys are written escaped like any string.
struct FIELDLOG_API Field {
    std::string_view key;
    Value value;

    constexpr Field() noexcept = default;
    constexpr Field(std::string_view k, const Value& v) noexcept : key(k), value(v) {}
    /// Copies and moves own the nested lists they hold (see the top of this file).
    Field(const Field& other) : key(other.key), value(other.value) {
        if (value.nested_ != Value::Nested::kept_by_caller) value.own_nested(this);
    }
    Field(Field&& other) : key(other.key), value(other.value) { take_nested(other); }
    Field& operator=(const Field& other) {
        if (this != &other) *this = Field(other);
        return *this;
    }
    Field& operator=(Field&& other) {
        if (this != &other) {
            release_nested();
            key = other.key;
            value = other.value;
            take_nested(other);
        }
        return *this;
    }
    constexpr ~Field() { release_nested(); }

private:
    /// After `value` was copied from `other`'s: takes the list `other` owns, or copies one it
    /// does not (a brace list, or a list another Field owns).
    void take_nested(Field& other) {
        if (value.nested_ == Value::Nested::kept_by_caller) return;
        if (value.nested_ == Value::Nested::owned && value.owned_by(&other)) {
            value.pass_to(this);
            other.value = Value();
        } else {
            value.own_nested(this);
        }
    }
    constexpr void release_nested() noexcept {
        if (value.nested_ == Value::Nested::owned) value.free_if_owned_by(this);
    }
};

/// The encoder as user types see it: a stream of values, objects and arrays in the format of
/// the sink being written (JSON, logfmt, console). Implemented by every encoder.
/// **Example**
///   void fieldlog_encode(fieldlog::ValueEncoder& enc, const User& u) {
///       enc.value(fieldlog::Object{{"name", u.name}, {"email", u.email}});
///   }
class FIELDLOG_API ValueEncoder {
public:
    /// Writes one value (scalar, string, or a whole Object/Array).
    virtual void value(const Value& v) = 0;
    /// Streams a container: begin_array(), value()…, end_array().
    virtual void begin_array() = 0;
    virtual void end_array() = 0;
    /// Streams an object: begin_object(), (key(k), value(v))…, end_object().
    virtual void begin_object() = 0;
    virtual void key(std::string_view k) = 0;
    virtual void end_object() = 0;
    /// Writes a string assembled by fmt without a heap detour (bounded scratch per thread).
    virtual void formatted(fmt::string_view format, fmt::format_args args) = 0;

protected:
    ~ValueEncoder() = default;
};

constexpr Object::Object(std::initializer_list<Field> fields) noexcept
    : fields_(fields.begin(), fields.size()), from_braces_(true) {}
constexpr Array::Array(std::initializer_list<Value> values) noexcept
    : values_(values.begin(), values.size()), from_braces_(true) {}

template <typename T>
void Value::encode_custom(ValueEncoder& enc, const void* object) {
    fieldlog_encode(enc, *static_cast<const T*>(object));
}

template <typename R>
void Value::encode_range(ValueEncoder& enc, const void* object) {
    enc.begin_array();
    for (auto&& element : *static_cast<const R*>(object)) enc.value(Value(element));
    enc.end_array();
}

template <typename R>
void Value::encode_map(ValueEncoder& enc, const void* object) {
    enc.begin_object();
    for (auto&& [key, value] : *static_cast<const R*>(object)) {
        enc.key(std::string_view(key));
        enc.value(Value(value));
    }
    enc.end_object();
}

template <typename T>
void Value::encode_optional(ValueEncoder& enc, const void* object) {
    const auto& v = *static_cast<const std::optional<T>*>(object);
    enc.value(v.has_value() ? Value(*v) : Value());
}

template <typename T>
void Value::encode_formatted(ValueEncoder& enc, const void* object) {
    const T& v = *static_cast<const T*>(object);
    enc.formatted("{}", fmt::make_format_args(v));
}

/// Field lists as written at call sites.
using Fields = std::initializer_list<Field>;

}  // namespace fieldlog

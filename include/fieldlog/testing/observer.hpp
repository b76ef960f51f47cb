// SPDX-License-Identifier: MIT
// The test observer (zap's zaptest/observer): a sink that keeps the records it takes in their
// typed form, so that a test asks "exactly one warn record of logger `db` with rows == 3 and the
// scope's request_id" without parsing a line. It reads parts (SinkInfo::lines false): the
// dispatcher hands it each record's parts and encodes nothing for it, and it keeps each one's
// owned copy (copy_record). Every reader first waits until the records logged before it
// reached the sinks (fieldlog::flush()), so a test reads it without a flush, in async mode too.
// Its level and its loggers / exclude rules are a SinkConfig's, as for any sink, and metrics()
// counts its records (kind "observer", no bytes).
// NOTE: a test tool. It allocates for every record it keeps; the record path allocates nothing
// only while no observer is configured.
//
//   auto observer = std::make_shared<fieldlog::testing::Observer>();
//   fieldlog::configure({.sinks = {{.target = observer}}});
//   fieldlog::get("db").warn("slow query", {{"rows", 3}});
//   const auto slow = observer->filter_level(fieldlog::Level::warn).filter_logger("db");
//   REQUIRE(slow.size() == 1);
//   CHECK(slow[0].field("rows") == 3);
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "fieldlog/export.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/timestamp.hpp"
#include "fieldlog/owned_record.hpp"

namespace fieldlog::testing {

struct ObservedMember;

/// A field's value as the record had it, owned: a scalar, a string, or a tree of arrays and
/// objects. A user type (fieldlog_encode), a container or an exception is what its encoder
/// calls made of it, as the JSON encoder would be given them; a type with only an
/// fmt::formatter is its string. Made implicitly from plain C++ values, so it compares with
/// them: `v == 3`, `v == "abc"`, `v == true`, `v == 1250us`. Integers compare by value whatever
/// their signedness (int64 3 equals uint64 3); an integer never equals a double.
class FIELDLOG_API ObservedValue {
public:
    enum class Kind : std::uint8_t {
        null, boolean, int64, uint64, float64, string, bytes, duration, time, error_code, array, object,
    };
    /// A std::error_code as the record had it.
    struct ErrorCode {
        int value = 0;
        std::string category;  ///< the category's name(): "generic", "system"
        std::string message;
        friend bool operator==(const ErrorCode&, const ErrorCode&) = default;
    };

    ObservedValue() noexcept;
    ObservedValue(std::nullptr_t) noexcept;  // NOLINT: implicit by design, as every one below
    template <std::same_as<bool> B>
    ObservedValue(B b) noexcept : value_(static_cast<bool>(b)) {}  // NOLINT
    template <std::signed_integral T>
        requires(!std::same_as<T, char>)
    ObservedValue(T v) noexcept : value_(static_cast<std::int64_t>(v)) {}  // NOLINT
    template <std::unsigned_integral T>
        requires(!std::same_as<T, bool> && !std::same_as<T, char> && !std::same_as<T, char8_t>)
    ObservedValue(T v) noexcept : value_(static_cast<std::uint64_t>(v)) {}  // NOLINT
    template <std::floating_point T>
    ObservedValue(T v) noexcept : value_(static_cast<double>(v)) {}  // NOLINT
    /// A string; null for a null pointer, as a field's value is.
    ObservedValue(const char* s);  // NOLINT
    template <typename S>
        requires(std::convertible_to<const S&, std::string_view> && !std::convertible_to<const S&, const char*>)
    ObservedValue(const S& s) : value_(std::in_place_type<std::string>, std::string_view(s)) {}  // NOLINT
    template <typename Rep, typename Period>
    ObservedValue(std::chrono::duration<Rep, Period> d) noexcept  // NOLINT
        : value_(std::chrono::duration_cast<std::chrono::nanoseconds>(d)) {}
    ObservedValue(Timestamp t) noexcept;  // NOLINT
    template <typename Duration>
    ObservedValue(std::chrono::sys_time<Duration> t) noexcept : value_(Timestamp(t)) {}  // NOLINT
    ObservedValue(const std::error_code& ec);  // NOLINT
    ObservedValue(ErrorCode ec) noexcept;  // NOLINT
    ObservedValue(std::vector<std::byte> bytes) noexcept;  // NOLINT
    ObservedValue(std::vector<ObservedValue> array) noexcept;  // NOLINT
    ObservedValue(std::vector<ObservedMember> object);  // NOLINT

    /// The owned copy of a field's value (user types through their fieldlog_encode).
    /// Throws what a user type's encoding throws.
    static ObservedValue of(const Value& value);

    [[nodiscard]] Kind kind() const noexcept { return static_cast<Kind>(value_.index()); }
    [[nodiscard]] bool is_null() const noexcept { return kind() == Kind::null; }
    // Each of these throws std::bad_variant_access on a value of another kind.
    [[nodiscard]] bool as_bool() const { return std::get<bool>(value_); }
    [[nodiscard]] std::int64_t as_int64() const { return std::get<std::int64_t>(value_); }
    [[nodiscard]] std::uint64_t as_uint64() const { return std::get<std::uint64_t>(value_); }
    [[nodiscard]] double as_double() const { return std::get<double>(value_); }
    [[nodiscard]] const std::string& as_string() const { return std::get<std::string>(value_); }
    [[nodiscard]] const std::vector<std::byte>& as_bytes() const { return std::get<std::vector<std::byte>>(value_); }
    [[nodiscard]] std::chrono::nanoseconds as_duration() const { return std::get<std::chrono::nanoseconds>(value_); }
    [[nodiscard]] Timestamp as_time() const { return std::get<Timestamp>(value_); }
    [[nodiscard]] const ErrorCode& as_error_code() const { return std::get<ErrorCode>(value_); }
    [[nodiscard]] const std::vector<ObservedValue>& as_array() const { return std::get<std::vector<ObservedValue>>(value_); }
    [[nodiscard]] const std::vector<ObservedMember>& as_object() const;
    /// An object's member `key`; null when there is none or this is no object.
    [[nodiscard]] const ObservedValue* find(std::string_view key) const noexcept;

    /// A JSON-like text of the value, for a failed check's message (operator<< writes it).
    [[nodiscard]] std::string to_string() const;
    /// The same kind (int64 and uint64 count as one) and an equal value; objects member by
    /// member in order.
    [[nodiscard]] bool equals(const ObservedValue& other) const noexcept;

    friend bool operator==(const ObservedValue& a, const ObservedValue& b) noexcept { return a.equals(b); }
    friend std::ostream& operator<<(std::ostream& out, const ObservedValue& value) { return out << value.to_string(); }

private:
    // In the order of Kind. An object's members are shared (a value never changes): a vector
    // of ObservedMember, not complete here, cannot be a member of every compiler's variant.
    using Members = std::shared_ptr<const std::vector<ObservedMember>>;
    using Variant = std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string,
                                 std::vector<std::byte>, std::chrono::nanoseconds, Timestamp, ErrorCode,
                                 std::vector<ObservedValue>, Members>;
    Variant value_;
};

/// A key and its value: one member of an object, or one of a record's fields.
struct FIELDLOG_API ObservedMember {
    std::string key;
    ObservedValue value;
    friend bool operator==(const ObservedMember&, const ObservedMember&) = default;
};

/// What ObservedRecord::field() finds: a value, or nothing when the record has no such key.
/// Compares equal to a value only when present and equal to it.
class FIELDLOG_API ObservedField {
public:
    explicit ObservedField(const ObservedValue* value = nullptr) noexcept : value_(value) {}
    explicit operator bool() const noexcept { return value_ != nullptr; }
    /// The value; null when absent.
    [[nodiscard]] const ObservedValue* get() const noexcept { return value_; }
    /// MUST: present.
    const ObservedValue& operator*() const noexcept { return *value_; }
    const ObservedValue* operator->() const noexcept { return value_; }

    friend bool operator==(const ObservedField& field, const ObservedValue& value) noexcept {
        return field.value_ != nullptr && *field.value_ == value;
    }
    /// The value, or `(absent)`.
    friend std::ostream& operator<<(std::ostream& out, const ObservedField& field) {
        return field.value_ != nullptr ? out << *field.value_ : out << "(absent)";
    }

private:
    const ObservedValue* value_;
};

/// One record the observer took.
struct FIELDLOG_API ObservedRecord {
    /// Where the record was logged: the logging call's SourceLocation.
    struct Caller {
        std::string file;
        unsigned line = 0;
        std::string function;
    };

    Level level = Level::info;
    Timestamp time{};
    std::string logger;
    std::string message;  ///< a fmt message as formatted
    Caller caller;
    /// The top-level fields, merged as the encoders merge them (field.hpp): the bound (with())
    /// fields, the scopes' (outer to inner), the call's; a key given again replaces the earlier
    /// value and moves to where it was given last. Keys are kept as given: one the line writes
    /// itself (msg, level, ts, logger, caller, …), which a line writes as "fields.msg", is "msg"
    /// here.
    std::vector<ObservedMember> fields;

    /// The field `key`, or nothing.
    [[nodiscard]] ObservedField field(std::string_view key) const noexcept;
    [[nodiscard]] bool has(std::string_view key) const noexcept { return static_cast<bool>(field(key)); }
};

/// A copy of some of the observer's records, in the order they were logged, to filter further:
///   observer->filter_level(Level::warn).filter_logger("db").filter_field("rows", 3).size()
class FIELDLOG_API ObservedRecords {
public:
    ObservedRecords() = default;
    explicit ObservedRecords(std::vector<ObservedRecord> records) noexcept : records_(std::move(records)) {}

    [[nodiscard]] const std::vector<ObservedRecord>& all() const noexcept { return records_; }
    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }
    /// MUST: i < size().
    const ObservedRecord& operator[](std::size_t i) const noexcept { return records_[i]; }
    [[nodiscard]] auto begin() const noexcept { return records_.begin(); }
    [[nodiscard]] auto end() const noexcept { return records_.end(); }

    /// The records of exactly `level`.
    [[nodiscard]] ObservedRecords filter_level(Level level) const;
    /// The records of the logger named exactly `name` (not the loggers below it).
    [[nodiscard]] ObservedRecords filter_logger(std::string_view name) const;
    /// The records whose message is exactly `message`.
    [[nodiscard]] ObservedRecords filter_message(std::string_view message) const;
    /// The records with a field `key` equal to `value`.
    [[nodiscard]] ObservedRecords filter_field(std::string_view key, const ObservedValue& value) const;
    /// The records `keep` says yes to.
    [[nodiscard]] ObservedRecords filter(const std::function<bool(const ObservedRecord&)>& keep) const;

private:
    std::vector<ObservedRecord> records_;
};

/// The sink. Configure it like any sink (a SinkConfig's level, loggers and exclude apply; its
/// format does not); read it from any thread, also while others log: every reader takes the
/// sink's mutex(). Each reader returns a copy.
class FIELDLOG_API Observer final : public Sink {
public:
    /// Keeps a copy of the record's parts.
    void write(const RecordView& record) override;
    void flush() override {}
    [[nodiscard]] SinkInfo info() const override { return {.kind = "observer", .lines = false}; }

    /// Every record taken so far, in the order they were logged (across threads: the order
    /// they reached the observer).
    [[nodiscard]] ObservedRecords records() const;
    [[nodiscard]] std::vector<ObservedRecord> all() const;
    [[nodiscard]] std::size_t size() const;
    /// records(), filtered (ObservedRecords' filters).
    [[nodiscard]] ObservedRecords filter_level(Level level) const;
    [[nodiscard]] ObservedRecords filter_logger(std::string_view name) const;
    [[nodiscard]] ObservedRecords filter_message(std::string_view message) const;
    [[nodiscard]] ObservedRecords filter_field(std::string_view key, const ObservedValue& value) const;
    /// Every record so far, and forgets them.
    [[nodiscard]] std::vector<ObservedRecord> take_all();
    void clear();

private:
    std::vector<std::shared_ptr<const OwnedRecord>> records_;  ///< guarded by mutex()
};

}  // namespace fieldlog::testing

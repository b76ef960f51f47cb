// SPDX-License-Identifier: MIT
// The owned copy (see owned_record.hpp) of fields that are not all scalars and strings.
#include "record/owned_record.hpp"

#include <algorithm>

#include "base/buffer.hpp"
#include "record/recorded_value.hpp"

namespace fieldlog::detail {

namespace {

/// Copies values into a node's block: measuring when it has no block (every take() returns
/// null and only the sizes grow), writing when it has one. A user type's value, and any object
/// or array holding more than scalars and strings, is recorded while measuring (its user code
/// runs once), kept in `recordings` in order, and moved into the block while writing.
class Copier {
public:
    /// Measuring: appends the recordings to `recordings`.
    explicit Copier(Buffer& recordings) noexcept : recordings_(recordings) {}
    /// Writing into [structs, structs + structs_size) and [chars, chars + chars_size), taking the
    /// recordings the measuring copy left in `recordings`.
    Copier(Buffer& recordings, char* structs, std::size_t structs_size, char* chars, std::size_t chars_size) noexcept
        : recordings_(recordings), structs_(structs), chars_(chars), structs_cap_(structs_size), chars_cap_(chars_size),
          writing_(true) {}

    [[nodiscard]] std::size_t structs_used() const noexcept { return structs_used_; }
    [[nodiscard]] std::size_t chars_used() const noexcept { return chars_used_; }

    Field* fields(std::span<const Field> in) {
        Field* out = take<Field>(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            const std::string_view key = text(in[i].key);
            const Value value = copy(in[i].value);
            if (out != nullptr) new (out + i) Field(key, value);
        }
        return out;
    }

private:
    template <typename T>
    T* take(std::size_t n) {
        static_assert(alignof(T) <= kCopyAlign);
        const std::size_t at = align_copy(structs_used_);
        const std::size_t end = at + n * sizeof(T);
        if (writing_ && end > structs_cap_) return nullptr;
        structs_used_ = end;
        return writing_ ? reinterpret_cast<T*>(structs_ + at) : nullptr;
    }
    char* take_chars(std::size_t n) noexcept {
        if (writing_ && chars_used_ + n > chars_cap_) return nullptr;
        char* at = writing_ ? chars_ + chars_used_ : nullptr;
        chars_used_ += n;
        return at;
    }
    static bool is_flat(const Value& v) noexcept {
        switch (v.kind()) {
            case Value::Kind::error_code:
            case Value::Kind::bytes:
            case Value::Kind::object:
            case Value::Kind::array:
            case Value::Kind::custom: return false;
            default: return true;
        }
    }
    /// Whether the object or array `v` holds only scalars and strings: copied as Fields or
    /// Values in the structs, not recorded.
    static bool is_flat_container(const Value& v) noexcept {
        if (v.kind() == Value::Kind::object) {
            for (const Field& f : v.as_object()) {
                if (!is_flat(f.value)) return false;
            }
            return true;
        }
        for (const Value& element : v.as_array()) {
            if (!is_flat(element)) return false;
        }
        return true;
    }
    std::string_view text(std::string_view s) {
        if (s.empty()) return {};
        char* at = take_chars(s.size());
        if (at == nullptr) return writing_ ? std::string_view() : s;
        std::memcpy(at, s.data(), s.size());
        return {at, s.size()};
    }
    /// `v` recorded (measuring), or its recording moved into the block (writing).
    Value recording(const Value& v) {
        if (!writing_) {
            const std::size_t before = recordings_.size();
            record_value(recordings_, v);
            take_chars(recordings_.size() - before);
            return v;
        }
        const char* made = recordings_.data() + recordings_taken_;
        const std::size_t size = recording_size(made);
        recordings_taken_ += size;
        char* at = take_chars(size);
        if (at == nullptr) return Value();
        std::memcpy(at, made, size);
        return recorded(at);
    }

    Value copy(const Value& v) {
        switch (v.kind()) {
            case Value::Kind::string: return Value(text(v.as_string()));
            case Value::Kind::error_code: {
                auto* code = take<std::error_code>(1);
                if (code == nullptr) return writing_ ? Value() : v;
                return Value(*new (code) std::error_code(v.as_error_code()));
            }
            case Value::Kind::bytes: {
                const std::span<const std::byte> in = v.as_bytes();
                const std::string_view copied =
                    text(std::string_view(reinterpret_cast<const char*>(in.data()), in.size()));
                return Value(Bytes{std::span(reinterpret_cast<const std::byte*>(copied.data()), copied.size())});
            }
            case Value::Kind::object:
                if (is_flat_container(v)) {
                    const Field* out = fields(v.as_object());
                    return Value(Object(std::span<const Field>(out, out == nullptr ? 0 : v.as_object().size())));
                }
                return recording(v);
            case Value::Kind::array: {
                if (!is_flat_container(v)) return recording(v);
                const std::span<const Value> in = v.as_array();
                Value* out = take<Value>(in.size());
                for (std::size_t i = 0; i < in.size(); ++i) {
                    const Value copied = copy(in[i]);
                    if (out != nullptr) new (out + i) Value(copied);
                }
                return Value(Array(std::span<const Value>(out, out == nullptr ? 0 : in.size())));
            }
            case Value::Kind::custom: return recording(v);
            default: return v;  // scalars, durations, times: held in the Value itself
        }
    }

    Buffer& recordings_;
    char* structs_ = nullptr;
    char* chars_ = nullptr;
    std::size_t structs_cap_ = 0;
    std::size_t chars_cap_ = 0;
    std::size_t structs_used_ = 0;
    std::size_t chars_used_ = 0;
    std::size_t recordings_taken_ = 0;
    bool writing_ = false;
};

}  // namespace

FieldsRoom measure_recorded_fields(std::span<const Field> fields, Buffer& scratch) {
    scratch.clear();  // the recordings, kept for copy_fields
    Copier measure(scratch);
    measure.fields(fields);
    return FieldsRoom{.structs = align_copy(measure.structs_used()), .chars = measure.chars_used(), .flat = false};
}

const Field* copy_recorded_fields(std::span<const Field> fields, const FieldsRoom& room, char* block, Buffer& scratch) {
    Copier write(scratch, block, room.structs, block + room.structs, room.chars);
    return write.fields(fields);
}

}  // namespace fieldlog::detail

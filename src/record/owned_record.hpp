// SPDX-License-Identifier: MIT
// The owned copy of a record: what a record becomes when it must outlive its logging call (an
// async ring entry, a kept backtrace record, a sink's copy_record) and what a context node's fields are. The copy
// points only into its own memory, or at what lives longer (the logger, the context nodes it
// holds references to, the call site). Fields that are all scalars and strings are sized and
// copied in one pass; any others in two, to size the block and then to fill it, user types and
// containers as recordings (recorded_value.hpp), so their code runs once, at the call.
//
//   Record ─► measure_fields, copy_fields, OwnedRecord ─► (later, any thread) OwnedRecord::record ─► Record
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string_view>

#include "base/record.hpp"
#include "encode/json_safe.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog {

namespace detail {
/// Room for a template's values as fields, named by its holes, and its message, which refers to
/// them: where OwnedRecord::record makes a packed copy's again, and where a template call that
/// does not go into a ring makes them from its values. The fields refer to what they were made
/// from and own nothing: they are never destroyed.
struct HoleFields {
    constexpr HoleFields() noexcept {}
    ~HoleFields() {}
    HoleFields(const HoleFields&) = delete;
    HoleFields& operator=(const HoleFields&) = delete;
    union {
        Field fields[kMaxHoles];
    };
    Message message{std::string_view()};
};
}  // namespace detail

/// The head of an owned copy (fieldlog/owned_record.hpp names it for sinks that keep records);
/// its fields lie right after it, their text and the message's after them, in its block.
struct OwnedRecord {
    /// The record's logger; in a copy_record copy, one of the copy's own, named as the view's.
    const detail::LoggerCore* logger;
    detail::ContextNode* bound;  ///< a reference, or (backtrace.hpp) a chain kept alive by its holder
    detail::ContextNode* scope;  ///< likewise
    Message message;  ///< plain text: formatted already when the call gave fmt arguments
    std::uint32_t field_count;
    Level level;
    Timestamp time;
    int thread_id;  ///< of the thread that logged it; 0: the one that writes it
    /// A copy_record copy copies a view, whose context is fields, not nodes: the first
    /// bound_count of `fields` are the bound (with()) ones, the next scope_count the scopes'.
    /// 0 in every other copy.
    std::uint32_t bound_count;
    std::uint32_t scope_count;
    /// An async ring's copy of a template call keeps its values packed (logger.hpp: pack_holes),
    /// not as fields: this makes their fields again. Null in every other copy.
    void (*unpack)(const TemplateSite& site, const char* in, Field* out) noexcept;

    /// The fields after the head: of a copy whose `unpack` is null.
    [[nodiscard]] std::span<const Field> fields() const noexcept {
        return {std::launder(reinterpret_cast<const Field*>(this + 1)), field_count};
    }
    /// The record again, of a copy that is not packed (a backtrace's, a copy_record's).
    [[nodiscard]] detail::Record record() const noexcept {
        return detail::Record{time, level, *logger, message, bound, scope, fields(), thread_id};
    }
    /// The record again, of any copy: a packed copy's fields and message are made in `room`,
    /// which the record then refers to.
    [[nodiscard]] detail::Record record(detail::HoleFields& room) const noexcept {
        if (unpack == nullptr) return record();
        unpack(message.site(), reinterpret_cast<const char*>(this + 1), room.fields);
        room.message = Message(message.site(), room.fields, message.where());
        return detail::Record{time, level, *logger, room.message, bound, scope, {room.fields, field_count}, thread_id};
    }
};

}  // namespace fieldlog

namespace fieldlog::detail {

class Buffer;

/// The head of `record`'s copy, whose field_count fields follow it and whose message, pointing
/// into the copy, is `message`.
inline OwnedRecord owned_head(const Record& record, std::uint32_t field_count, const Message& message,
                              int thread_id) noexcept {
    return OwnedRecord{.logger = &record.logger,
                       .bound = record.bound,
                       .scope = record.scope,
                       .message = message,
                       .field_count = field_count,
                       .level = record.level,
                       .time = record.time,
                       .thread_id = thread_id,
                       .bound_count = 0,
                       .scope_count = 0,
                       .unpack = nullptr};
}

/// Copies are 16-aligned within their blocks (a Field's alignment).
inline constexpr std::size_t kCopyAlign = alignof(std::max_align_t);
constexpr std::size_t align_copy(std::size_t n) noexcept { return (n + kCopyAlign - 1) & ~(kCopyAlign - 1); }
static_assert(kCopyAlign == 16);  // as measure_fields rounds flat fields' structs

/// The room a typed copy of `fields` takes (copy_fields): `structs` for the fields and what
/// they hold by address (nested flat arrays), then `chars` for every string and recording.
struct FieldsRoom {
    std::size_t structs = 0;  ///< a multiple of 16
    std::size_t chars = 0;
    bool flat = false;  ///< only scalars and strings: copied in one pass, no user code runs
};
/// measure_fields and copy_fields for fields that are not all scalars and strings: out of
/// line, as they run user code and record it.
FieldsRoom measure_recorded_fields(std::span<const Field> fields, Buffer& scratch);
const Field* copy_recorded_fields(std::span<const Field> fields, const FieldsRoom& room, char* block, Buffer& scratch);

/// Throws what a user type throws (its fieldlog_encode runs here, once), or bad_alloc. Unless
/// the fields are flat, `scratch` then holds their recordings until copy_fields takes them.
/// Inline for flat fields (the usual request context, most records): a pass over the sizes.
inline FieldsRoom measure_fields(std::span<const Field> fields, Buffer& scratch) {
    std::size_t chars = 0;
    for (const Field& f : fields) {
        chars += f.key.size();
        switch (f.value.kind()) {
            case Value::Kind::string: chars += f.value.as_string().size(); break;
            case Value::Kind::error_code:
            case Value::Kind::bytes:
            case Value::Kind::object:
            case Value::Kind::array:
            case Value::Kind::custom: return measure_recorded_fields(fields, scratch);
            default: break;
        }
    }
    return FieldsRoom{.structs = (fields.size() * sizeof(Field) + 15) & ~std::size_t{15}, .chars = chars, .flat = true};
}
/// Copies `fields` into `block` (room.structs + room.chars bytes, 8-aligned) as measured, with
/// the recordings measure_fields left in `scratch`; the copy points only into the block.
/// Throws like measure_fields.
inline const Field* copy_fields(std::span<const Field> fields, const FieldsRoom& room, char* block, Buffer& scratch) {
    if (!room.flat) return copy_recorded_fields(fields, room, block, scratch);
    auto* copied = reinterpret_cast<Field*>(block);
    char* at = block + room.structs;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const Field& in = fields[i];
        std::string_view key;
        at = copy_text(at, in.key, key);
        if (in.value.kind() == Value::Kind::string) {
            std::string_view value;
            at = copy_text(at, in.value.as_string(), value);
            new (copied + i) Field{key, Value(value)};
        } else {
            new (copied + i) Field{key, in.value};
        }
    }
    return copied;
}

}  // namespace fieldlog::detail

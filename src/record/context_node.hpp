// SPDX-License-Identifier: MIT
// Context nodes: the one form of request context, whatever attached it (Logger::with, Scope, a
// re-opened capture). A node is immutable once made: its fields as typed values, copied in
// (strings, nested containers, and user types recorded as replayable calls), and a reference
// to its parent, whose fields come first. It is encoded lazily: for a format only when a record
// in that format first needs it, with that pipeline's encoder options, and cached on the node
// for every thread that logs through it (one encoding per format and set of options, kept
// until the node goes). Reference-counted; made from and given back to the context pools.
//
//   Logger::with / Scope ─► make_context_node ─► record path: context_encoding(node, channel)
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <vector>

#include "encode/json_safe.hpp"
#include "encode/members.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"
#include "record/context_pool.hpp"

namespace fieldlog::detail {

class Buffer;

struct ContextNode {
    std::atomic<std::uint32_t> refs{1};
    std::uint32_t field_count = 0;
    ContextNode* parent = nullptr;  ///< holds a reference
    const Field* fields = nullptr;  ///< in the node's own block, like everything they point at
    std::array<std::atomic<const EncodedContext*>, format_count> encoded{};
};

/// Copies `s` to `at`, which has room for it, and returns the end of the copy (in `out`).
/// Inline, with no library call for short text: every key and string of a copy comes here.
[[gnu::always_inline]] inline char* copy_text(char* at, std::string_view s, std::string_view& out) noexcept {
    const std::size_t n = s.size();
    if (n <= kShortJsonText) {  // keys and short values
        copy_short(at, s.data(), n);
    } else if (n <= 48) {  // ids, paths: 16-byte moves, the last one ending at the end
        std::memcpy(at, s.data(), 16);
        if (n > 32) std::memcpy(at + 16, s.data() + 16, 16);
        std::memcpy(at + n - 16, s.data() + n - 16, 16);
    } else {
        std::memcpy(at, s.data(), n);
    }
    out = std::string_view(at, n);
    return at + n;
}

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

/// A node with `fields` (copied) after `parent`'s (whose reference it takes over; may be null),
/// with one reference. A user type's value is recorded now, once (`scratch` holds the
/// recordings meanwhile).
/// Throws what a user type throws, or bad_alloc; then the parent's reference is dropped.
ContextNode* make_context_node(ContextHome* home, ContextNode* parent, std::span<const Field> fields, Buffer& scratch);

inline void retain(ContextNode* node) noexcept { node->refs.fetch_add(1, std::memory_order_relaxed); }
/// Drops `count` references; the last gives the node (and then its parent's reference) back
/// to the pools. `current` is the calling thread's home, or null.
void release(ContextHome* current, ContextNode* node, std::uint32_t count = 1) noexcept;

/// A channel's encoder, as the record path sees it: options and their interned id.
struct ContextEncoding {
    const EncoderOptions& options;
    std::uint32_t options_id;
};

/// Encodes `node` (and the ancestors that lack it) for `encoding`, caches it, returns it. Cold.
/// `out` and `scratch` are the thread's buffers, free at this point.
const EncodedContext& encode_context(ContextHome* home, ContextNode* node, ContextEncoding encoding, Buffer& out,
                                     Buffer& scratch);

/// The encoding among `e` and those after it made under options `options_id`, or null.
inline const EncodedContext* find_encoded(const EncodedContext* e, std::uint32_t options_id) noexcept {
    while (e != nullptr && e->options_id != options_id) e = e->next;
    return e;
}

/// The encoded fields `node` brings to a record of `encoding` (null when `node` is). Inline:
/// every record asks, and almost always finds them made.
inline const EncodedContext* context_encoding(ContextHome* home, ContextNode* node, ContextEncoding encoding,
                                              Buffer& out, Buffer& scratch) {
    if (node == nullptr) return nullptr;
    const Format format = encoding.options.format;
    const EncodedContext* e =
        find_encoded(node->encoded[static_cast<std::size_t>(format)].load(std::memory_order_acquire), encoding.options_id);
    if (e == nullptr) [[unlikely]]
        e = &encode_context(home, node, encoding, out, scratch);
    return e;
}

/// The fields of the nodes from `node` up to, not including, `stop` (an ancestor, or null),
/// outermost first, appended to `out`.
void gather_fields(const ContextNode* node, const ContextNode* stop, std::vector<Field>& out);

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// Context nodes: the one form of request context, whatever attached it (Logger::with, Scope, a
// re-opened capture). A node is immutable once made: its fields as typed values, copied in
// (strings, nested containers, and user types recorded as replayable calls), and a reference
// to its parent, whose fields come first. Its fields are the owned copy (owned_record.hpp). It is encoded lazily: for a format only when a record
// in that format first needs it, with that pipeline's encoder options, and cached on the node
// for every thread that logs through it (one encoding per format and set of options, kept
// until the node goes). Reference-counted; made from and given back to the context pools.
//
//   Logger::with / Scope ─► make_context_node ─► record path: context_encoding(node, channel)
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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
    std::size_t copied_bytes = 0;   ///< what the copy of `fields` takes of the block
    std::array<std::atomic<const EncodedContext*>, format_count> encoded{};
};

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
/// `out` and `scratch` are the thread's buffers, free at this point. Throws bad_alloc, also
/// when `home` is null.
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

// SPDX-License-Identifier: MIT
// Context nodes (see context_node.hpp): made with the owned copy of their fields
// (owned_record.hpp), and encoded lazily when the record path asks. A node is one pooled
// block: the node, then its fields' copy.
#include "record/context_node.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "encode/encode.hpp"
#include "base/buffer.hpp"
#include "record/owned_record.hpp"

namespace fieldlog::detail {

namespace {

/// Encodes `node` after its parent's encoding `inherited`, and publishes it on the node (or
/// returns the one another thread published first).
const EncodedContext& encode_one(ContextHome* home, ContextNode& node, const Segment& inherited,
                                 ContextEncoding encoding, Buffer& out, Buffer& scratch) {
    std::vector<SegmentMember>& members = home->members;
    // One member per field, unless a user type writes keys at the top level: then again.
    FieldsRun run{.members = {}, .count = inherited.members.size() + node.field_count, .mask = 0};
    do {
        if (members.size() < run.count) members.resize(run.count);
        run.members = std::span<SegmentMember>(members.data(), run.count);
        out.clear();
        encode_fields(encoding.options, out, scratch, inherited, std::span<const Field>(node.fields, node.field_count), run);
    } while (run.count > run.members.size());
    const std::size_t size = sizeof(EncodedContext) + run.count * sizeof(SegmentMember) + out.size();
    void* block = pool_allocate(home, size);
    auto* made = new (block) EncodedContext{nullptr, encoding.options_id, static_cast<std::uint32_t>(out.size()),
                                            static_cast<std::uint32_t>(run.count), run.mask};
    if (run.count != 0) {  // a node of no fields has no member table to copy (nor, maybe, a vector)
        std::memcpy(const_cast<SegmentMember*>(made->members()), members.data(), run.count * sizeof(SegmentMember));
        std::memcpy(const_cast<char*>(made->bytes()), out.data(), out.size());
    }
    out.shrink();
    out.clear();

    std::atomic<const EncodedContext*>& slot = node.encoded[static_cast<std::size_t>(encoding.options.format)];
    const EncodedContext* head = slot.load(std::memory_order_acquire);
    do {
        if (const EncodedContext* other = find_encoded(head, encoding.options_id)) {
            pool_release(home, made);
            return *other;
        }
        made->next = head;
    } while (!slot.compare_exchange_weak(head, made, std::memory_order_acq_rel, std::memory_order_acquire));
    return *made;
}

}  // namespace

ContextNode* make_context_node(ContextHome* home, ContextNode* parent, std::span<const Field> fields, Buffer& scratch) {
    void* block = nullptr;
    try {
        const FieldsRoom room = measure_fields(fields, scratch);
        const std::size_t head = align_copy(sizeof(ContextNode));
        block = pool_allocate(home, head + room.structs + room.chars);
        auto* node = new (block) ContextNode;
        node->fields = copy_fields(fields, room, static_cast<char*>(block) + head, scratch);
        node->field_count = node->fields != nullptr ? static_cast<std::uint32_t>(fields.size()) : 0;
        node->copied_bytes = room.structs + room.chars;
        node->parent = parent;
        return node;
    } catch (...) {
        if (block != nullptr) pool_release(home, block);
        if (parent != nullptr) release(home, parent);
        throw;
    }
}

void release(ContextHome* current, ContextNode* node, std::uint32_t count) noexcept {
    while (node != nullptr) {
        // The last references (no other can appear: a copy needs one) end without a locked op.
        if (node->refs.load(std::memory_order_acquire) != count &&
            node->refs.fetch_sub(count, std::memory_order_acq_rel) != count)
            return;
        count = 1;  // what a node holds of its parent
        ContextNode* parent = node->parent;
        for (std::atomic<const EncodedContext*>& slot : node->encoded) {
            const EncodedContext* e = slot.load(std::memory_order_acquire);
            while (e != nullptr) {
                const EncodedContext* next = e->next;
                pool_release(current, const_cast<EncodedContext*>(e));
                e = next;
            }
        }
        node->~ContextNode();
        pool_release(current, node);
        node = parent;  // the reference the node held
    }
}

const EncodedContext& encode_context(ContextHome* home, ContextNode* node, ContextEncoding encoding, Buffer& out,
                                     Buffer& scratch) {
    if (home == nullptr) throw std::bad_alloc();  // an async writer that could get no pool
    const auto format = static_cast<std::size_t>(encoding.options.format);
    for (;;) {
        // The outermost node on the way up that lacks this encoding: its parent has it, or it has none.
        ContextNode* target = node;
        const EncodedContext* inherited = nullptr;
        while (target->parent != nullptr) {
            inherited = find_encoded(target->parent->encoded[format].load(std::memory_order_acquire), encoding.options_id);
            if (inherited != nullptr) break;
            target = target->parent;
        }
        const Segment parent_segment = inherited != nullptr ? inherited->segment(member_key_offset(encoding.options)) : Segment{};
        const EncodedContext& made = encode_one(home, *target, parent_segment, encoding, out, scratch);
        if (target == node) return made;
    }
}

void gather_fields(const ContextNode* node, const ContextNode* stop, std::vector<Field>& out) {
    const std::size_t start = out.size();
    for (const ContextNode* n = node; n != nullptr && n != stop; n = n->parent) {
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(start), n->fields, n->fields + n->field_count);
    }
}

}  // namespace fieldlog::detail

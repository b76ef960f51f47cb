// SPDX-License-Identifier: MIT
// Context nodes (see context_node.hpp): the typed copy made when a node is made, and the lazy
// encoding the record path asks for. A node is one pooled block: the node, then its structs
// (the top-level fields, nested flat containers' arrays), then the bytes of every string it
// holds and the recordings of its user types (recorded_value.hpp). Fields that are all scalars
// and strings are sized and copied in one pass; any others in two, to size the block and then
// to fill it (a user type runs once, in the first).
#include "record/context_node.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "encode/encode.hpp"
#include "base/buffer.hpp"
#include "record/recorded_value.hpp"

namespace fieldlog::detail {

namespace {

constexpr std::size_t kAlign = alignof(std::max_align_t);
constexpr std::size_t align_up(std::size_t n) noexcept { return (n + kAlign - 1) & ~(kAlign - 1); }
static_assert(kAlign == 16);  // as measure_fields (context_node.hpp) rounds flat fields' structs

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
            const Field copied{text(in[i].key), copy(in[i].value)};
            if (out != nullptr) new (out + i) Field(copied);
        }
        return out;
    }

private:
    template <typename T>
    T* take(std::size_t n) {
        static_assert(alignof(T) <= kAlign);
        const std::size_t at = align_up(structs_used_);
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

FieldsRoom measure_recorded_fields(std::span<const Field> fields, Buffer& scratch) {
    scratch.clear();  // the recordings, kept for copy_fields
    Copier measure(scratch);
    measure.fields(fields);
    return FieldsRoom{.structs = align_up(measure.structs_used()), .chars = measure.chars_used(), .flat = false};
}

const Field* copy_recorded_fields(std::span<const Field> fields, const FieldsRoom& room, char* block, Buffer& scratch) {
    Copier write(scratch, block, room.structs, block + room.structs, room.chars);
    return write.fields(fields);
}

ContextNode* make_context_node(ContextHome* home, ContextNode* parent, std::span<const Field> fields, Buffer& scratch) {
    void* block = nullptr;
    try {
        const FieldsRoom room = measure_fields(fields, scratch);
        const std::size_t head = align_up(sizeof(ContextNode));
        block = pool_allocate(home, head + room.structs + room.chars);
        auto* node = new (block) ContextNode;
        node->fields = copy_fields(fields, room, static_cast<char*>(block) + head, scratch);
        node->field_count = node->fields != nullptr ? static_cast<std::uint32_t>(fields.size()) : 0;
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

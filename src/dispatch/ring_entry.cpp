// SPDX-License-Identifier: MIT
// The owned copy into the ring (caller side), and what the writer and the crash path need of it
// besides the Record it makes again (writer side).
#include "dispatch/ring_entry.hpp"

#include <iterator>
#include <new>

#include "base/buffer.hpp"
#include "base/thread_id.hpp"
#include "dispatch/pipeline.hpp"
#include "encode/encode.hpp"
#include "encode/message_text.hpp"
#include "record/context_node.hpp"
#include "record/owned_record.hpp"
#include "record/thread_context.hpp"

namespace fieldlog::detail {
namespace {

// The encoders load a short string as one 16-byte block from its start (json_safe.hpp). This
// room after the last string keeps those loads inside the record's own entry, which nothing
// writes while the writer reads it (the thread's next entry follows it at once).
constexpr std::size_t kOverreadRoom = 16;

static_assert(sizeof(OwnedRecord) % alignof(Field) == 0);  // its fields follow it

/// Makes sure `node` (not null) carries its encoding for every channel that takes the record.
void encode_context_ahead(ThreadContext& context, const Pipeline& pipeline, ContextNode* node, Level level,
                          FilterBits admitted) {
    for (const Channel& channel : pipeline.routing.channels) {
        if (!channel.lines || !channel.takes(level, admitted)) continue;
        context_encoding(context.home, node, ContextEncoding{channel.options, channel.options_id}, context.record,
                         context.scratch);
    }
}

/// The holes of a template the ring keeps as one, its text where it lies, in static storage, for
/// the writer (or the crash path) to render: a template whose holes are the record's first
/// fields, each a string, a bool or a number (rendered with no encoder and no heap, as the
/// crash path needs). Their keys are the template's names, in static storage too, so the copy
/// takes the holes' structs and string values only.
struct KeptHoles {
    bool kept = false;
    std::size_t count = 0;
    std::size_t structs = 0;  ///< the holes' Fields
    std::size_t size = 0;     ///< the Fields and the string values
};

KeptHoles kept_holes(const Record& record) noexcept {
    const Message& message = record.message;
    if (message.kind() != Message::Kind::templated || message.holes() != record.fields.data()) return {};
    const std::size_t count = message.site().hole_count;
    constexpr auto bit = [](Value::Kind kind) { return 1U << static_cast<unsigned>(kind); };
    constexpr unsigned kKept = bit(Value::Kind::string) | bit(Value::Kind::boolean) | bit(Value::Kind::int64) |
                               bit(Value::Kind::uint64) | bit(Value::Kind::float64);
    std::size_t chars = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const Value& value = record.fields[i].value;
        if ((bit(value.kind()) & kKept) == 0) return {};
        if (value.kind() == Value::Kind::string) chars += value.as_string().size();
    }
    return {true, count, count * sizeof(Field), count * sizeof(Field) + chars};
}

/// Copies kept holes (kept_holes) to `structs`, their string values to `chars`, which has room
/// for them.
void copy_kept_holes(std::span<const Field> holes, char* structs, char* chars) noexcept {
    auto* copied = reinterpret_cast<Field*>(structs);
    for (const Field& hole : holes) {
        if (hole.value.kind() == Value::Kind::string) {
            std::string_view value;
            chars = copy_text(chars, hole.value.as_string(), value);
            new (copied++) Field{hole.key, Value(value)};
        } else {
            new (copied++) Field{hole.key, hole.value};
        }
    }
}

std::size_t context_bytes(const ContextNode* node, const Channel& channel) noexcept {
    if (node == nullptr) return 0;
    const EncodedContext* e = find_encoded(
        node->encoded[static_cast<std::size_t>(channel.options.format)].load(std::memory_order_acquire), channel.options_id);
    return e != nullptr ? e->size : 0;
}

}  // namespace

std::size_t line_bound(const OwnedRecord& queued, std::size_t size, const Channel& channel) noexcept {
    // An escaped byte takes at most 6 (\u00XX); every other byte of the copy (a field's 40,
    // a recorded call's one and more) is written as at most 6 (a recorded error code's 13 as
    // at most 78: the crash path writes a user category as "(name:value)", its name cut to
    // 64 bytes that need no escaping; a kept hole's key, not in the copy, is a name of at most
    // 64 bytes that need none, well within its field's 240); the header's fixed parts in under
    // 1 KiB.
    constexpr std::size_t kEscapedAtMost = 6;
    constexpr std::size_t kFixedParts = 1024;
    // A template kept as one is rendered into the line: its text, and each hole's value (at most
    // three bytes for a byte of the copy, invalid UTF-8 replaced), or a number with a spec (a
    // width and precision of at most 64: message_template.hpp) in at most 512.
    constexpr std::size_t kHoleWithSpecAtMost = 512;
    const std::size_t rendered = queued.message.kind() != Message::Kind::templated
                                     ? 0
                                     : queued.message.text().size() + 3 * size +
                                           kHoleWithSpecAtMost * queued.message.site().hole_count;
    const std::size_t texts = size + rendered + queued.logger->name.text.size() +
                              std::string_view(queued.message.where().file_name()).size() +
                              std::string_view(queued.message.where().function_name()).size();
    return kFixedParts + kEscapedAtMost * texts + context_bytes(queued.bound, channel) +
           context_bytes(queued.scope, channel);
}

bool queue_record(ThreadContext& context, const Pipeline& pipeline, const Record& record, FilterBits admitted) noexcept {
    Buffer& text = context.record;  // free in async mode: no line is made here
    const Message& message = record.message;
    try {
        if (record.bound != nullptr) encode_context_ahead(context, pipeline, record.bound, record.level, admitted);
        if (record.scope != nullptr) encode_context_ahead(context, pipeline, record.scope, record.level, admitted);
        std::string_view message_text = message.text();
        std::span<const Field> fields = record.fields;  // what copy_fields copies: all but kept holes
        KeptHoles kept;
        if (message.kind() != Message::Kind::plain) [[unlikely]] {
            kept = kept_holes(record);
            text.clear();
            if (!kept.kept) append_message_text(text, message, pipeline.redact);
            message_text = text.view();
            fields = fields.subspan(kept.count);
        }
        const FieldsRoom room = measure_fields(fields, context.scratch);
        const std::size_t size = sizeof(OwnedRecord) + room.structs + room.chars + message_text.size() + kept.size +
                                 kOverreadRoom;
        const AsyncWriter::Slot slot = pipeline.writer->reserve(size);
        if (slot.payload == nullptr) {
            text.shrink();
            if (slot.outcome == AsyncWriter::Enqueued::too_large) return false;
            ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(record.level)]);
            return true;
        }
        // The kept holes, the other fields, what those hold by address and their text, the
        // message, the kept holes' string values.
        char* const copied_fields = slot.payload + sizeof(OwnedRecord) + kept.structs;
        char* const copied_message = copied_fields + room.structs + room.chars;
        std::string_view message_copy;
        copy_text(copied_message, message_text, message_copy);
        text.shrink();
        copy_fields(fields, room, copied_fields, context.scratch);
        auto* const head = new (slot.payload) OwnedRecord(owned_head(
            record, static_cast<std::uint32_t>(record.fields.size()), Message(message_copy, message.where()),
            record.thread_id != 0 ? record.thread_id : cached_thread_id()));
        if (kept.kept) [[unlikely]] {
            copy_kept_holes(record.fields.first(kept.count), slot.payload + sizeof(OwnedRecord), copied_message);
            head->message = Message(message.site(), head->fields().data(), message.where());
        }
        if (record.bound != nullptr) retain(record.bound);
        if (record.scope != nullptr) retain(record.scope);
        pipeline.writer->commit(slot.payload, record.time, admitted);
        ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(record.level)]);
    } catch (...) {  // a user type or formatter threw, or memory ran out: drop this record
        text.shrink();
    }
    return true;
}

}  // namespace fieldlog::detail

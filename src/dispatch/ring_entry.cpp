// SPDX-License-Identifier: MIT
// The owned copy into the ring (caller side), and what the writer and the crash path need of it
// besides the Record it makes again (writer side).
#include "dispatch/ring_entry.hpp"

#include <iterator>
#include <new>

#include "base/buffer.hpp"
#include "base/thread_id.hpp"
#include "dispatch/async_ring.hpp"
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

/// Makes sure the record's context nodes (one at least) carry their encoding for every channel
/// that takes the record. Throws bad_alloc.
void encode_context_ahead(ThreadContext& context, const Pipeline& pipeline, const Record& record, FilterBits admitted) {
    for (const Channel& channel : pipeline.routing.channels) {
        if (!channel.lines || !channel.takes(record.level, admitted)) continue;
        for (ContextNode* const node : {record.bound, record.scope}) {
            if (node != nullptr)
                context_encoding(context.home, node, ContextEncoding{channel.options, channel.options_id},
                                 context.record, context.scratch);
        }
    }
}

/// Writes the head of the copy at `slot`, whose `field_count` fields (or packed values, which
/// `unpack` makes fields of) lie after it and whose message is `message`, and commits it: the
/// writer may take it from here on.
[[gnu::always_inline]] inline void commit_entry(ThreadContext& context, const Pipeline& pipeline, const Record& record,
                                                char* slot, std::uint32_t field_count, const Message& message,
                                                FilterBits admitted, decltype(OwnedRecord::unpack) unpack = nullptr) noexcept {
    new (slot) OwnedRecord(owned_head(record, field_count, message,
                                      record.thread_id != 0 ? record.thread_id : cached_thread_id(), unpack));
    if (record.bound != nullptr) retain(record.bound);
    if (record.scope != nullptr) retain(record.scope);
    pipeline.writer->commit(slot, record.time, admitted);
    ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(record.level)]);
}

/// A reservation that failed: true when the record is done with (dropped and counted), false
/// when it is too large for a ring.
bool unreserved(ThreadContext& context, const Record& record, AsyncWriter::Enqueued outcome) noexcept {
    if (outcome == AsyncWriter::Enqueued::too_large) return false;
    ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(record.level)]);
    return true;
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
    // a packed hole's 8, a recorded call's one and more) is written as at most 6 (a recorded
    // error code's 13 as at most 78: the crash path writes a user category as "(name:value)",
    // its name cut to 64 bytes that need no escaping); the header's fixed parts in under 1 KiB.
    // A packed hole's key is not in the copy: a name of kMaxHoleName bytes at most, which need
    // no escaping, and its quotes, colon and comma.
    constexpr std::size_t kEscapedAtMost = 6;
    constexpr std::size_t kFixedParts = 1024;
    // A template left to the writer is rendered into the line: its text, and each hole's value
    // (at most three bytes for a byte of the copy, invalid UTF-8 replaced), or a number with a
    // spec (a width and precision of at most 64: message_template.hpp) in at most 512.
    constexpr std::size_t kHoleWithSpecAtMost = 512;
    const std::size_t rendered = queued.message.kind() != Message::Kind::templated
                                     ? 0
                                     : queued.message.text().size() + 3 * size +
                                           kHoleWithSpecAtMost * queued.message.site().hole_count;
    const std::size_t texts = size + rendered + queued.logger->name.text.size() +
                              std::string_view(queued.message.where().file_name()).size() +
                              std::string_view(queued.message.where().function_name()).size();
    const std::size_t keys = queued.unpack != nullptr ? (kMaxHoleName + 4) * std::size_t{queued.field_count} : 0;
    return kFixedParts + kEscapedAtMost * texts + keys + context_bytes(queued.bound, channel) +
           context_bytes(queued.scope, channel);
}

bool queue_record(ThreadContext& context, const Pipeline& pipeline, const Record& record, FilterBits admitted) noexcept {
    Buffer& text = context.record;  // free in async mode: no line is made here
    const Message& message = record.message;
    try {
        if (record.bound != nullptr || record.scope != nullptr)
            encode_context_ahead(context, pipeline, record, admitted);
        std::string_view message_text = message.text();
        if (message.kind() != Message::Kind::plain) [[unlikely]] {
            text.clear();
            append_message_text(text, message, pipeline.redact);
            message_text = text.view();
        }
        const FieldsRoom room = measure_fields(record.fields, context.scratch);
        const std::size_t size = sizeof(OwnedRecord) + room.structs + room.chars + message_text.size() + kOverreadRoom;
        const AsyncWriter::Slot slot = pipeline.writer->reserve(size);
        if (slot.payload == nullptr) {
            text.shrink();
            return unreserved(context, record, slot.outcome);
        }
        // The fields, what those hold by address and their text, the message.
        char* const copied_fields = slot.payload + sizeof(OwnedRecord);
        std::string_view message_copy;
        copy_text(copied_fields + room.structs + room.chars, message_text, message_copy);
        text.shrink();
        copy_fields(record.fields, room, copied_fields, context.scratch);
        commit_entry(context, pipeline, record, slot.payload, static_cast<std::uint32_t>(record.fields.size()),
                     Message(message_copy, message.where()), admitted);
    } catch (...) {  // a user type or formatter threw, or memory ran out: drop this record
        text.shrink();
    }
    return true;
}

bool queue_call(ThreadContext& context, const Pipeline& pipeline, const Record& record, const TemplateCall& call,
                FilterBits admitted) noexcept {
    const TemplateSite& site = *call.site;
    if (call.chars == kNullString) return false;  // a null is a field's null
    try {
        if (record.bound != nullptr || record.scope != nullptr)
            encode_context_ahead(context, pipeline, record, admitted);
    } catch (...) {  // memory ran out: drop this record
        return true;
    }
    const AsyncWriter::Slot slot = pipeline.writer->reserve(sizeof(OwnedRecord) + packed_size(site.hole_count, call.chars));
    if (slot.payload == nullptr) return unreserved(context, record, slot.outcome);
    // The values packed; the writer makes their fields, named by the template, and renders the
    // message (OwnedRecord::record).
    call.codec->pack(call.values, slot.payload + sizeof(OwnedRecord));
    commit_entry(context, pipeline, record, slot.payload, static_cast<std::uint32_t>(site.hole_count),
                 Message(site, nullptr, call.where), admitted, call.codec->unpack);
    return true;
}

}  // namespace fieldlog::detail

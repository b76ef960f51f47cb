// SPDX-License-Identifier: MIT
// The owned copy into the ring (caller side): a Record's, and a template call's made straight
// from its values (Logger::emit_call); and what the writer and the crash path need of it besides
// the Record it makes again (writer side).
#include "dispatch/ring_entry.hpp"

#include <iterator>
#include <new>

#include "base/buffer.hpp"
#include "base/thread_id.hpp"
#include "dispatch/async_ring.hpp"
#include "dispatch/pipeline.hpp"
#include "dispatch/record_path.hpp"
#include "encode/encode.hpp"
#include "encode/message_text.hpp"
#include "fieldlog/logger.hpp"
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

/// A reservation that failed: true when the record is done with (dropped and counted), false
/// when it is too large for a ring.
bool unreserved(ThreadContext& context, Level level, AsyncWriter::Enqueued outcome) noexcept {
    if (outcome == AsyncWriter::Enqueued::too_large) return false;
    ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(level)]);
    return true;
}

/// A template call's copy into this thread's ring, made from its values in one pass: a word per
/// value and the strings' bytes (logger.hpp: pack_holes). The writer makes their fields again,
/// named by the template, and renders the message (OwnedRecord::record). True when the record
/// is done with (queued, or dropped and counted); false, with nothing queued, when a value is a
/// null character pointer (a field's null) or the record is too large for a ring.
inline bool queue_call(ThreadContext& context, const Pipeline& pipeline, const LoggerCore& logger, ContextNode* bound,
                       Level level, const TemplateCall& call) noexcept {
    const TemplateSite& site = *call.site;
    if (call.chars == kNullString) return false;
    ContextNode* const scope = context.home->top;
    const Timestamp time = record_time(context, pipeline);
    const AsyncWriter::Slot slot = pipeline.writer->reserve(sizeof(OwnedRecord) + packed_size(site.hole_count, call.chars));
    if (slot.payload == nullptr) return unreserved(context, level, slot.outcome);
    call.codec->pack(call.values, slot.payload + sizeof(OwnedRecord));
    new (slot.payload) OwnedRecord{.logger = &logger,
                                   .bound = bound,
                                   .scope = scope,
                                   .message = Message(site, nullptr, call.where),
                                   .field_count = static_cast<std::uint32_t>(site.hole_count),
                                   .level = level,
                                   .time = time,
                                   .thread_id = cached_thread_id(),
                                   .bound_count = 0,
                                   .scope_count = 0,
                                   .unpack = call.codec->unpack};
    pipeline.writer->commit(slot.payload, kEveryLogger, context.counters);
    return true;
}

/// `call`'s values as fields in `room`, named by the template, with its message: for every way
/// but the ring's one-pass copy.
std::span<const Field> hole_fields(HoleFields& room, const TemplateCall& call) noexcept {
    call.codec->write(*call.site, call.values, room.fields);
    room.message = Message(*call.site, room.fields, call.where);
    return {room.fields, call.site->hole_count};
}

const EncodedContext* encoding_for(const ContextNode& node, const Channel& channel) noexcept {
    return find_encoded(node.encoded[static_cast<std::size_t>(channel.options.format)].load(std::memory_order_acquire),
                        channel.options_id);
}

/// The bytes the copies of `node`'s fields and its ancestors' take.
std::size_t chain_bytes(const ContextNode* node) noexcept {
    std::size_t bytes = 0;
    for (; node != nullptr; node = node->parent) bytes += node->copied_bytes;
    return bytes;
}

std::size_t chain_fields(const ContextNode* node) noexcept {
    std::size_t count = 0;
    for (; node != nullptr; node = node->parent) count += node->field_count;
    return count;
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
    // The context: its encodings, or its fields' copies written as fields.
    std::size_t context = 0;
    bool encoded = true;
    for (const ContextNode* node : {queued.bound, queued.scope}) {
        if (node == nullptr) continue;
        const EncodedContext* e = encoding_for(*node, channel);
        context += e != nullptr ? e->size : 0;
        encoded = encoded && e != nullptr;
    }
    if (!encoded) context += kEscapedAtMost * (chain_bytes(queued.bound) + chain_bytes(queued.scope));
    return kFixedParts + kEscapedAtMost * texts + keys + context;
}

bool context_encoded(const Record& record, const Channel& channel) noexcept {
    return (record.bound == nullptr || encoding_for(*record.bound, channel) != nullptr) &&
           (record.scope == nullptr || encoding_for(*record.scope, channel) != nullptr);
}

std::span<const Field> context_as_fields(const Record& record, std::span<Field> room) noexcept {
    const std::size_t count = chain_fields(record.bound) + chain_fields(record.scope) + record.fields.size();
    if (count > room.size()) return {};
    // Each chain from its innermost node up: a node's fields go before its child's.
    std::size_t end = 0;
    for (const ContextNode* chain : {record.bound, record.scope}) {
        end += chain_fields(chain);
        std::size_t at = end;
        for (const ContextNode* node = chain; node != nullptr; node = node->parent) {
            at -= node->field_count;
            for (std::uint32_t i = 0; i < node->field_count; ++i) new (&room[at + i]) Field(node->fields[i]);
        }
    }
    for (const Field& field : record.fields) new (&room[end++]) Field(field);
    return room.first(count);
}

bool queue_record(ThreadContext& context, const Pipeline& pipeline, const Record& record, FilterBits admitted) noexcept {
    Buffer& text = context.record;  // free in async mode: no line is made here
    const Message& message = record.message;
    try {
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
            return unreserved(context, record.level, slot.outcome);
        }
        // The fields, what those hold by address and their text, the message.
        char* const copied_fields = slot.payload + sizeof(OwnedRecord);
        std::string_view message_copy;
        copy_text(copied_fields + room.structs + room.chars, message_text, message_copy);
        text.shrink();
        copy_fields(record.fields, room, copied_fields, context.scratch);
        new (slot.payload) OwnedRecord(owned_head(record, static_cast<std::uint32_t>(record.fields.size()),
                                                  Message(message_copy, message.where()),
                                                  record.thread_id != 0 ? record.thread_id : cached_thread_id()));
        pipeline.writer->commit(slot.payload, admitted, context.counters);
    } catch (...) {  // a user type or formatter threw, or memory ran out: drop this record
        text.shrink();
    }
    return true;
}

}  // namespace fieldlog::detail

namespace fieldlog {

void Logger::emit_call(Level level, const detail::TemplateCall& call) const noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr || context->busy || detail::way_of(*context, *core_, level) != detail::Way::plain)
        [[unlikely]] {
        detail::HoleFields room;
        const std::span<const Field> holes = detail::hole_fields(room, call);
        emit(level, room.message, holes);
        return;
    }
    context->busy = true;
    const detail::Pipeline* pipeline = detail::acquire_pipeline(*context);
    // The one-pass copy takes a record that needs no routing rule or sampler here.
    if (pipeline == nullptr || !pipeline->writer || level < pipeline->unfiltered_level || level > Level::fatal ||
        !detail::queue_call(*context, *pipeline, *core_, context_, level, call)) {
        detail::HoleFields room;
        const std::span<const Field> holes = detail::hole_fields(room, call);
        detail::route_fields(*context, pipeline, *core_, context_, level, room.message, holes);
    }
    detail::release_pipeline(*context);
    context->busy = false;
}

}  // namespace fieldlog

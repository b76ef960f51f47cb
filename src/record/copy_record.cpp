// SPDX-License-Identifier: MIT
// copy_record (fieldlog/owned_record.hpp): a view's parts in an owned copy of a block of its own.
// A translation unit apart from owned_record.cpp, whose copy of recorded values the async
// caller runs: code added there changes how the compiler inlines it.
#include "fieldlog/owned_record.hpp"

#include <cstdint>
#include <iterator>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/buffer.hpp"
#include "encode/message_text.hpp"
#include "record/owned_record.hpp"

namespace fieldlog {
namespace {

// A copy's block: its head, its fields and their text, the message's text, then the logger it
// names (one of its own: a view names its logger by text).
static_assert(alignof(detail::LoggerCore) <= detail::kCopyAlign && alignof(OwnedRecord) <= detail::kCopyAlign);

void free_copy(const OwnedRecord* copy) noexcept {
    copy->logger->~LoggerCore();  // everything else in the block is trivially destructible
    ::operator delete(const_cast<OwnedRecord*>(copy), std::align_val_t{detail::kCopyAlign});
}

}  // namespace

std::shared_ptr<const OwnedRecord> copy_record(const RecordView& record) {
    if (record.message == nullptr) throw std::invalid_argument("copy_record: the view holds a line, not the record's parts");
    // One list of the three, so that one measure and one copy keep the recordings in order.
    std::vector<Field> all;
    all.reserve(record.bound.size() + record.scope.size() + record.fields.size());
    for (const std::span<const Field> part : {record.bound, record.scope, record.fields}) {
        all.insert(all.end(), part.begin(), part.end());
    }
    if (all.size() > std::numeric_limits<std::uint32_t>::max()) throw std::length_error("copy_record: more fields than a copy holds");
    detail::Buffer recordings;
    const detail::FieldsRoom room = detail::measure_fields(all, recordings);
    detail::Buffer message;
    if (record.message->kind() != Message::Kind::plain) {
        detail::append_message_text(message, *record.message, {});
    } else {
        message.append(record.message->text());
    }

    const std::size_t logger_at = detail::align_copy(sizeof(OwnedRecord) + room.structs + room.chars + message.size());
    char* const block = static_cast<char*>(
        ::operator new(logger_at + sizeof(detail::LoggerCore), std::align_val_t{detail::kCopyAlign}));
    const detail::LoggerCore* logger = nullptr;
    try {
        logger = new (block + logger_at) detail::LoggerCore(record.logger);
        detail::copy_fields(all, room, block + sizeof(OwnedRecord), recordings);
    } catch (...) {
        if (logger != nullptr) logger->~LoggerCore();
        ::operator delete(block, std::align_val_t{detail::kCopyAlign});
        throw;
    }
    std::string_view message_copy;
    detail::copy_text(block + sizeof(OwnedRecord) + room.structs + room.chars, message.view(), message_copy);
    const auto* copy = new (block) OwnedRecord{.logger = logger,
                                               .bound = nullptr,
                                               .scope = nullptr,
                                               .message = Message(message_copy, record.message->where()),
                                               .field_count = static_cast<std::uint32_t>(all.size()),
                                               .level = record.level,
                                               .time = record.time,
                                               .thread_id = record.thread_id,
                                               .bound_count = static_cast<std::uint32_t>(record.bound.size()),
                                               .scope_count = static_cast<std::uint32_t>(record.scope.size()),
                                               .unpack = nullptr};
    return std::shared_ptr<const OwnedRecord>(copy, free_copy);  // frees the block if it throws
}

RecordView view_of(const OwnedRecord& copy) noexcept {
    const std::span<const Field> fields = copy.fields();
    return RecordView{.bytes = {},
                      .level = copy.level,
                      .time = copy.time,
                      .logger = copy.logger->name.text,
                      .message = &copy.message,
                      .bound = fields.first(copy.bound_count),
                      .scope = fields.subspan(copy.bound_count, copy.scope_count),
                      .fields = fields.subspan(copy.bound_count + copy.scope_count),
                      .options = nullptr,
                      .thread_id = copy.thread_id};
}

}  // namespace fieldlog

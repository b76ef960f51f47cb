// SPDX-License-Identifier: MIT
// RecordCopy (fieldlog/record_copy.hpp): the record path's owned copy (owned_record.hpp) of a
// view's parts, in one block: its context flattened into its fields, the logger's name beside it.
#include "fieldlog/record_copy.hpp"

#include <cstdint>
#include <iterator>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/buffer.hpp"
#include "record/owned_record.hpp"

namespace fieldlog {

/// The record path's owned copy, and what a view has that it does not: the logger's name (a
/// view names it by text) and the Message a view points to.
struct RecordCopy::Block {
    detail::OwnedRecord record;
    std::string_view logger;
    Message message;
};

void RecordCopy::Release::operator()(Block* block) const noexcept {
    // Everything in the block is trivially destructible: it is only given back.
    ::operator delete(block, std::align_val_t{detail::kCopyAlign});
}

RecordCopy::RecordCopy(const RecordView& record) {
    if (record.message == nullptr) throw std::invalid_argument("RecordCopy: the view holds a line, not the record's parts");
    // One list of the three, so that one measure and one copy keep the recordings in order.
    std::vector<Field> all;
    all.reserve(record.bound.size() + record.scope.size() + record.fields.size());
    for (const std::span<const Field> part : {record.bound, record.scope, record.fields}) {
        all.insert(all.end(), part.begin(), part.end());
    }
    detail::Buffer recordings;
    const detail::FieldsRoom room = detail::measure_fields(all, recordings);
    detail::Buffer message;
    if (record.message->formatted()) {
        fmt::vformat_to(std::back_inserter(message), record.message->text(), record.message->args());
    } else {
        message.append(record.message->text());
    }

    const auto count = [](std::size_t n) {
        if (n > std::numeric_limits<std::uint32_t>::max()) throw std::length_error("RecordCopy: more fields than a copy holds");
        return static_cast<std::uint32_t>(n);
    };
    const std::uint32_t field_count = count(all.size());

    const std::size_t head = detail::align_copy(sizeof(Block));
    const std::size_t size = head + room.structs + room.chars + message.size() + record.logger.size();
    char* const raw = static_cast<char*>(::operator new(size, std::align_val_t{detail::kCopyAlign}));
    const Field* fields = nullptr;
    try {
        fields = detail::copy_fields(all, room, raw + head, recordings);
    } catch (...) {
        ::operator delete(raw, std::align_val_t{detail::kCopyAlign});
        throw;
    }
    std::string_view message_copy;
    std::string_view logger_copy;
    char* const text = detail::copy_text(raw + head + room.structs + room.chars, message.view(), message_copy);
    detail::copy_text(text, record.logger, logger_copy);
    block_.reset(new (raw) Block{
        .record = {.logger = nullptr,
                   .bound = nullptr,
                   .scope = nullptr,
                   .where = record.message->where(),
                   .message = message_copy,
                   .fields = fields,
                   .field_count = field_count,
                   .level = record.level,
                   .time = record.time,
                   .thread_id = record.thread_id,
                   .bound_count = static_cast<std::uint32_t>(record.bound.size()),  // each at most field_count
                   .scope_count = static_cast<std::uint32_t>(record.scope.size())},
        .logger = logger_copy,
        .message = Message(message_copy, record.message->where()),
    });
}

RecordCopy& RecordCopy::operator=(RecordCopy&&) noexcept = default;
RecordCopy::~RecordCopy() = default;

RecordView RecordCopy::view() const noexcept {
    const detail::OwnedRecord& r = block_->record;
    const std::span<const Field> fields(r.fields, r.field_count);
    return RecordView{.bytes = {},
                      .level = r.level,
                      .time = r.time,
                      .logger = block_->logger,
                      .message = &block_->message,
                      .bound = fields.first(r.bound_count),
                      .scope = fields.subspan(r.bound_count, r.scope_count),
                      .fields = fields.subspan(r.bound_count + r.scope_count),
                      .options = nullptr,
                      .thread_id = r.thread_id};
}

}  // namespace fieldlog

// SPDX-License-Identifier: MIT
// TypedRecordCopy (fieldlog/typed_record_copy.hpp): a typed record's fields copied as the async
// rings and backtraces copy a record's (owned_record.hpp), into one block behind a head that
// holds the rest.
#include "fieldlog/typed_record_copy.hpp"

#include <iterator>
#include <new>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/buffer.hpp"
#include "record/owned_record.hpp"

namespace fieldlog {

struct TypedRecordCopy::Block {
    Message message;
    Timestamp time;
    std::string_view logger;
    std::span<const Field> bound;
    std::span<const Field> scope;
    std::span<const Field> fields;
    Level level;
    int thread_id;
};

void TypedRecordCopy::Release::operator()(Block* block) const noexcept {
    // Everything in the block is trivially destructible: it is only given back.
    ::operator delete(block, std::align_val_t{detail::kCopyAlign});
}

TypedRecordCopy::TypedRecordCopy(const RecordView& record) {
    if (record.message == nullptr) throw std::invalid_argument("TypedRecordCopy: the view holds a line, not the record's parts");
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
    const std::span<const Field> copied(fields, all.size());
    block_.reset(new (raw) Block{
        .message = Message(message_copy, record.message->where()),
        .time = record.time,
        .logger = logger_copy,
        .bound = copied.first(record.bound.size()),
        .scope = copied.subspan(record.bound.size(), record.scope.size()),
        .fields = copied.last(record.fields.size()),
        .level = record.level,
        .thread_id = record.thread_id,
    });
}

TypedRecordCopy& TypedRecordCopy::operator=(TypedRecordCopy&&) noexcept = default;
TypedRecordCopy::~TypedRecordCopy() = default;

RecordView TypedRecordCopy::view() const noexcept {
    return RecordView{.bytes = {},
                      .level = block_->level,
                      .time = block_->time,
                      .logger = block_->logger,
                      .message = &block_->message,
                      .bound = block_->bound,
                      .scope = block_->scope,
                      .fields = block_->fields,
                      .options = nullptr,
                      .thread_id = block_->thread_id};
}

}  // namespace fieldlog

// SPDX-License-Identifier: MIT
#include "record/parts_view.hpp"

#include "base/thread_id.hpp"
#include "encode/message_text.hpp"
#include "record/context_node.hpp"

namespace fieldlog::detail {

bool make_parts_view(const Record& record, const EncoderOptions& options, std::span<const std::string> redact,
                     PartsViewStorage& storage, Buffer& text, RecordView& view) noexcept {
    std::vector<Field>& gathered = storage.gathered;
    gathered.clear();
    try {
        gather_fields(record.bound, nullptr, gathered);
        const std::size_t bound_count = gathered.size();
        gather_fields(record.scope, nullptr, gathered);
        std::span<const Field> context(gathered);
        std::span<const Field> fields = record.fields;
        // With redaction the sinks get copies in which no named value is left.
        if (!redact.empty()) [[unlikely]] {
            storage.redacted.clear();
            storage.held.clear();
            storage.redacted.reserve(gathered.size() + fields.size());
            storage.held.reserve(gathered.size() + fields.size());
            append_redacted_fields(redact, gathered, storage.redacted, storage.held);
            append_redacted_fields(redact, fields, storage.redacted, storage.held);
            context = std::span<const Field>(storage.redacted).first(gathered.size());
            fields = std::span<const Field>(storage.redacted).subspan(gathered.size());
        }
        const Message* message = &record.message;
        if (message->kind() == Message::Kind::templated) [[unlikely]] {
            text.clear();
            append_message_text(text, *message, redact);
            message = &storage.message.emplace(text.view(), message->where());
        }
        view = RecordView{.bytes = {},
                          .level = record.level,
                          .time = record.time,
                          .logger = record.logger.name.text,
                          .message = message,
                          .bound = context.first(bound_count),
                          .scope = context.subspan(bound_count),
                          .fields = fields,
                          .options = &options,
                          .thread_id = record.thread_id != 0 ? record.thread_id : cached_thread_id()};
    } catch (...) {  // memory ran out gathering the fields, or a template's value threw
        return false;
    }
    return true;
}

}  // namespace fieldlog::detail

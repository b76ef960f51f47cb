// SPDX-License-Identifier: MIT
#include "record/typed_record.hpp"

#include "base/thread_id.hpp"
#include "encode/redact.hpp"
#include "record/context_node.hpp"

namespace fieldlog::detail {

void with_parts_view(const Record& record, const EncoderOptions& options, std::span<const std::string> redact,
                     PartsViewStorage& storage, void (*use)(const RecordView& view, const void* argument),
                     const void* argument) noexcept {
    std::vector<Field>& gathered = storage.gathered;
    gathered.clear();
    try {
        gather_fields(record.bound, nullptr, gathered);
        const std::size_t bound_count = gathered.size();
        gather_fields(record.scope, nullptr, gathered);
        std::span<const Field> context(gathered);
        std::span<const Field> fields = record.fields;
        // With redaction the sinks get copies in which no named value is left.
        std::vector<Field> redacted;
        std::vector<RedactedValue> held;
        if (!redact.empty()) [[unlikely]] {
            redacted.reserve(gathered.size() + fields.size());
            held.reserve(gathered.size() + fields.size());
            append_redacted_fields(redact, gathered, redacted, held);
            append_redacted_fields(redact, fields, redacted, held);
            context = std::span<const Field>(redacted).first(gathered.size());
            fields = std::span<const Field>(redacted).subspan(gathered.size());
        }
        use(RecordView{.bytes = {},
                       .level = record.level,
                       .time = record.time,
                       .logger = record.logger.name.text,
                       .message = &record.message,
                       .bound = context.first(bound_count),
                       .scope = context.subspan(bound_count),
                       .fields = fields,
                       .options = &options,
                       .thread_id = record.thread_id != 0 ? record.thread_id : cached_thread_id()},
            argument);
    } catch (...) {  // memory ran out gathering the fields
    }
}

}  // namespace fieldlog::detail

// Scopes' backtraces: keeping a record (one pooled block: the KeptRecord, the marker field, the
// call's fields copied, the message), letting the oldest go past the scope's bound, giving the
// blocks back. The gate's per-level counts change only when a backtrace opens or closes.
#include "record/backtrace.hpp"

#include <atomic>
#include <cstring>
#include <iterator>
#include <new>

#include "base/buffer.hpp"
#include "record/context_node.hpp"
#include "record/context_pool.hpp"

namespace fieldlog::detail {

constinit std::atomic<std::uint32_t> backtrace_keepers[level_count]{};

namespace {

/// The levels a backtrace keeps: from keep_from up to, not including, the trigger.
template <typename Each>
void for_kept_levels(const KeptRecords& kept, Each each) noexcept {
    for (auto l = static_cast<std::size_t>(kept.keep_from); l < static_cast<std::size_t>(kept.trigger) && l < level_count - 1;
         ++l)
        each(backtrace_keepers[l]);
}

void give_back(ContextHome& home, KeptRecord* record) noexcept {
    if (record->bound != nullptr) release(&home, record->bound);
    if (record->holds_scope) release(&home, record->scope);
    record->~KeptRecord();
    pool_release(&home, record);
}

/// The innermost layer of `home` whose backtrace keeps records at `level`, or null.
ScopeLayer* keeper_of(ContextHome& home, Level level) noexcept {
    for (std::size_t i = home.layers.size(); i > 0; --i) {
        ScopeLayer& layer = home.layers[i - 1];
        if (const KeptRecords* kept = layer.kept) return level >= kept->keep_from && level < kept->trigger ? &layer : nullptr;
    }
    return nullptr;
}

}  // namespace

KeptRecords* open_kept_records(ContextHome& home, const Backtrace& backtrace) noexcept {
    if (backtrace.records == 0 || backtrace.keep_from >= backtrace.trigger) return nullptr;
    KeptRecords* kept;
    try {
        kept = new (pool_allocate(&home, sizeof(KeptRecords)))
            KeptRecords{.capacity = backtrace.records, .keep_from = backtrace.keep_from, .trigger = backtrace.trigger};
    } catch (...) {
        return nullptr;
    }
    for_kept_levels(*kept, [](std::atomic<std::uint32_t>& n) { n.fetch_add(1, std::memory_order_relaxed); });
    return kept;
}

void discard_kept_records(ContextHome& home, KeptRecords& kept) noexcept {
    KeptRecord* record = kept.first;
    while (record != nullptr) {
        KeptRecord* next = record->next;
        give_back(home, record);
        record = next;
    }
    kept.first = kept.last = nullptr;
    kept.count = 0;
}

void close_kept_records(ContextHome& home, KeptRecords* kept) noexcept {
    discard_kept_records(home, *kept);
    for_kept_levels(*kept, [](std::atomic<std::uint32_t>& n) { n.fetch_sub(1, std::memory_order_relaxed); });
    kept->~KeptRecords();
    pool_release(&home, kept);
}

void hold_kept_scopes(KeptRecords& kept, ContextNode* chain) noexcept {
    for (KeptRecord* record = kept.first; record != nullptr; record = record->next) {
        if (record->holds_scope || record->scope != chain) continue;
        retain(chain);
        record->holds_scope = true;
    }
}

Backtrace backtrace_of(const KeptRecords& kept) noexcept {
    return Backtrace{.records = kept.capacity, .keep_from = kept.keep_from, .trigger = kept.trigger};
}

bool keep_record(ContextHome& home, Buffer& record, Buffer& scratch, const LoggerCore& logger, ContextNode* bound,
                 Level level, const Message& message, std::span<const Field> fields, Timestamp time) noexcept {
    ScopeLayer* const layer = keeper_of(home, level);
    if (layer == nullptr) return false;
    KeptRecords* const kept = layer->kept;
    // Logged on the keeping layer's own chain (no scope without a backtrace open inside it),
    // the record needs no reference: the layer outlives what it keeps.
    const bool holds_scope = home.top != layer->chain && home.top != nullptr;
    void* block = nullptr;
    try {
        std::string_view message_text = message.text();
        if (message.formatted()) {
            record.clear();
            fmt::vformat_to(std::back_inserter(record), message.text(), message.args());
            message_text = record.view();
        }
        const FieldsRoom room = measure_fields(fields, scratch);
        // The block: the record, the marker field, the copied fields, the message's text.
        constexpr std::size_t head = sizeof(KeptRecord) + sizeof(Field);
        static_assert(head % alignof(Field) == 0);
        block = pool_allocate(&home, head + room.structs + room.chars + message_text.size());
        char* const copied_message = static_cast<char*>(block) + head + room.structs + room.chars;
        if (!message_text.empty()) std::memcpy(copied_message, message_text.data(), message_text.size());
        record.shrink();
        auto* const marker = new (static_cast<char*>(block) + sizeof(KeptRecord)) Field{"backtrace", true};
        const Field* copied = copy_fields(fields, room, static_cast<char*>(block) + head, scratch);
        auto* kept_record = new (block) KeptRecord{.next = nullptr,
                                                   .logger = &logger,
                                                   .bound = bound,
                                                   .scope = home.top,
                                                   .where = message.where(),
                                                   .message = std::string_view(copied_message, message_text.size()),
                                                   .fields = marker,
                                                   .field_count = 1 + (copied != nullptr ? static_cast<std::uint32_t>(fields.size()) : 0),
                                                   .holds_scope = holds_scope,
                                                   .level = level,
                                                   .time = time};
        if (bound != nullptr) retain(bound);
        if (holds_scope) retain(home.top);
        if (kept->last != nullptr) {
            kept->last->next = kept_record;
        } else {
            kept->first = kept_record;
        }
        kept->last = kept_record;
        if (++kept->count > kept->capacity) {  // the oldest goes
            KeptRecord* oldest = kept->first;
            kept->first = oldest->next;
            --kept->count;
            give_back(home, oldest);
        }
    } catch (...) {  // a user type or formatter threw, or memory ran out: the record is not kept
        record.shrink();
        if (block != nullptr) pool_release(&home, block);
        return false;
    }
    return true;
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// Backtraces: keeping a record (appended to its backtrace's chunks in one pass: the
// KeptEntry, the marker field, the call's fields and their strings, the message; or a block
// of its own), letting the oldest go past the bound, giving the memory back. A logger's
// backtrace is a scope's kept records under a mutex: its chunks and blocks come from the pools
// of the threads that log, and go back from whichever thread writes or drops them. The level check's
// per-level counts change only when a backtrace opens or closes.
#include "record/backtrace.hpp"

#include <atomic>
#include <cstring>
#include <iterator>
#include <new>

#include "base/buffer.hpp"
#include "base/thread_id.hpp"
#include "encode/message_text.hpp"
#include "record/context_node.hpp"
#include "record/context_pool.hpp"

namespace fieldlog::detail {

constinit std::atomic<std::uint32_t> below_level_takers[level_count]{};

/// A pooled block of kept records, one after the other after this head.
struct alignas(16) KeptChunk {
    KeptChunk* next;         ///< the next newer chunk
    std::uint32_t records;   ///< kept records lying in it
};

namespace {

/// A chunk's block: one pool class exactly, its head included.
constexpr std::size_t kChunkBytes = 4096 - sizeof(PoolBlockHeader);
constexpr std::size_t kRecordAlign = 16;

char* align_record(char* at) noexcept {
    return reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(at) + kRecordAlign - 1) & ~(kRecordAlign - 1));
}

/// The levels a backtrace keeps: from keep_from up to, not including, the trigger.
template <typename Each>
void for_kept_levels(const BacktraceStore& kept, Each each) noexcept {
    for (auto l = static_cast<std::size_t>(kept.keep_from); l < static_cast<std::size_t>(kept.trigger) && l < level_count - 1;
         ++l)
        each(below_level_takers[l]);
}

/// Lets go of what `record` holds: its references, and its block when it has one of its own.
void let_go(ContextHome& home, BacktraceStore& kept, KeptEntry* record) noexcept {
    const bool owning = record->record.bound != nullptr || record->holds_scope || record->chunk == nullptr;
    if (record->record.bound != nullptr) release(&home, record->record.bound);
    if (record->holds_scope) release(&home, record->record.scope);
    if (owning) --kept.owning;
    if (record->chunk == nullptr) pool_release(&home, record);
}

/// The oldest chunk had its last record go: back to the pool, unless it is the one records
/// are appended to (then it starts over, empty).
void chunk_emptied(ContextHome& home, BacktraceStore& kept, KeptChunk* chunk) noexcept {
    if (chunk == kept.newest) {
        kept.free = reinterpret_cast<char*>(chunk + 1);
        return;
    }
    kept.oldest = chunk->next;
    pool_release(&home, chunk);
}

/// A fresh chunk to append to (the newest, emptied, when it has no record left). Throws
/// std::bad_alloc.
void start_chunk(ContextHome& home, BacktraceStore& kept) {
    KeptChunk* chunk = kept.newest;
    if (chunk == nullptr || chunk->records != 0) {
        chunk = new (pool_allocate(&home, kChunkBytes)) KeptChunk{nullptr, 0};
        if (kept.newest != nullptr) {
            kept.newest->next = chunk;
        } else {
            kept.oldest = chunk;
        }
        kept.newest = chunk;
    }
    kept.free = reinterpret_cast<char*>(chunk + 1);
    kept.end = reinterpret_cast<char*>(chunk) + kChunkBytes;
}

/// Copies `s` to `at` when it fits before `end`; its copy in `out`. Null when it does not.
[[gnu::always_inline]] inline char* copy_within(char* at, const char* end, std::string_view s,
                                                std::string_view& out) noexcept {
    if (static_cast<std::size_t>(end - at) < s.size()) return nullptr;
    return copy_text(at, s, out);
}

/// Appends a record's parts to `kept`'s newest chunk in one pass: its head (left for the
/// caller to fill), the marker, `fields` and their strings, the message. Null when they do not
/// fit what is left of it, or (`not_flat` set) a value is other than a scalar or a string.
[[gnu::always_inline]] inline KeptEntry* append_to_chunk(BacktraceStore& kept, std::span<const Field> fields,
                                                          std::string_view message, std::string_view& message_copy,
                                                          bool& not_flat) noexcept {
    char* const at = align_record(kept.free);
    const std::size_t head = sizeof(KeptEntry) + (1 + fields.size()) * sizeof(Field);
    if (kept.free == nullptr || static_cast<std::size_t>(kept.end - at) < head) return nullptr;
    auto* const copied = reinterpret_cast<Field*>(at + sizeof(KeptEntry));
    new (copied) Field{"backtrace", true};
    char* chars = at + head;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const Field& in = fields[i];
        std::string_view key;
        if ((chars = copy_within(chars, kept.end, in.key, key)) == nullptr) return nullptr;
        switch (in.value.kind()) {  // the kinds of the flat copy (measure_fields, context_node.hpp)
            case Value::Kind::string: {
                std::string_view value;
                if ((chars = copy_within(chars, kept.end, in.value.as_string(), value)) == nullptr) return nullptr;
                new (copied + 1 + i) Field{key, Value(value)};
                break;
            }
            case Value::Kind::error_code:
            case Value::Kind::bytes:
            case Value::Kind::object:
            case Value::Kind::array:
            case Value::Kind::custom: not_flat = true; return nullptr;
            default: new (copied + 1 + i) Field{key, in.value};  // held in the Value itself
        }
    }
    if ((chars = copy_within(chars, kept.end, message, message_copy)) == nullptr) return nullptr;
    kept.free = chars;
    ++kept.newest->records;
    return reinterpret_cast<KeptEntry*>(at);
}

/// A block of its own for a record that does not go in a chunk: the general copy, any value
/// (user types recorded, their code run once). Throws what they throw, or std::bad_alloc.
KeptEntry* own_block(ContextHome& home, Buffer& scratch, std::span<const Field> fields, std::string_view message,
                      std::string_view& message_copy) {
    const FieldsRoom room = measure_fields(fields, scratch);
    constexpr std::size_t head = sizeof(KeptEntry) + sizeof(Field);
    static_assert(head % alignof(Field) == 0);
    void* const block = pool_allocate(&home, head + room.structs + room.chars + message.size());
    char* const text = static_cast<char*>(block) + head + room.structs + room.chars;
    try {
        new (static_cast<char*>(block) + sizeof(KeptEntry)) Field{"backtrace", true};
        copy_fields(fields, room, static_cast<char*>(block) + head, scratch);
    } catch (...) {
        pool_release(&home, block);
        throw;
    }
    if (!message.empty()) std::memcpy(text, message.data(), message.size());
    message_copy = std::string_view(text, message.size());
    return static_cast<KeptEntry*>(block);
}

/// The innermost layer of `home` whose backtrace keeps records at `level`, or null.
ScopeLayer* keeper_of(ContextHome& home, Level level) noexcept {
    for (std::size_t i = home.layers.size(); i > 0; --i) {
        ScopeLayer& layer = home.layers[i - 1];
        if (const BacktraceStore* kept = layer.kept) return level >= kept->keep_from && level < kept->trigger ? &layer : nullptr;
    }
    return nullptr;
}

/// `logger`'s backtrace, locked, when it keeps records at `level`; else null.
LoggerBacktrace* lock_logger_backtrace(const LoggerCore& logger, Level level) noexcept {
    LoggerBacktrace* const store = logger.backtrace.load(std::memory_order_acquire);
    if (store == nullptr || !logger.backtrace_on.load(std::memory_order_relaxed)) return nullptr;
    store->mutex.lock();
    if (store->on && level >= store->kept.keep_from && level < store->kept.trigger) return store;
    store->mutex.unlock();
    return nullptr;
}

}  // namespace

BacktraceStore* open_kept_records(ContextHome& home, const Backtrace& backtrace) noexcept {
    if (backtrace.records == 0 || backtrace.keep_from >= backtrace.trigger) return nullptr;
    BacktraceStore* kept;
    try {
        kept = new (pool_allocate(&home, sizeof(BacktraceStore)))
            BacktraceStore{.capacity = backtrace.records, .keep_from = backtrace.keep_from, .trigger = backtrace.trigger};
    } catch (...) {
        return nullptr;
    }
    for_kept_levels(*kept, [](std::atomic<std::uint32_t>& n) { n.fetch_add(1, std::memory_order_relaxed); });
    return kept;
}

void discard_kept_records(ContextHome& home, BacktraceStore& kept) noexcept {
    for (KeptEntry* record = kept.first; record != nullptr && kept.owning != 0;) {
        KeptEntry* next = record->next;
        let_go(home, kept, record);
        record = next;
    }
    for (KeptChunk* chunk = kept.oldest; chunk != nullptr;) {
        KeptChunk* next = chunk->next;
        pool_release(&home, chunk);
        chunk = next;
    }
    kept.first = kept.last = nullptr;
    kept.oldest = kept.newest = nullptr;
    kept.free = kept.end = nullptr;
    kept.count = 0;
}

void close_kept_records(ContextHome& home, BacktraceStore* kept) noexcept {
    discard_kept_records(home, *kept);
    for_kept_levels(*kept, [](std::atomic<std::uint32_t>& n) { n.fetch_sub(1, std::memory_order_relaxed); });
    kept->~BacktraceStore();
    pool_release(&home, kept);
}

void hold_kept_scopes(BacktraceStore& kept, ContextNode* chain) noexcept {
    for (KeptEntry* record = kept.first; record != nullptr; record = record->next) {
        if (record->holds_scope || record->record.scope != chain) continue;
        retain(chain);
        if (record->record.bound == nullptr && record->chunk != nullptr) ++kept.owning;
        record->holds_scope = true;
    }
}

Backtrace backtrace_of(const BacktraceStore& kept) noexcept {
    return Backtrace{.records = kept.capacity, .keep_from = kept.keep_from, .trigger = kept.trigger};
}

bool keep_record(ContextHome& home, Buffer& text, Buffer& scratch, const Record& record,
                 std::span<const std::string> redact) noexcept {
    const Level level = record.level;
    const LoggerCore& logger = record.logger;
    const Message& message = record.message;
    const std::span<const Field> fields = record.fields;
    ScopeLayer* const layer = keeper_of(home, level);
    LoggerBacktrace* const store = layer == nullptr ? lock_logger_backtrace(logger, level) : nullptr;
    if (layer == nullptr && store == nullptr) return false;
    BacktraceStore& kept = layer != nullptr ? *layer->kept : store->kept;
    // Logged on the keeping layer's own chain (no scope without a backtrace open inside it),
    // the record needs no reference: the layer outlives what it keeps. A logger's record
    // outlives any scope open now.
    const bool holds_scope = home.top != nullptr && (store != nullptr || home.top != layer->chain);
    KeptEntry* kept_record;
    std::string_view message_copy;
    try {
        std::string_view message_text = message.text();
        if (message.kind() != Message::Kind::plain) {
            text.clear();
            append_message_text(text, message, redact);
            message_text = text.view();
        }
        bool not_flat = false;
        kept_record = append_to_chunk(kept, fields, message_text, message_copy, not_flat);
        if (kept_record == nullptr && !not_flat && (kept.newest == nullptr || kept.newest->records != 0)) {
            start_chunk(home, kept);  // what is left of the newest is too small, or there is none
            kept_record = append_to_chunk(kept, fields, message_text, message_copy, not_flat);
        }
        KeptChunk* const chunk = kept_record != nullptr ? kept.newest : nullptr;
        if (kept_record == nullptr) kept_record = own_block(home, scratch, fields, message_text, message_copy);
        text.shrink();
        new (kept_record) KeptEntry{.next = nullptr,
                                     .chunk = chunk,
                                     .holds_scope = holds_scope,
                                     .record = owned_head(record, 1 + static_cast<std::uint32_t>(fields.size()),
                                                          Message(message_copy, record.message.where()),
                                                          // A logger's record may be written by another thread.
                                                          store != nullptr ? cached_thread_id() : 0)};
    } catch (...) {  // a user type or formatter threw, or memory ran out: the record is not kept
        text.shrink();
        if (store != nullptr) store->mutex.unlock();
        return false;
    }
    if (record.bound != nullptr) retain(record.bound);
    if (holds_scope) retain(home.top);
    if (record.bound != nullptr || holds_scope || kept_record->chunk == nullptr) ++kept.owning;
    if (kept.last != nullptr) {
        kept.last->next = kept_record;
    } else {
        kept.first = kept_record;
    }
    kept.last = kept_record;
    if (++kept.count > kept.capacity) {  // the oldest goes
        KeptEntry* const oldest = kept.first;
        KeptChunk* const chunk = oldest->chunk;
        kept.first = oldest->next;
        --kept.count;
        let_go(home, kept, oldest);
        if (chunk != nullptr && --chunk->records == 0) chunk_emptied(home, kept, chunk);
    }
    if (store != nullptr) store->mutex.unlock();
    return true;
}

LoggerBacktrace& logger_backtrace_store(LoggerCore& logger) {
    LoggerBacktrace* store = logger.backtrace.load(std::memory_order_acquire);
    if (store == nullptr) {
        static auto* const making = new std::mutex;  // never destroyed: a logger may be set up at exit
        const std::lock_guard lock(*making);
        store = logger.backtrace.load(std::memory_order_acquire);
        if (store == nullptr) {
            store = new LoggerBacktrace;
            logger.backtrace.store(store, std::memory_order_release);
        }
    }
    return *store;
}

void set_logger_backtrace(ContextHome& home, LoggerCore& logger, const Backtrace& backtrace) {
    LoggerBacktrace* const store = &logger_backtrace_store(logger);
    const std::lock_guard lock(store->mutex);
    BacktraceStore& kept = store->kept;
    if (store->on) {
        discard_kept_records(home, kept);
        for_kept_levels(kept, [](std::atomic<std::uint32_t>& n) { n.fetch_sub(1, std::memory_order_relaxed); });
    }
    store->on = backtrace.records != 0 && backtrace.keep_from < backtrace.trigger;
    kept.capacity = backtrace.records;
    kept.keep_from = backtrace.keep_from;
    kept.trigger = backtrace.trigger;
    if (store->on) {
        for_kept_levels(kept, [](std::atomic<std::uint32_t>& n) { n.fetch_add(1, std::memory_order_relaxed); });
    }
    logger.backtrace_on.store(store->on, std::memory_order_relaxed);
}

bool take_logger_records(const LoggerCore& logger, Level level, BacktraceStore& out) noexcept {
    LoggerBacktrace* const store = logger.backtrace.load(std::memory_order_acquire);
    if (store == nullptr) return false;
    const std::lock_guard lock(store->mutex);
    BacktraceStore& kept = store->kept;
    if (!store->on || kept.count == 0 || level < kept.trigger) return false;
    out = kept;
    kept = BacktraceStore{.capacity = kept.capacity, .keep_from = kept.keep_from, .trigger = kept.trigger};
    return true;
}

}  // namespace fieldlog::detail

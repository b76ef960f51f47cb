// SPDX-License-Identifier: MIT
// The record path from Logger::emit past the level check: make the Record, encode it once per
// format in use into this thread's buffer and hand each line to the sinks (a channel of parts
// gets the record's parts instead). In async mode the record's owned copy goes to the writer's
// rings (ring_entry.hpp), which does the same on its thread. Hot path: no heap, no lock other
// than each sink's own. docs/architecture.md walks it.
#include "fieldlog/logger.hpp"

#include <time.h>

#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "dispatch/channels.hpp"
#include "dispatch/pipeline.hpp"
#include "dispatch/record_path.hpp"
#include "dispatch/ring_entry.hpp"
#include "record/backtrace.hpp"
#include "record/context_node.hpp"
#include "record/scope_layers.hpp"
#include "record/thread_context.hpp"

namespace fieldlog {
namespace detail {
namespace {

/// `fields` after a first field "suppressed": `count`, in this thread's counted_fields; `fields`
/// itself when that cannot be made (memory ran out). Adds to the count when `fields` is that
/// list already (a rate-limited call site, then the logger's sampler).
std::span<const Field> with_suppressed(ThreadContext& context, std::uint64_t count, std::span<const Field> fields) noexcept {
    std::vector<Field>& counted = context.counted_fields;
    try {
        if (!counted.empty() && fields.data() == counted.data()) {
            context.counted_suppressed += count;
            counted.front() = Field{"suppressed", context.counted_suppressed};
            return counted;
        }
        counted.assign(1, Field{"suppressed", count});
        counted.insert(counted.end(), fields.begin(), fields.end());
    } catch (...) {
        counted.clear();
        return fields;
    }
    context.counted_suppressed = count;
    return counted;
}

std::int64_t monotonic_nanos() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

/// The decision of `logger`'s sampler on this record: false when it keeps the record back;
/// else `fields` may gain the count of records kept back before it.
bool sample(ThreadContext& context, Sampler& sampler, const LoggerCore& logger, Level level,
            const Message& message, std::span<const Field>& fields) noexcept {
    const std::vector<Field>& counted = context.counted_fields;
    const std::uint64_t carried = !counted.empty() && fields.data() == counted.data() ? context.counted_suppressed : 0;
    const Sampler::Decision decision = sampler.decide(logger, level, message.text(), monotonic_nanos(), carried);
    if (decision.write && decision.suppressed != 0) fields = with_suppressed(context, decision.suppressed, fields);
    return decision.write;
}

/// Makes `record`'s form for each channel that takes it and hands each to its sinks. Inlined
/// into Logger::emit, which GCC stops doing once the loop is a template of its own.
[[gnu::always_inline]] inline void write_record(ThreadContext& context, const Pipeline& pipeline,
                                                const Record& record, FilterBits admitted) noexcept {
    ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(record.level)]);
    FormBuffers buffers{context.record, context.scratch, context.home, context.parts_views};
    for_each_channel(pipeline, record, admitted, buffers, [&](const Channel& channel, const RecordView& view) {
        ThreadCounters::bump(context.counters.encoded_bytes, view.bytes.size());
        pipeline.dispatch(channel, view, admitted);
        return true;
    });
    if (buffers.oversized) ThreadCounters::bump(context.counters.oversized);
}

/// Async mode, a record too large for the writer's rings: written here, once the writer has
/// written this thread's earlier records. A function of its own on an unlikely branch, so that
/// the compiler keeps it out of Logger::emit, which a second write_record would make larger.
void write_too_large(ThreadContext& context, const Pipeline& pipeline, const Record& record,
                     FilterBits admitted) noexcept {
    pipeline.writer->drain();
    write_record(context, pipeline, record, admitted);
}

/// The record path past the level checks: its owned copy to the writer's rings in async mode, else
/// written here.
inline void deliver_record(ThreadContext& context, const Pipeline& pipeline,
                           const Record& record, FilterBits admitted) noexcept {
    if (pipeline.writer) {
        if (!queue_record(context, pipeline, record, admitted)) [[unlikely]] write_too_large(context, pipeline, record, admitted);
        return;
    }
    write_record(context, pipeline, record, admitted);
}

/// From the level check to the sinks, inlined into Logger::emit: out of line, passing its seven
/// arguments costs every record.
[[gnu::always_inline]] inline void route_record(ThreadContext& context, const Pipeline* pipeline,
                                                       const LoggerCore& logger, ContextNode* bound, Level level,
                                                       const Message& message, std::span<const Field> fields) noexcept {
    if (pipeline == nullptr) [[unlikely]] {  // shutdown() ran: nothing is open to take the record
        ThreadCounters::bump(context.counters.after_shutdown);
        return;
    }
    // A value past `fatal` (a cast integer) is written as fatal: not lost, and no table below is
    // indexed past its end.
    if (level > Level::fatal) [[unlikely]] level = Level::fatal;
    FilterBits admitted = kEveryLogger;
    if (level < pipeline->unfiltered_level) [[unlikely]] {  // below every sink's level, or loggers have rules
        if (level < pipeline->routing.lowest_level) return;
        const Pipeline::LoggerRules rules = pipeline->rules_for(logger);
        admitted = rules.admitted;
        if (rules.sampler != nullptr && !sample(context, *rules.sampler, logger, level, message, fields)) return;
    }
    deliver_record(context, *pipeline,
                   Record{record_time(context, *pipeline), level, logger, message, bound, context.home->top, fields},
                   admitted);
}

/// Writes the records a backtrace kept, each as it was logged (its time, context and call
/// site; the sinks' levels and the loggers' filters apply, not the sampler), then gives them
/// back.
void write_kept_records(ThreadContext& context, const Pipeline* pipeline,
                        BacktraceStore& kept) noexcept {
    for (const KeptEntry* kept_record = kept.first; kept_record != nullptr && pipeline != nullptr;
         kept_record = kept_record->next) {
        const OwnedRecord& r = kept_record->record;
        if (r.level < pipeline->routing.lowest_level) continue;
        const FilterBits admitted = r.level < pipeline->unfiltered_level ? pipeline->rules_for(*r.logger).admitted : kEveryLogger;
        ThreadCounters::bump(context.counters.backtrace_written);
        deliver_record(context, *pipeline, r.record(), admitted);
    }
    discard_kept_records(*context.home, kept);
}

/// Before a record of `logger` at `level`: writes what each backtrace with a trigger at or
/// below it kept: the logger's, then each open scope's, outermost first (an inner scope's
/// records are the later ones).
void write_backtraces(ThreadContext& context, const Pipeline* pipeline, const LoggerCore& logger,
                      Level level) noexcept {
    if (BacktraceStore taken; take_logger_records(logger, level, taken)) write_kept_records(context, pipeline, taken);
    for (ScopeLayer& layer : context.home->layers) {
        if (layer.kept != nullptr && layer.kept->count != 0 && level >= layer.kept->trigger)
            write_kept_records(context, pipeline, *layer.kept);
    }
}

/// A record below its logger's level that the level check let through for a backtrace open
/// somewhere: kept when this thread has one that keeps its level, or its logger has, else
/// dropped.
void keep_for_backtrace(ThreadContext& context, const LoggerCore& logger, ContextNode* bound,
                        Level level, const Message& message, std::span<const Field> fields) noexcept {
    if ((context.home->backtraces == 0 && !logger.backtrace_on.load(std::memory_order_relaxed)) ||
        logger.level.load(std::memory_order_relaxed) == Level::off)
        return;
    context.busy = true;
    const Pipeline* pipeline = acquire_pipeline(context);
    if (pipeline != nullptr &&
        keep_record(*context.home, context.record, context.scratch,
                    Record{record_time(context, *pipeline), level, logger, message, bound, context.home->top, fields},
                    pipeline->redact))
        ThreadCounters::bump(context.counters.backtrace_kept);
    release_pipeline(context);
    context.busy = false;
}

/// A record at or above its logger's level while this thread has a backtrace open, or its
/// logger keeps one: written after what the backtraces it triggers kept.
void emit_after_backtraces(ThreadContext& context, const LoggerCore& logger,
                           ContextNode* bound, Level level, const Message& message,
                           std::span<const Field> fields) noexcept {
    context.busy = true;
    const Pipeline* pipeline = acquire_pipeline(context);
    write_backtraces(context, pipeline, logger, level);
    route_record(context, pipeline, logger, bound, level, message, fields);
    release_pipeline(context);
    context.busy = false;
}

}  // namespace

void route_fields(ThreadContext& context, const Pipeline* pipeline, const LoggerCore& logger, ContextNode* bound,
                  Level level, const Message& message, std::span<const Field> fields) noexcept {
    route_record(context, pipeline, logger, bound, level, message, fields);
}

/// The record path of a thread whose own context is gone (its thread-locals were destroyed: the
/// main thread after main returned, a thread's own thread_local destructors) or could not be
/// made: one shared context, one record at a time; never on a thread with a context.
void emit_without_context(const LoggerCore& logger, ContextNode* bound, Level level,
                         const Message& message, std::span<const Field> fields) noexcept {
    if (level < logger.level.load(std::memory_order_relaxed)) return;  // let through for a backtrace elsewhere
    // Never destroyed, as records may come until the process ends. Recursive: a record logged
    // from inside this one (by a sink) is dropped below instead of deadlocking.
    static auto* const mutex = new std::recursive_mutex;
    static ThreadContext* shared = nullptr;
    const std::lock_guard lock(*mutex);
    if (shared == nullptr) {
        try {
            shared = new ThreadContext;
        } catch (...) {
            return;
        }
    }
    if (shared->busy) {
        ThreadCounters::bump(shared->counters.nested_dropped);
        return;
    }
    shared->busy = true;
    route_record(*shared, acquire_pipeline(*shared), logger, bound, level, message, fields);
    release_pipeline(*shared);
    shared->busy = false;
}

}  // namespace detail

void Logger::emit(Level level, const Message& message, std::span<const Field> fields) const noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) [[unlikely]] {
        detail::emit_without_context(*core_, context_, level, message, fields);
        return;
    }
    if (context->busy) {
        detail::ThreadCounters::bump(context->counters.nested_dropped);
        return;
    }
    const detail::Way way = detail::way_of(*context, *core_, level);
    if (way != detail::Way::plain) [[unlikely]] {
        if (way == detail::Way::keep) {
            detail::keep_for_backtrace(*context, *core_, context_, level, message, fields);
        } else {
            detail::emit_after_backtraces(*context, *core_, context_, level, message, fields);
        }
        return;
    }
    context->busy = true;
    detail::route_record(*context, detail::acquire_pipeline(*context), *core_, context_, level, message, fields);
    detail::release_pipeline(*context);
    context->busy = false;
}

void Logger::emit_template(Level level, const Message& message, std::span<const Field> holes,
                           std::span<const Field> fields, std::uint64_t suppressed) const noexcept {
    if (fields.empty()) {
        emit_counted(level, suppressed, message, holes);
        return;
    }
    // The holes, then the fields, in one list, which the message's holes then point into, as a
    // template's own call makes them. Made from their values, which refer: so the copies own
    // nothing, and the list on the stack is given back without destroying them.
    constexpr std::size_t kOnStack = 64;
    const std::size_t count = holes.size() + fields.size();
    if (count > kOnStack) [[unlikely]] {
        std::vector<Field> all;
        try {
            all.reserve(count);
            for (const std::span<const Field> part : {holes, fields}) {
                for (const Field& f : part) all.emplace_back(f.key, f.value);
            }
        } catch (...) {
            return;  // no memory for the list
        }
        emit_counted(level, suppressed, Message(message.site(), all.data(), message.where()), all);
        return;
    }
    union Slots {
        Slots() noexcept {}
        ~Slots() {}
        Field at[kOnStack];
    } slots;
    std::size_t i = 0;
    for (const std::span<const Field> part : {holes, fields}) {
        for (const Field& f : part) new (slots.at + i++) Field(f.key, f.value);
    }
    emit_counted(level, suppressed, Message(message.site(), slots.at, message.where()),
                 std::span<const Field>(slots.at, count));
}

void Logger::emit_counted(Level level, std::uint64_t suppressed, const Message& message,
                          std::span<const Field> fields) const noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    // Busy: emit() drops the record (nested); its counted_fields may be the record in progress.
    if (suppressed != 0 && context != nullptr && !context->busy) fields = detail::with_suppressed(*context, suppressed, fields);
    emit(level, message, fields);
}

}  // namespace fieldlog

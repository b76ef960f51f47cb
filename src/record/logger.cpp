// SPDX-License-Identifier: MIT
// The record path past the level gate: take this thread's buffer, encode the record once per
// format in use, hand it to the dispatcher, give the buffer back (typed sinks, a test's
// Observer, get the record's parts unencoded first). In async mode the record's typed form goes
// to the writer's rings instead (queued_record.hpp), which encodes it. Hot path: no heap, no
// lock other than each sink's own.
#include "fieldlog/logger.hpp"

#include <time.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dispatch/pipeline.hpp"
#include "encode/encode.hpp"
#include "encode/redact.hpp"
#include "record/backtrace.hpp"
#include "record/context_node.hpp"
#include "record/emit.hpp"
#include "record/queued_record.hpp"
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
[[gnu::noinline]] bool sample(ThreadContext& context, Sampler& sampler, const LoggerCore& logger, Level level,
                              const Message& message, std::span<const Field>& fields) noexcept {
    const std::vector<Field>& counted = context.counted_fields;
    const std::uint64_t carried = !counted.empty() && fields.data() == counted.data() ? context.counted_suppressed : 0;
    const Sampler::Decision decision = sampler.decide(logger, level, message.text(), monotonic_nanos(), carried);
    if (decision.write && decision.suppressed != 0) fields = with_suppressed(context, decision.suppressed, fields);
    return decision.write;
}

/// The record's time: the configuration's clock, else this thread's.
[[gnu::always_inline]] inline Timestamp record_time(ThreadContext& context, const Pipeline& pipeline) noexcept {
    return pipeline.clock != nullptr ? pipeline.clock() : context.clock.now();
}

/// Encodes the record once per channel that takes it and dispatches each line.
[[gnu::always_inline]] inline void encode_for_channels(ThreadContext& context, const Pipeline& pipeline,
                                                       const LoggerCore& logger, ContextNode* bound,
                                                       ContextNode* scope, Level level, const Message& message,
                                                       std::span<const Field> fields, LoggerMask admitted,
                                                       Timestamp now) noexcept {
    ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(level)]);
    Buffer& buffer = context.record;
    bool oversized = false;
    for (const Channel& channel : pipeline.routing.channels) {
        if (level < channel.min_level && (!channel.filtered || !channel.takes(level, admitted))) continue;
        const ContextEncoding encoding{channel.options, channel.options_id};
        try {
            const RecordInput record{now,
                                     level,
                                     logger.name,
                                     message,
                                     context_encoding(context.home, bound, encoding, buffer, context.scratch),
                                     context_encoding(context.home, scope, encoding, buffer, context.scratch),
                                     fields,
                                     context.kept_thread_id};
            buffer.clear();
            encode_record(channel.options, buffer, context.scratch, record);
        } catch (...) {  // a user formatter threw, or memory ran out: drop this record
            buffer.shrink();
            continue;
        }
        const std::span<const char> line = buffer.span();
        ThreadCounters::bump(context.counters.encoded_bytes, line.size());
        pipeline.dispatch(channel, RecordView{line, level, now}, admitted);
        oversized = buffer.shrink() || oversized;
    }
    if (oversized) ThreadCounters::bump(context.counters.oversized);
}

/// Async mode: the record's typed copy to the writer's rings; one too large for them is encoded
/// and written here, once the writer has written this thread's earlier records.
[[gnu::noinline]] void queue_or_write(ThreadContext& context, const Pipeline& pipeline, const LoggerCore& logger,
                                      ContextNode* bound, ContextNode* scope, Level level, const Message& message,
                                      std::span<const Field> fields, LoggerMask admitted, Timestamp now) noexcept {
    if (queue_record(context, pipeline, logger, bound, scope, level, message, fields, admitted, now)) return;
    pipeline.writer->drain();
    encode_for_channels(context, pipeline, logger, bound, scope, level, message, fields, admitted, now);
}

/// The record path past the gates: queued in async mode, else encoded and written here.
/// `scope`: the thread's open scopes when the record was logged.
[[gnu::always_inline]] inline void deliver_record(ThreadContext& context, const Pipeline& pipeline,
                                                  const LoggerCore& logger, ContextNode* bound, ContextNode* scope,
                                                  Level level, const Message& message, std::span<const Field> fields,
                                                  LoggerMask admitted, Timestamp now) noexcept {
    if (pipeline.writer) {
        queue_or_write(context, pipeline, logger, bound, scope, level, message, fields, admitted, now);
        return;
    }
    encode_for_channels(context, pipeline, logger, bound, scope, level, message, fields, admitted, now);
}

/// The record path of a pipeline with typed sinks (a test's Observer): they get the record's
/// typed parts, then the channels their lines. Out of line: no other pipeline comes here.
[[gnu::noinline]] void dispatch_typed_and_encoded(ThreadContext& context, const Pipeline& pipeline,
                                                  const LoggerCore& logger, ContextNode* bound, ContextNode* scope,
                                                  Level level, const Message& message, std::span<const Field> fields,
                                                  LoggerMask admitted, Timestamp now) noexcept {
    std::vector<Field>& gathered = context.typed_fields;
    gathered.clear();
    try {
        gather_fields(bound, nullptr, gathered);
        const std::size_t bound_count = gathered.size();
        gather_fields(scope, nullptr, gathered);
        std::span<const Field> all(gathered);
        std::span<const Field> call_fields = fields;
        // With redaction the typed sinks get copies in which no named value is left.
        std::vector<Field> redacted;
        std::vector<RedactedValue> held;
        if (!pipeline.redact.empty()) [[unlikely]] {
            redacted.reserve(gathered.size() + fields.size());
            held.reserve(gathered.size() + fields.size());
            append_redacted_fields(pipeline.redact, gathered, redacted, held);
            append_redacted_fields(pipeline.redact, fields, redacted, held);
            all = std::span<const Field>(redacted).first(gathered.size());
            call_fields = std::span<const Field>(redacted).subspan(gathered.size());
        }
        pipeline.dispatch_typed(TypedRecordView{.level = level,
                                                .time = now,
                                                .logger = logger.name.text,
                                                .message = message,
                                                .bound = all.first(bound_count),
                                                .scope = all.subspan(bound_count),
                                                .fields = call_fields},
                                admitted);
    } catch (...) {  // memory ran out gathering the fields: the typed sinks miss this record
    }
    deliver_record(context, pipeline, logger, bound, scope, level, message, fields, admitted, now);
}

/// emit_records' body, inlined into Logger::emit: out of line, passing its seven arguments
/// costs every record.
[[gnu::always_inline]] inline void encode_and_dispatch(ThreadContext& context, const Pipeline* pipeline,
                                                       const LoggerCore& logger, ContextNode* bound, Level level,
                                                       const Message& message, std::span<const Field> fields) noexcept {
    if (pipeline == nullptr) [[unlikely]] {  // shutdown() ran: nothing is open to take the record
        ThreadCounters::bump(context.counters.after_shutdown);
        return;
    }
    // A value past `fatal` (a cast integer) is written as fatal: not lost, and no table below is
    // indexed past its end.
    if (level > Level::fatal) [[unlikely]] level = Level::fatal;
    LoggerMask admitted = kEveryLogger;
    if (level < pipeline->gate) [[unlikely]] {  // below every sink's level, loggers have rules, or typed sinks
        if (level < pipeline->routing.min_level) return;
        const Pipeline::LoggerRules rules = pipeline->rules_for(logger);
        admitted = rules.admitted;
        if (rules.sampler != nullptr && !sample(context, *rules.sampler, logger, level, message, fields)) return;
        if (!pipeline->routing.typed.empty()) {
            dispatch_typed_and_encoded(context, *pipeline, logger, bound, context.home->top, level, message, fields,
                                       admitted, record_time(context, *pipeline));
            return;
        }
    }
    deliver_record(context, *pipeline, logger, bound, context.home->top, level, message, fields, admitted,
                   record_time(context, *pipeline));
}

/// Writes the records a backtrace kept, each as it was logged (its time, context and call
/// site; the sinks' levels and the loggers' filters apply, not the sampler), then gives them
/// back. Cold: only a record at a backtrace's trigger level comes here.
[[gnu::noinline, gnu::cold]] void write_kept_records(ThreadContext& context, const Pipeline* pipeline,
                                                     KeptRecords& kept) noexcept {
    for (const KeptRecord* r = kept.first; r != nullptr && pipeline != nullptr; r = r->next) {
        if (r->level < pipeline->routing.min_level) continue;
        const LoggerMask admitted = r->level < pipeline->gate ? pipeline->rules_for(*r->logger).admitted : kEveryLogger;
        const Message message(r->message, r->where);
        const std::span<const Field> fields(r->fields, r->field_count);
        ThreadCounters::bump(context.counters.backtrace_written);
        context.kept_thread_id = r->thread_id;
        if (!pipeline->routing.typed.empty()) {
            dispatch_typed_and_encoded(context, *pipeline, *r->logger, r->bound, r->scope, r->level, message, fields,
                                       admitted, r->time);
        } else {
            deliver_record(context, *pipeline, *r->logger, r->bound, r->scope, r->level, message, fields, admitted,
                           r->time);
        }
    }
    context.kept_thread_id = 0;
    discard_kept_records(*context.home, kept);
}

/// Before a record of `logger` at `level`: writes what each backtrace with a trigger at or
/// below it kept: the logger's, then each open scope's, outermost first (an inner scope's
/// records are the later ones).
void write_backtraces(ThreadContext& context, const Pipeline* pipeline, const LoggerCore& logger,
                      Level level) noexcept {
    if (KeptRecords taken; take_logger_records(logger, level, taken)) write_kept_records(context, pipeline, taken);
    for (ScopeLayer& layer : context.home->layers) {
        if (layer.kept != nullptr && layer.kept->count != 0 && level >= layer.kept->trigger)
            write_kept_records(context, pipeline, *layer.kept);
    }
}

/// A record below its logger's level that the gate let through for a backtrace open
/// somewhere: kept when this thread has one that keeps its level, or its logger has, else
/// dropped. Out of line, apart from the writing path so that its own stays short; not marked
/// cold, as a request with a backtrace comes here for every record it keeps.
[[gnu::noinline]] void keep_for_backtrace(ThreadContext& context, const LoggerCore& logger, ContextNode* bound,
                                          Level level, const Message& message, std::span<const Field> fields) noexcept {
    if ((context.home->backtraces == 0 && !logger.backtrace_on.load(std::memory_order_relaxed)) ||
        logger.threshold.load(std::memory_order_relaxed) == Level::off)
        return;
    context.busy = true;
    const Pipeline* pipeline = acquire_pipeline(context);
    if (pipeline != nullptr && keep_record(*context.home, context.record, context.scratch, logger, bound, level,
                                           message, fields, record_time(context, *pipeline)))
        ThreadCounters::bump(context.counters.backtrace_kept);
    release_pipeline(context);
    context.busy = false;
}

/// A record at or above its logger's level while this thread has a backtrace open, or its
/// logger keeps one: written after what the backtraces it triggers kept. Cold: off the path
/// of every record outside a backtrace.
[[gnu::noinline, gnu::cold]] void emit_after_backtraces(ThreadContext& context, const LoggerCore& logger,
                                                        ContextNode* bound, Level level, const Message& message,
                                                        std::span<const Field> fields) noexcept {
    context.busy = true;
    const Pipeline* pipeline = acquire_pipeline(context);
    write_backtraces(context, pipeline, logger, level);
    encode_and_dispatch(context, pipeline, logger, bound, level, message, fields);
    release_pipeline(context);
    context.busy = false;
}

}  // namespace

void emit_records(ThreadContext& context, const Pipeline* pipeline, const LoggerCore& logger, ContextNode* bound,
                  Level level, const Message& message, std::span<const Field> fields) noexcept {
    encode_and_dispatch(context, pipeline, logger, bound, level, message, fields);
}

/// The record path of a thread whose own context is gone (its thread-locals were destroyed: the
/// main thread after main returned, a thread's own thread_local destructors) or could not be
/// made: one shared context, one record at a time. Cold; never on a thread with a context.
[[gnu::noinline, gnu::cold]] void emit_without_context(const LoggerCore& logger, ContextNode* bound, Level level,
                                                      const Message& message, std::span<const Field> fields) noexcept {
    if (level < logger.threshold.load(std::memory_order_relaxed)) return;  // let through for a backtrace elsewhere
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
    encode_and_dispatch(*shared, acquire_pipeline(*shared), logger, bound, level, message, fields);
    release_pipeline(*shared);
    shared->busy = false;
}

void retain_context(ContextNode* node) noexcept { retain(node); }

void release_context(ContextNode* node) noexcept {
    const ThreadContext* context = t_context;
    release(context != nullptr ? context->home : nullptr, node);
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
    detail::close_queued(*context->home, context->scratch);  // scopes closed elsewhere since the last record
    // Below the threshold, the gate let the record through for a backtrace (backtrace.hpp).
    const bool below_threshold = level < core_->threshold.load(std::memory_order_relaxed);
    if (below_threshold || context->home->backtraces != 0 || core_->backtrace_on.load(std::memory_order_relaxed))
        [[unlikely]] {
        if (below_threshold) {
            detail::keep_for_backtrace(*context, *core_, context_, level, message, fields);
        } else {
            detail::emit_after_backtraces(*context, *core_, context_, level, message, fields);
        }
        return;
    }
    context->busy = true;
    detail::encode_and_dispatch(*context, detail::acquire_pipeline(*context), *core_, context_, level, message, fields);
    detail::release_pipeline(*context);
    context->busy = false;
}

void Logger::emit_counted(Level level, std::uint64_t suppressed, const Message& message,
                          std::span<const Field> fields) const noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    // Busy: emit() drops the record (nested); its counted_fields may be the record in progress.
    if (suppressed != 0 && context != nullptr && !context->busy) fields = detail::with_suppressed(*context, suppressed, fields);
    emit(level, message, fields);
}

Logger Logger::with(std::span<const Field> fields) const {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context_ != nullptr) detail::retain(context_);
    if (context == nullptr || context->busy) {  // no pool here, or its scratch buffer is in use
        const auto scratch = std::make_unique<detail::Buffer>();
        return Logger(core_, detail::make_context_node(nullptr, context_, fields, *scratch));
    }
    return Logger(core_, detail::make_context_node(context->home, context_, fields, context->scratch));
}

void Logger::keep_backtrace(const Backtrace& backtrace) const {
    detail::ThreadContext* context = detail::this_thread_context();
    // Inside a logging call this thread may hold the logger's backtrace, copying a record.
    if (context == nullptr || context->busy) return;
    detail::set_logger_backtrace(*context->home, *core_, backtrace);
}

}  // namespace fieldlog

// The record path past the level gate: take this thread's buffer, encode the record once per
// format in use, hand it to the dispatcher, give the buffer back. Hot path: no heap, no lock
// other than each sink's own.
#include "fieldlog/logger.hpp"

#include <mutex>

#include "control/state.hpp"
#include "encode/encode.hpp"
#include "record/bound_fields.hpp"
#include "record/emit.hpp"
#include "record/resident_bound.hpp"
#include "record/thread_context.hpp"

namespace fieldlog {
namespace detail {
namespace {

/// emit_records' body, inlined into Logger::emit: out of line, its seven arguments cost ~30
/// instructions a record.
[[gnu::always_inline]] inline void encode_and_dispatch(ThreadContext& context, const Pipeline* pipeline,
                                                       const LoggerName& logger, const BoundFields* bound, Level level,
                                                       const Message& message, std::span<const Field> fields) noexcept {
    if (pipeline == nullptr) [[unlikely]] {  // shutdown() ran: nothing is open to take the record
        ThreadCounters::bump(context.counters.after_shutdown);
        return;
    }
    if (level < pipeline->min_level) return;
    const Timestamp now = pipeline->clock != nullptr ? pipeline->clock() : context.clock.now();
    ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(level)]);
    Buffer& buffer = context.record;
    bool oversized = false;
    for (const Channel& channel : pipeline->channels) {
        if (level < channel.min_level) continue;
        buffer.clear();
        const Format format = channel.options.format;
        const RecordInput record{now,
                                 level,
                                 logger,
                                 message,
                                 bound_segment(bound, format),
                                 context.scopes.segment(format),
                                 fields,
                                 resident_for(context.resident_bound, bound, format)};
        std::size_t start;
        try {
            start = encode_record(channel.options, buffer, context.scratch, record);
        } catch (...) {  // a user formatter threw, or memory ran out: drop this record
            buffer.shrink();
            context.resident_bound = 0;
            continue;
        }
        if (start != 0 || context.resident_bound != 0) {
            context.resident_bound =
                resident_after(context.resident_bound, buffer, start, bound, record.bound.bytes.size());
        }
        const std::span<const char> line = buffer.span().subspan(start);
        ThreadCounters::bump(context.counters.encoded_bytes, line.size());
        pipeline->dispatch(channel, RecordView{line, level, now});
        oversized = buffer.shrink() || oversized;
    }
    if (oversized) ThreadCounters::bump(context.counters.oversized);
}

}  // namespace

void emit_records(ThreadContext& context, const Pipeline* pipeline, const LoggerName& logger, const BoundFields* bound,
                  Level level, const Message& message, std::span<const Field> fields) noexcept {
    encode_and_dispatch(context, pipeline, logger, bound, level, message, fields);
}

/// The record path of a thread whose own context is gone (its thread-locals were destroyed: the
/// main thread after main returned, a thread's own thread_local destructors) or could not be
/// made: one shared context, one record at a time. Cold; never on a thread with a context.
[[gnu::noinline, gnu::cold]] void emit_without_context(const LoggerName& logger, const BoundFields* bound, Level level,
                                                      const Message& message, std::span<const Field> fields) noexcept {
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

}  // namespace detail

void Logger::emit(Level level, const Message& message, std::span<const Field> fields) const noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) [[unlikely]] {
        detail::emit_without_context(core_->name, bound_.get(), level, message, fields);
        return;
    }
    if (context->busy) {
        detail::ThreadCounters::bump(context->counters.nested_dropped);
        return;
    }
    context->busy = true;
    detail::encode_and_dispatch(*context, detail::acquire_pipeline(*context), core_->name, bound_.get(), level, message,
                                fields);
    detail::release_pipeline(*context);
    context->busy = false;
    if (context->scopes.has_pending()) context->scopes.close_pending();  // closed during this call
}

Logger Logger::with(std::span<const Field> fields) const {
    return Logger(core_, detail::make_bound_fields(bound_.get(), fields));
}

}  // namespace fieldlog

// The record path past the level gate: take this thread's buffer, encode the record once per
// format in use, hand it to the dispatcher, give the buffer back. Hot path: no heap, no lock
// other than each sink's own.
#include "fieldlog/logger.hpp"

#include <memory>
#include <mutex>

#include "dispatch/pipeline.hpp"
#include "encode/encode.hpp"
#include "record/context_node.hpp"
#include "record/emit.hpp"
#include "record/scope_layers.hpp"
#include "record/thread_context.hpp"

namespace fieldlog {
namespace detail {
namespace {

/// emit_records' body, inlined into Logger::emit: out of line, its seven arguments cost ~30
/// instructions a record.
[[gnu::always_inline]] inline void encode_and_dispatch(ThreadContext& context, const Pipeline* pipeline,
                                                       const LoggerName& logger, ContextNode* bound, Level level,
                                                       const Message& message, std::span<const Field> fields) noexcept {
    if (pipeline == nullptr) [[unlikely]] {  // shutdown() ran: nothing is open to take the record
        ThreadCounters::bump(context.counters.after_shutdown);
        return;
    }
    // A value past `fatal` (a cast integer) is written as fatal: not lost, and no table below is
    // indexed past its end.
    if (level > Level::fatal) [[unlikely]] level = Level::fatal;
    if (level < pipeline->routing.min_level) return;
    const Timestamp now = pipeline->clock != nullptr ? pipeline->clock() : context.clock.now();
    ThreadCounters::bump(context.counters.records[static_cast<std::size_t>(level)]);
    Buffer& buffer = context.record;
    bool oversized = false;
    for (const Channel& channel : pipeline->routing.channels) {
        if (level < channel.min_level) continue;
        const ContextEncoding encoding{channel.options, channel.options_id};
        try {
            const RecordInput record{now,
                                     level,
                                     logger,
                                     message,
                                     context_encoding(context.home, bound, encoding, buffer, context.scratch),
                                     context_encoding(context.home, context.home->top, encoding, buffer, context.scratch),
                                     fields};
            buffer.clear();
            encode_record(channel.options, buffer, context.scratch, record);
        } catch (...) {  // a user formatter threw, or memory ran out: drop this record
            buffer.shrink();
            continue;
        }
        const std::span<const char> line = buffer.span();
        ThreadCounters::bump(context.counters.encoded_bytes, line.size());
        pipeline->dispatch(channel, RecordView{line, level, now});
        oversized = buffer.shrink() || oversized;
    }
    if (oversized) ThreadCounters::bump(context.counters.oversized);
}

}  // namespace

void emit_records(ThreadContext& context, const Pipeline* pipeline, const LoggerName& logger, ContextNode* bound,
                  Level level, const Message& message, std::span<const Field> fields) noexcept {
    encode_and_dispatch(context, pipeline, logger, bound, level, message, fields);
}

/// The record path of a thread whose own context is gone (its thread-locals were destroyed: the
/// main thread after main returned, a thread's own thread_local destructors) or could not be
/// made: one shared context, one record at a time. Cold; never on a thread with a context.
[[gnu::noinline, gnu::cold]] void emit_without_context(const LoggerName& logger, ContextNode* bound, Level level,
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

void retain_context(ContextNode* node) noexcept { retain(node); }

void release_context(ContextNode* node) noexcept {
    const ThreadContext* context = t_context;
    release(context != nullptr ? context->home : nullptr, node);
}

}  // namespace detail

void Logger::emit(Level level, const Message& message, std::span<const Field> fields) const noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) [[unlikely]] {
        detail::emit_without_context(core_->name, context_, level, message, fields);
        return;
    }
    if (context->busy) {
        detail::ThreadCounters::bump(context->counters.nested_dropped);
        return;
    }
    detail::close_queued(*context->home, context->scratch);  // scopes closed elsewhere since the last record
    context->busy = true;
    detail::encode_and_dispatch(*context, detail::acquire_pipeline(*context), core_->name, context_, level, message,
                                fields);
    detail::release_pipeline(*context);
    context->busy = false;
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

}  // namespace fieldlog

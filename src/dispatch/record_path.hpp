// SPDX-License-Identifier: MIT
// What the record path's two files share: record_path.cpp (Logger::emit, the sync path and
// everything past the level check) and ring_entry.cpp (Logger::emit_call, a template call's
// copy straight into the ring): the way a record takes, its time, and the path past them for
// a template call the ring does not take.
#pragma once

#include <optional>
#include <span>

#include "base/record.hpp"
#include "dispatch/pipeline.hpp"
#include "record/context_pool.hpp"
#include "record/scope_layers.hpp"
#include "record/thread_context.hpp"

namespace fieldlog::detail {

/// The record's time: the configuration's clock, else this thread's.
inline Timestamp record_time(ThreadContext& context, const Pipeline& pipeline) noexcept {
    return pipeline.clock != nullptr ? pipeline.clock() : context.clock.now();
}

/// The way a record of `logger` at `level` takes past Logger::emit: kept for a backtrace when
/// the level check let it through below its level (for a backtrace open somewhere, or another
/// thread's scope); written after what the backtraces it triggers kept while this thread or the
/// logger has one open; else the plain way.
enum class Way : unsigned char { plain, keep, after_backtraces };
[[gnu::always_inline]] inline Way way_of(ThreadContext& context, const LoggerCore& logger, Level level) noexcept {
    close_queued(*context.home, context.scratch);  // scopes closed elsewhere since the last record
    const std::optional<Level> scope_level = context.home->scope_level;
    const bool below_level = scope_level ? level < *scope_level : level < logger.level.load(std::memory_order_relaxed);
    if (below_level || context.home->backtraces != 0 || logger.backtrace_on.load(std::memory_order_relaxed))
        [[unlikely]] {
        return below_level ? Way::keep : Way::after_backtraces;
    }
    return Way::plain;
}

/// A plain-way record from the logger's rules on (record_path.cpp's route_record, out of line):
/// this thread is `busy` and reads `pipeline`.
void route_fields(ThreadContext& context, const Pipeline* pipeline, const LoggerCore& logger, ContextNode* bound,
                  Level level, const Message& message, std::span<const Field> fields) noexcept;

}  // namespace fieldlog::detail

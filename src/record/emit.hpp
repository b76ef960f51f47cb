// SPDX-License-Identifier: MIT
// The record path between acquiring a pipeline and releasing it: encode once per format in use,
// dispatch. Logger::emit wraps it with the thread's busy flag and hazard slot; the swap
// benchmark calls it with one pipeline pinned for a whole run, to price the swappable dispatch.
#pragma once

#include <span>

#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/logger.hpp"

namespace fieldlog::detail {

struct ContextNode;
struct Pipeline;
struct ThreadContext;

/// Encodes and dispatches one record through `pipeline` (nothing when null or below its
/// level). MUST: the calling thread owns `context` and has marked it busy.
void emit_records(ThreadContext& context, const Pipeline* pipeline, const LoggerCore& logger,
                  ContextNode* bound, Level level, const Message& message,
                  std::span<const Field> fields) noexcept;

}  // namespace fieldlog::detail

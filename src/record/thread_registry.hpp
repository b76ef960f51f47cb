// SPDX-License-Identifier: MIT
// The registry of every thread's context, on the record side: a context adds itself when it is
// made and, when its thread exits, folds its counters into `retired` and leaves. src/control
// reads it (metrics(), configure() waiting for readers, the fork handlers); it never includes
// control/. Cold path: taken once per thread, not per record.
#pragma once

#include <mutex>
#include <vector>

#include "fieldlog/metrics.hpp"

namespace fieldlog::detail {

struct ThreadContext;

struct ThreadRegistry {
    std::mutex mutex;
    std::vector<ThreadContext*> threads;  ///< the live contexts (guarded by mutex)
    Metrics retired;  ///< counters of threads that have exited, and of retired async writers
};

/// The one registry; never destroyed, so a thread that exits during static destruction can
/// still leave it.
ThreadRegistry& thread_registry() noexcept;

}  // namespace fieldlog::detail

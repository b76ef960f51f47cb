// SPDX-License-Identifier: MIT
// The library's atfork hooks (see fork.hpp), run by the handlers of base/fork_hooks.cpp.
// prepare runs in the forking thread before fork(); the parent hook undoes it; the child hook
// repairs what did not survive: the other threads (their hazard slots, the writer thread) and
// the parent's queued records.
#include "control/fork.hpp"

#include <atomic>
#include <mutex>

#include "base/fork_hooks.hpp"
#include "control/state.hpp"
#include "dispatch/sink_calls.hpp"
#include "record/thread_registry.hpp"

namespace fieldlog::detail {
namespace {

/// The pipeline whose sink locks prepare took (configure_mutex keeps it current meanwhile).
const Pipeline* g_forking = nullptr;

void prepare() noexcept {
    state().configure_mutex.lock();
    thread_registry().mutex.lock();
    g_forking = g_current_pipeline.load(std::memory_order_acquire);
    if (g_forking != nullptr) {
        for (const auto& handle : g_forking->routing.sinks) {
            handle->sink->mutex().lock();
            flush_sink(*handle->sink);  // what is buffered is the parent's; the child must not write it again
        }
        if (g_forking->writer) g_forking->writer->lock_for_fork();
        g_forking->filter_sets.lock_for_fork();
    }
}

void release() noexcept {
    if (g_forking != nullptr) {  // the writer's ring list is unlocked by its after_fork hook
        g_forking->filter_sets.unlock_after_fork();
        const auto& sinks = g_forking->routing.sinks;
        for (auto it = sinks.rbegin(); it != sinks.rend(); ++it) (*it)->sink->mutex().unlock();
    }
    g_forking = nullptr;
    thread_registry().mutex.unlock();
    state().configure_mutex.unlock();
}

void in_parent() noexcept {
    if (g_forking != nullptr && g_forking->writer) g_forking->writer->after_fork_in_parent();
    release();
}

void in_child() noexcept {
    // Only the forking thread exists here; it is not inside a logging call. Any other thread
    // that was is gone, and its hazard slot must not make configure() wait for it forever.
    for (ThreadContext* context : thread_registry().threads) context->hazard.store(nullptr, std::memory_order_relaxed);
    if (g_forking != nullptr && g_forking->writer) g_forking->writer->after_fork_in_child();
    release();
}

}  // namespace

void register_fork_handlers() { set_library_fork_hooks(&prepare, &in_parent, &in_child); }

}  // namespace fieldlog::detail

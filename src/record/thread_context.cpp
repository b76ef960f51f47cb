// SPDX-License-Identifier: MIT
#include "record/thread_context.hpp"

#include <algorithm>
#include <thread>

#include "base/platform.hpp"
#include "base/signal_stack.hpp"
#include "record/scope_layers.hpp"
#include "record/thread_registry.hpp"

namespace fieldlog::detail {

[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadContext* t_context = nullptr;
constinit std::atomic<Pipeline*> g_current_pipeline{nullptr};

namespace {

thread_local bool t_torn_down = false;

/// Owns this thread's context: the context itself lives on the heap, so the library's static
/// TLS stays a few words and a plugin linking it can be dlopen()ed (glibc reserves little static
/// TLS for modules loaded later).
struct ContextOwner {
    ThreadContext* context = nullptr;
    ~ContextOwner() {
        t_context = nullptr;
        t_torn_down = true;
        delete context;
    }
};

thread_local ContextOwner t_owner;

}  // namespace

/// Set once during static initialisation; a reader that runs before it finds it false and uses a
/// seq_cst store. With the process barrier, the ordering between a reader's hazard store and
/// its re-load of the current pipeline is paid for by configure() with one barrier (asymmetric
/// fences) instead of by every record with a locked instruction.
extern const bool g_light_readers = register_process_barrier();

ThreadContext::ThreadContext() : home(adopt_home()) {
    ThreadRegistry& r = thread_registry();
    const std::lock_guard lock(r.mutex);
    r.threads.push_back(this);
}

ThreadContext::~ThreadContext() {
    close_all_scopes(*home, scratch);
    orphan_home(home);
    ThreadRegistry& r = thread_registry();
    const std::lock_guard lock(r.mutex);
    for (int i = 0; i < level_count; ++i) {
        r.retired.records_by_level[static_cast<std::size_t>(i)] +=
            counters.records[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
    }
    r.retired.encoded_bytes += counters.encoded_bytes.load(std::memory_order_relaxed);
    r.retired.oversized_records += counters.oversized.load(std::memory_order_relaxed);
    r.retired.context_fields_dropped += counters.context_fields_dropped.load(std::memory_order_relaxed);
    r.retired.nested_dropped += counters.nested_dropped.load(std::memory_order_relaxed);
    r.retired.dropped_after_shutdown += counters.after_shutdown.load(std::memory_order_relaxed);
    r.retired.backtrace_kept += counters.backtrace_kept.load(std::memory_order_relaxed);
    r.retired.backtrace_written += counters.backtrace_written.load(std::memory_order_relaxed);
    r.threads.erase(std::remove(r.threads.begin(), r.threads.end(), this), r.threads.end());
}

ThreadContext* make_thread_context() noexcept {
    if (t_torn_down) return nullptr;
    ContextOwner& owner = t_owner;  // registers its destructor on this thread's first use
    try {
        owner.context = new ThreadContext;
    } catch (...) {  // out of memory: this record is lost, the next one tries again
        return nullptr;
    }
    t_context = owner.context;
    give_thread_a_signal_stack();
    return t_context;
}

void wait_for_readers(const Pipeline* pipeline) {
    if (g_light_readers) process_barrier();  // after the swap, before reading the hazard slots
    ThreadRegistry& r = thread_registry();
    const std::lock_guard lock(r.mutex);
    for (const ThreadContext* context : r.threads) {
        while (context->hazard.load(std::memory_order_seq_cst) == pipeline) std::this_thread::yield();
    }
}

}  // namespace fieldlog::detail

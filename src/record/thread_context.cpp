#include "record/thread_context.hpp"

#include <algorithm>
#include <thread>

#include "control/state.hpp"

namespace fieldlog::detail {
namespace {

thread_local bool t_torn_down = false;

struct ContextHolder {
    ThreadContext context;
    ~ContextHolder() { t_torn_down = true; }
};

thread_local ContextHolder t_holder;

}  // namespace

ThreadContext::ThreadContext() {
    State& s = state();
    const std::lock_guard lock(s.threads_mutex);
    s.threads.push_back(this);
}

ThreadContext::~ThreadContext() {
    State& s = state();
    const std::lock_guard lock(s.threads_mutex);
    for (int i = 0; i < level_count; ++i) {
        s.retired.records_by_level[static_cast<std::size_t>(i)] +=
            counters.records[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
    }
    s.retired.encoded_bytes += counters.encoded_bytes.load(std::memory_order_relaxed);
    s.retired.oversized_records += counters.oversized.load(std::memory_order_relaxed);
    s.retired.truncated_scopes += counters.truncated_scopes.load(std::memory_order_relaxed);
    s.retired.nested_dropped += counters.nested_dropped.load(std::memory_order_relaxed);
    s.threads.erase(std::remove(s.threads.begin(), s.threads.end(), this), s.threads.end());
}

ThreadContext* this_thread_context() noexcept {
    if (t_torn_down) return nullptr;
    return &t_holder.context;
}

const Pipeline* acquire_pipeline(ThreadContext& context) noexcept {
    const std::atomic<Pipeline*>& current = state().current;
    const Pipeline* pipeline = current.load(std::memory_order_acquire);
    for (;;) {
        // Announce, then confirm it is still current: a writer that swapped after our
        // confirmation is guaranteed (seq_cst) to see the announcement and wait for us.
        context.hazard.store(pipeline, std::memory_order_seq_cst);
        const Pipeline* again = current.load(std::memory_order_seq_cst);
        if (again == pipeline) return pipeline;
        pipeline = again;
    }
}

void wait_for_readers(const Pipeline* pipeline) {
    State& s = state();
    const std::lock_guard lock(s.threads_mutex);
    for (const ThreadContext* context : s.threads) {
        while (context->hazard.load(std::memory_order_seq_cst) == pipeline) std::this_thread::yield();
    }
}

}  // namespace fieldlog::detail

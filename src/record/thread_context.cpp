#include "record/thread_context.hpp"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "control/state.hpp"

namespace fieldlog::detail {
namespace {

thread_local bool t_torn_down = false;

/// Registers this process for membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED). When that works,
/// the ordering between a reader's hazard store and its re-load of the current pipeline is paid
/// for by configure() with one membarrier call (an asymmetric fence) instead of by every record
/// with a locked instruction.
bool register_expedited_membarrier() noexcept {
#if defined(__linux__)
    const long supported = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    const long needed = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
    return supported > 0 && (supported & needed) == needed &&
           ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
}

/// Set once during static initialisation; readers that find it false use a seq_cst store.
const bool g_light_readers = register_expedited_membarrier();

/// Runs a full memory barrier on every thread of the process that is running right now.
void heavy_barrier() noexcept {
#if defined(__linux__)
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    // Registration does not survive every path (e.g. exec); the global command needs none.
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
    std::abort();  // readers already rely on the barrier; continuing could free a pipeline in use
#endif
}

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
        // confirmation is guaranteed to see the announcement and wait for us (by its
        // membarrier, or by the seq_cst store).
        if (g_light_readers) {
            context.hazard.store(pipeline, std::memory_order_release);
            std::atomic_signal_fence(std::memory_order_seq_cst);
        } else {
            context.hazard.store(pipeline, std::memory_order_seq_cst);
        }
        const Pipeline* again = current.load(std::memory_order_seq_cst);
        if (again == pipeline) return pipeline;
        pipeline = again;
    }
}

void wait_for_readers(const Pipeline* pipeline) {
    if (g_light_readers) heavy_barrier();  // after the swap, before reading the hazard slots
    State& s = state();
    const std::lock_guard lock(s.threads_mutex);
    for (const ThreadContext* context : s.threads) {
        while (context->hazard.load(std::memory_order_seq_cst) == pipeline) std::this_thread::yield();
    }
}

}  // namespace fieldlog::detail

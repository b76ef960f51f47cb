// The atfork handlers (see fork.hpp). prepare runs in the forking thread before fork(); the
// parent handler undoes it; the child handler repairs what did not survive: the other
// threads (their hazard slots, the writer thread) and the parent's queued records.
#include "control/fork.hpp"

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>

#include "control/state.hpp"
#include "record/thread_registry.hpp"

namespace fieldlog::detail {
namespace {

struct Participant {
    void (*before)();
    void (*in_parent)();
    void (*in_child)();
};

// Appended under g_participants_mutex, read by the handlers without it (they may run while a
// participant holds its own lock and registers: no lock of ours may be needed then).
std::array<Participant, 8> g_participants{};
std::atomic<std::size_t> g_participant_count{0};
std::mutex g_participants_mutex;

/// The pipeline whose sink locks prepare took (configure_mutex keeps it current meanwhile).
const Pipeline* g_forking = nullptr;

void prepare() noexcept {
    state().configure_mutex.lock();
    thread_registry().mutex.lock();
    g_forking = g_current_pipeline.load(std::memory_order_acquire);
    if (g_forking != nullptr) {
        for (const auto& handle : g_forking->handles) {
            handle->mutex.lock();
            handle->sink->flush();  // what is buffered is the parent's; the child must not write it again
        }
    }
    const std::size_t participants = g_participant_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < participants; ++i) g_participants[i].before();
}

void release() noexcept {
    if (g_forking != nullptr) {
        for (auto it = g_forking->handles.rbegin(); it != g_forking->handles.rend(); ++it) (*it)->mutex.unlock();
    }
    g_forking = nullptr;
    thread_registry().mutex.unlock();
    state().configure_mutex.unlock();
}

void in_parent() noexcept {
    const std::size_t participants = g_participant_count.load(std::memory_order_acquire);
    for (std::size_t i = participants; i-- > 0;) g_participants[i].in_parent();
    release();
}

void in_child() noexcept {
    const std::size_t participants = g_participant_count.load(std::memory_order_acquire);
    for (std::size_t i = participants; i-- > 0;) g_participants[i].in_child();
    // Only the forking thread exists here; it is not inside a logging call. Any other thread
    // that was is gone, and its hazard slot must not make configure() wait for it forever.
    for (ThreadContext* context : thread_registry().threads) context->hazard.store(nullptr, std::memory_order_relaxed);
    if (g_forking != nullptr && g_forking->writer) g_forking->writer->after_fork_in_child();
    release();
}

}  // namespace

void register_fork_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (const int error = ::pthread_atfork(&prepare, &in_parent, &in_child); error != 0) {
            std::fprintf(stderr, "fieldlog: pthread_atfork failed (%d); a forked child may lose or repeat records\n", error);
        }
    });
}

void add_fork_participant(void (*before)(), void (*in_parent)(), void (*in_child)()) {
    register_fork_handlers();
    const std::lock_guard lock(g_participants_mutex);
    const std::size_t count = g_participant_count.load(std::memory_order_relaxed);
    if (count == g_participants.size()) {
        std::fprintf(stderr, "fieldlog: too many fork participants; one is left out\n");
        return;
    }
    g_participants[count] = Participant{before, in_parent, in_child};
    g_participant_count.store(count + 1, std::memory_order_release);
}

}  // namespace fieldlog::detail

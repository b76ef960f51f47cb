// SPDX-License-Identifier: MIT
#include "base/thread_id.hpp"

#include <pthread.h>

#include "base/fork_hooks.hpp"
#include "base/platform.hpp"

#if FIELDLOG_LINUX_FACILITIES
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <atomic>
#endif

namespace fieldlog::detail {

constinit thread_local int t_thread_id = 0;

namespace {

#if !FIELDLOG_LINUX_FACILITIES
// No thread id the system shows: the threads are numbered from 1 in the order they first ask.
std::atomic<int> g_last_thread_number{0};
[[gnu::tls_model("initial-exec")]] constinit thread_local int t_thread_number = 0;
#endif

/// fork() copies the forking thread's cache into a child where that thread has another id
/// (numbered: one the parent's threads never had).
void forget_in_child() {
    t_thread_id = 0;
#if !FIELDLOG_LINUX_FACILITIES
    t_thread_number = 0;
#endif
}
[[maybe_unused]] const bool g_forgets_in_child = (add_fork_participant(nullptr, nullptr, forget_in_child), true);

}  // namespace

void name_this_thread([[maybe_unused]] const char* name) noexcept {
#if defined(__APPLE__)
    ::pthread_setname_np(name);  // names the calling thread only
#elif defined(__linux__) || defined(__FreeBSD__)
    ::pthread_setname_np(::pthread_self(), name);
#endif
}

int kernel_thread_id() noexcept {
#if FIELDLOG_LINUX_FACILITIES
    return static_cast<int>(::syscall(SYS_gettid));
#else
    // Lock-free: async-signal-safe as well.
    if (t_thread_number == 0) t_thread_number = g_last_thread_number.fetch_add(1, std::memory_order_relaxed) + 1;
    return t_thread_number;
#endif
}

int ask_thread_id() noexcept {
    t_thread_id = kernel_thread_id();
    return t_thread_id;
}

}  // namespace fieldlog::detail

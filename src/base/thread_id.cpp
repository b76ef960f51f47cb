// SPDX-License-Identifier: MIT
#include "base/thread_id.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fork_hooks.hpp"

namespace fieldlog::detail {

constinit thread_local int t_thread_id = 0;

namespace {

void nothing() {}
/// fork() copies the forking thread's cache into a child where that thread has another id.
void forget_in_child() { t_thread_id = 0; }

}  // namespace

void name_this_thread(const char* name) noexcept { ::pthread_setname_np(::pthread_self(), name); }

int kernel_thread_id() noexcept { return static_cast<int>(::syscall(SYS_gettid)); }

int ask_thread_id() noexcept {
    static const bool registered = [] {
        add_fork_participant(nothing, nothing, forget_in_child);
        return true;
    }();
    (void)registered;
    t_thread_id = kernel_thread_id();
    return t_thread_id;
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The atfork handlers (see fork_hooks.hpp). prepare runs in the forking thread before fork():
// the library's hooks, then the participants'; the parent and the child handlers undo it in
// the reverse order. A mutex of its own, taken first and released last, keeps two forking
// threads from mixing their snapshots of what prepare ran.
#include "base/fork_hooks.hpp"

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <mutex>

namespace fieldlog::detail {
namespace {

struct Hooks {
    void (*before)();
    void (*in_parent)();
    void (*in_child)();
};

// Written once (set_library_fork_hooks), read by the handlers.
Hooks g_library_hooks{};
std::atomic<bool> g_library_set{false};

// Appended under g_participants_mutex, read by the handlers without it (they may run while a
// participant holds its own lock and registers: no lock the handlers take may be needed then).
std::array<Hooks, 8> g_participants{};
std::atomic<std::size_t> g_participant_count{0};
std::mutex g_participants_mutex;

// One fork at a time through the handlers; what prepare ran, for the parent and child handlers.
std::mutex g_fork_mutex;
bool g_forking_library = false;
std::size_t g_forking_participants = 0;

void prepare() noexcept {
    g_fork_mutex.lock();
    g_forking_library = g_library_set.load(std::memory_order_acquire);
    if (g_forking_library) g_library_hooks.before();
    g_forking_participants = g_participant_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < g_forking_participants; ++i) {
        if (g_participants[i].before != nullptr) g_participants[i].before();
    }
}

void in_parent() noexcept {
    for (std::size_t i = g_forking_participants; i-- > 0;) {
        if (g_participants[i].in_parent != nullptr) g_participants[i].in_parent();
    }
    if (g_forking_library) g_library_hooks.in_parent();
    g_fork_mutex.unlock();
}

void in_child() noexcept {
    for (std::size_t i = g_forking_participants; i-- > 0;) g_participants[i].in_child();
    if (g_forking_library) g_library_hooks.in_child();
    g_fork_mutex.unlock();
}

void register_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (const int error = ::pthread_atfork(&prepare, &in_parent, &in_child); error != 0) {
            std::fprintf(stderr, "fieldlog: pthread_atfork failed (%d); a forked child may lose or repeat records\n", error);
        }
    });
}

}  // namespace

void set_library_fork_hooks(void (*before)(), void (*in_parent)(), void (*in_child)()) {
    register_handlers();
    static std::once_flag once;
    std::call_once(once, [&] {
        g_library_hooks = Hooks{before, in_parent, in_child};
        g_library_set.store(true, std::memory_order_release);
    });
}

void add_fork_participant(void (*before)(), void (*in_parent)(), void (*in_child)()) {
    register_handlers();
    const std::lock_guard lock(g_participants_mutex);
    const std::size_t count = g_participant_count.load(std::memory_order_relaxed);
    if (count == g_participants.size()) {
        std::fprintf(stderr, "fieldlog: too many fork participants; one is left out\n");
        return;
    }
    g_participants[count] = Hooks{before, in_parent, in_child};
    g_participant_count.store(count + 1, std::memory_order_release);
}

}  // namespace fieldlog::detail

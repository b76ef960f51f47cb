// SPDX-License-Identifier: MIT
// The kernel's id of a thread (gettid(2)): the number ps, top, gdb and the journal show, and the
// one the fatal record names. std::thread::id and pthread_self() are other numbers; the portable
// core (base/platform.hpp) numbers threads itself. And the name each thread of the library gives
// itself, which top -H, ps -L, perf and gdb show.
#pragma once

namespace fieldlog::detail {

/// Asks the kernel each time: async-signal-safe, for the signal and crash paths.
int kernel_thread_id() noexcept;

/// This thread's id once asked; 0 before (a forked child's thread asks again).
[[gnu::tls_model("initial-exec")]] extern constinit thread_local int t_thread_id;
/// Asks the kernel and keeps the answer in t_thread_id.
int ask_thread_id() noexcept;

/// Names the calling thread `name` (at most 15 bytes: the kernel's limit), "fieldlog-…" for
/// each of the library's threads: a service's own threads are told apart from the logger's.
void name_this_thread(const char* name) noexcept;

/// The calling thread's id, asked once per thread: for records, inline as every async record asks.
inline int cached_thread_id() noexcept {
    const int id = t_thread_id;
    return id != 0 ? id : ask_thread_id();
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The kernel's id of a thread (gettid(2)): the number ps, top, gdb and the journal show, and the
// one the fatal record names. std::thread::id and pthread_self() are other numbers.
#pragma once

namespace fieldlog::detail {

/// Asks the kernel each time: async-signal-safe, for the signal and crash paths.
int kernel_thread_id() noexcept;

/// The calling thread's id, asked once per thread (a forked child asks again): for records.
int cached_thread_id() noexcept;

}  // namespace fieldlog::detail

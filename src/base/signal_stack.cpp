// SPDX-License-Identifier: MIT
#include "base/signal_stack.hpp"

#include <signal.h>
#include <sys/mman.h>

#include <cstddef>

namespace fieldlog::detail {
namespace {

constexpr std::size_t kSignalStackSize = 64 * 1024;

/// This thread's alternate stack, if we made it; on exit it is let go only while it is still
/// the one in use (the program may have set its own since).
struct SignalStack {
    void* memory = nullptr;
    SignalStack() = default;
    SignalStack(const SignalStack&) = delete;
    SignalStack& operator=(const SignalStack&) = delete;
    ~SignalStack() {
        if (memory == nullptr) return;
        stack_t current{};
        if (::sigaltstack(nullptr, &current) == 0 && current.ss_sp == memory && (current.ss_flags & SS_ONSTACK) == 0) {
            stack_t off{};
            off.ss_flags = SS_DISABLE;
            ::sigaltstack(&off, nullptr);
            ::munmap(memory, kSignalStackSize);
        }
    }
};
thread_local SignalStack t_signal_stack;

}  // namespace

void give_thread_a_signal_stack() noexcept {
    if (t_signal_stack.memory != nullptr) return;
    stack_t current{};
    if (::sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return;  // it has one
    void* memory = ::mmap(nullptr, kSignalStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED) return;
    stack_t stack{};
    stack.ss_sp = memory;
    stack.ss_size = kSignalStackSize;
    if (::sigaltstack(&stack, nullptr) != 0) {
        ::munmap(memory, kSignalStackSize);
        return;
    }
    t_signal_stack.memory = memory;
}

}  // namespace fieldlog::detail

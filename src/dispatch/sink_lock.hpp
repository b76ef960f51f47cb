// The lock that makes a sink single-caller. Every record takes it once on the caller's thread,
// so its free path is one atomic instruction each way: std::mutex (glibc's pthread path) cost
// ~50 instructions a record more. A thread that finds it held sleeps in the kernel (C++20
// atomic wait: a futex on Linux), so a slow sink never spins a core. The three-state protocol
// is Drepper's "Futexes Are Tricky" mutex: unlock wakes someone only when a waiter may exist.
// try_lock() and unlock() are also used from a signal handler (the final flush): one CAS, one
// exchange and at most a futex wake, no lock of their own.
#pragma once

#include <atomic>
#include <cstdint>

namespace fieldlog::detail {

class SinkLock {
public:
    SinkLock() = default;
    SinkLock(const SinkLock&) = delete;
    SinkLock& operator=(const SinkLock&) = delete;

    void lock() noexcept {
        if (!try_lock()) [[unlikely]] lock_contended();
    }
    bool try_lock() noexcept {
        std::uint32_t expected = kFree;
        return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock() noexcept {
        if (state_.exchange(kFree, std::memory_order_release) == kContended) [[unlikely]] state_.notify_one();
    }

private:
    static constexpr std::uint32_t kFree = 0;
    static constexpr std::uint32_t kLocked = 1;
    static constexpr std::uint32_t kContended = 2;  ///< locked, and some thread may be waiting

    [[gnu::noinline]] void lock_contended() noexcept {
        // Whoever takes the lock here marks it contended: its unlock then wakes the next waiter.
        while (state_.exchange(kContended, std::memory_order_acquire) != kFree) {
            state_.wait(kContended, std::memory_order_relaxed);
        }
    }

    std::atomic<std::uint32_t> state_{kFree};
};

}  // namespace fieldlog::detail

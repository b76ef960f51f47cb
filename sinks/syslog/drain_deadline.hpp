// SPDX-License-Identifier: MIT
// When the syslog sink's thread must stop trying: the sink's closing starts a drain_timeout that
// counts from the close itself, not from when the thread, perhaps inside a connection attempt,
// noticed it. Internal to sinks/.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace fieldlog::detail {

class DrainDeadline {
public:
    using Clock = std::chrono::steady_clock;

    explicit DrainDeadline(std::chrono::milliseconds timeout) noexcept : timeout_(timeout) {}

    /// The closing thread: the deadline counts from now, unless it began before. Wake the sink
    /// thread afterwards.
    void begin() noexcept {
        if (begun_.exchange(true, std::memory_order_relaxed)) return;
        since_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
        closing_.store(true, std::memory_order_seq_cst);
    }
    /// Any thread, once closing began: when the deadline passes.
    [[nodiscard]] Clock::time_point due() const noexcept {
        return Clock::time_point(Clock::duration(since_.load(std::memory_order_relaxed))) + timeout_;
    }
    [[nodiscard]] bool began() const noexcept { return closing_.load(std::memory_order_acquire); }

    /// The sink thread: sets the deadline once closing began. What follows is that thread's alone.
    void notice() noexcept {
        if (closing_.load(std::memory_order_acquire) && !is_set()) at_ = due();
    }

    [[nodiscard]] bool is_set() const noexcept { return at_ != Clock::time_point::max(); }
    [[nodiscard]] bool passed() const noexcept { return Clock::now() >= at_; }
    [[nodiscard]] Clock::time_point at() const noexcept { return at_; }
    /// Milliseconds until the deadline, for poll(): -1 while none is set.
    [[nodiscard]] int ms_left() const noexcept {
        if (!is_set()) return -1;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
        return static_cast<int>(std::max<std::int64_t>(left, 0));
    }

private:
    const std::chrono::milliseconds timeout_;
    std::atomic<bool> begun_{false};
    std::atomic<bool> closing_{false};
    std::atomic<Clock::rep> since_{0};
    Clock::time_point at_ = Clock::time_point::max();
};

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// A first-in first-out queue of at most N items in place, for the syslog sink's thread: what it
// sent and awaits acknowledgement for. Internal to sinks/; never allocates.
#pragma once

#include <array>
#include <cstddef>

namespace fieldlog::detail {

template <typename T, std::size_t N>
class FixedQueue {
public:
    /// Only when not full().
    void push(const T& item) noexcept {
        items_[(first_ + count_) % N] = item;
        ++count_;
    }
    /// Only when not empty().
    [[nodiscard]] const T& front() const noexcept { return items_[first_]; }
    void pop() noexcept {
        first_ = (first_ + 1) % N;
        --count_;
    }
    void clear() noexcept {
        first_ = 0;
        count_ = 0;
    }
    [[nodiscard]] std::size_t size() const noexcept { return count_; }
    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
    [[nodiscard]] bool full() const noexcept { return count_ == N; }

private:
    std::array<T, N> items_{};
    std::size_t first_ = 0;
    std::size_t count_ = 0;
};

}  // namespace fieldlog::detail

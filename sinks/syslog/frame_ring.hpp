// SPDX-License-Identifier: MIT
// The syslog sink's frame ring: octet-counted frames ("LEN SP MSG") back to back at absolute
// positions, written by the logging threads and freed by the sink's thread once the receiver
// has them. Its two positions are all the threads share: the head (end of the last whole frame,
// the callers') and the released position (first frame not known acknowledged, the sink
// thread's). Internal to sinks/; allocates only when made.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>

namespace fieldlog::detail {

/// Bytes of the ring: `first` up to the ring's end at most, then `second` from its start
/// (empty when they did not wrap around).
struct RingSlice {
    std::string_view first;
    std::string_view second;

    [[nodiscard]] std::size_t size() const noexcept { return first.size() + second.size(); }
};

class FrameRing {
public:
    explicit FrameRing(std::size_t capacity);

    /// The caller's side: writes one frame, its length and then `message_parts`, and publishes
    /// it. False, nothing written, when it does not fit in the free part of the ring.
    [[nodiscard]] bool append_frame(std::initializer_list<std::string_view> message_parts) noexcept;

    /// End of the last whole frame. The sink thread reads it with seq_cst just before it
    /// sleeps: either it sees a frame published meanwhile, or the caller sees it asleep.
    [[nodiscard]] std::uint64_t head(std::memory_order order = std::memory_order_acquire) const noexcept {
        return head_.load(order);
    }
    /// The first frame not known acknowledged; everything before it is free.
    [[nodiscard]] std::uint64_t released(std::memory_order order = std::memory_order_acquire) const noexcept {
        return released_.load(order);
    }
    /// The sink thread's side: frees the frames before `position`.
    void release(std::uint64_t position) noexcept { released_.store(position, std::memory_order_release); }
    /// Bytes written and not yet freed, for any thread.
    [[nodiscard]] std::uint64_t buffered() const noexcept;

    /// Where the frame that starts at `start` ends.
    [[nodiscard]] std::uint64_t frame_end(std::uint64_t start) const noexcept;
    /// How many frames lie in [from, to).
    [[nodiscard]] std::uint64_t frames_between(std::uint64_t from, std::uint64_t to) const noexcept;
    /// The `size` bytes from `position` on.
    [[nodiscard]] RingSlice slice(std::uint64_t position, std::size_t size) const noexcept;

private:
    void put(std::uint64_t position, std::string_view data) noexcept;

    const std::size_t capacity_;
    const std::unique_ptr<char[]> bytes_;
    std::atomic<std::uint64_t> head_{0};
    std::atomic<std::uint64_t> released_{0};
};

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The syslog sink's frame ring: the callers copy frames in, the sink's thread reads and frees
// them.
#include "frame_ring.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace fieldlog::detail {

FrameRing::FrameRing(std::size_t capacity) : capacity_(capacity), bytes_(std::make_unique<char[]>(capacity)) {}

bool FrameRing::append_frame(std::initializer_list<std::string_view> message_parts) noexcept {
    std::size_t message_size = 0;
    for (const std::string_view part : message_parts) message_size += part.size();
    char length[24];
    char* length_end = std::to_chars(length, length + sizeof length - 1, message_size).ptr;
    *length_end++ = ' ';
    const std::string_view length_field(length, static_cast<std::size_t>(length_end - length));

    const std::uint64_t at = head_.load(std::memory_order_relaxed);
    const std::uint64_t free = capacity_ - (at - released_.load(std::memory_order_acquire));
    if (length_field.size() + message_size > free) return false;
    std::uint64_t end = at;
    put(end, length_field);
    end += length_field.size();
    for (const std::string_view part : message_parts) {
        put(end, part);
        end += part.size();
    }
    // seq_cst, paired with the sink thread's sleeping flag (see head()).
    head_.store(end, std::memory_order_seq_cst);
    return true;
}

std::uint64_t FrameRing::buffered() const noexcept {
    const std::uint64_t released = released_.load(std::memory_order_acquire);  // first: it never passes head
    return head_.load(std::memory_order_acquire) - released;
}

void FrameRing::put(std::uint64_t position, std::string_view data) noexcept {
    const std::size_t offset = static_cast<std::size_t>(position % capacity_);
    const std::size_t first = std::min(data.size(), capacity_ - offset);
    std::memcpy(bytes_.get() + offset, data.data(), first);
    std::memcpy(bytes_.get(), data.data() + first, data.size() - first);
}

std::uint64_t FrameRing::frame_end(std::uint64_t start) const noexcept {
    std::uint64_t length = 0;
    std::uint64_t at = start;
    for (;;) {
        const char c = bytes_[static_cast<std::size_t>(at % capacity_)];
        ++at;
        if (c == ' ') break;
        length = length * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return at + length;
}

std::uint64_t FrameRing::frames_between(std::uint64_t from, std::uint64_t to) const noexcept {
    std::uint64_t count = 0;
    for (std::uint64_t at = from; at < to; at = frame_end(at)) ++count;
    return count;
}

RingSlice FrameRing::slice(std::uint64_t position, std::size_t size) const noexcept {
    const std::size_t offset = static_cast<std::size_t>(position % capacity_);
    const std::size_t first = std::min(size, capacity_ - offset);
    return {.first = {bytes_.get() + offset, first}, .second = {bytes_.get(), size - first}};
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The record buffer: a byte buffer with inline capacity, owned by one thread and reused for
// every record. A record larger than the inline space moves to the heap for that record only;
// shrink() gives the heap block back afterwards, so a thread never retains more than
// kInlineCapacity bytes once its record is done. Below every layer (src/base/): record, encode,
// dispatch and control all hold or write one.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>

#include <fmt/format.h>

namespace fieldlog::detail {

class Buffer {
public:
    using value_type = char;
    static constexpr std::size_t kInlineCapacity = 16 * 1024;

    Buffer() noexcept = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { release_heap(); }

    [[nodiscard]] char* data() noexcept { return data_; }
    [[nodiscard]] const char* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::span<const char> span() const noexcept { return {data_, size_}; }
    [[nodiscard]] std::string_view view() const noexcept { return {data_, size_}; }
    char& operator[](std::size_t i) noexcept { return data_[i]; }
    [[nodiscard]] bool on_heap() const noexcept { return data_ != inline_; }

    void clear() noexcept { size_ = 0; }

    /// Room for `n` more bytes; returns where they go. Follow with commit(end).
    char* reserve(std::size_t n) {
        if (capacity_ - size_ < n) grow(n);
        return data_ + size_;
    }
    void commit(char* end) noexcept { size_ = static_cast<std::size_t>(end - data_); }

    void append(const char* p, std::size_t n) {
        if (n == 0) return;  // an empty string_view may carry a null pointer, which memcpy forbids
        char* out = reserve(n);
        std::memcpy(out, p, n);
        size_ += n;
    }
    void append(std::string_view s) { append(s.data(), s.size()); }
    void push_back(char c) {
        if (size_ == capacity_) grow(1);
        data_[size_++] = c;
    }
    /// For fmt's contiguous-container fast path.
    void resize(std::size_t n) {
        if (n > capacity_) grow(n - size_);
        size_ = n;
    }
    /// Drops bytes after `n` (n <= size()).
    void truncate(std::size_t n) noexcept {
        if (n < size_) size_ = n;
    }
    /// Removes bytes [from, to) (to <= size()), moving the rest left.
    void erase(std::size_t from, std::size_t to) noexcept {
        std::memmove(data_ + from, data_ + to, size_ - to);
        size_ -= to - from;
    }
    /// Returns to the inline storage (contents dropped). True when a heap block was released.
    bool shrink() noexcept {
        if (!on_heap()) return false;
        release_heap();
        size_ = 0;
        return true;
    }

private:
    void grow(std::size_t extra);  // cold: src/base/buffer.cpp
    void release_heap() noexcept;

    char* data_ = inline_;
    std::size_t size_ = 0;
    std::size_t capacity_ = kInlineCapacity;
    char inline_[kInlineCapacity];
};

}  // namespace fieldlog::detail

template <>
struct fmt::is_contiguous<fieldlog::detail::Buffer> : std::true_type {};

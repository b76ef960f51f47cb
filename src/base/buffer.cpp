// SPDX-License-Identifier: MIT
#include "base/buffer.hpp"

#include <algorithm>
#include <new>

namespace fieldlog::detail {

void Buffer::grow(std::size_t extra) {
    const std::size_t needed = size_ + extra;
    const std::size_t capacity = std::max(needed, capacity_ * 2);
    char* block = static_cast<char*>(::operator new(capacity));
    std::memcpy(block, data_, size_);
    release_heap();
    data_ = block;
    capacity_ = capacity;
}

void Buffer::release_heap() noexcept {
    if (data_ != inline_) ::operator delete(data_);
    data_ = inline_;
    capacity_ = kInlineCapacity;
}

}  // namespace fieldlog::detail

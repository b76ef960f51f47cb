// SPDX-License-Identifier: MIT
// Counts every global operator new in the test binary that links alloc_counter.cpp.
#pragma once

#include <cstdint>

namespace fieldlog_test {

/// Global operator new calls so far, on any thread.
std::uint64_t allocations() noexcept;

}  // namespace fieldlog_test

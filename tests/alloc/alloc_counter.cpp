// SPDX-License-Identifier: MIT
// The allocation tests' count: the shared replaced operator new (tests/support) reports every
// call here, so a test can assert that a stretch of code allocated nothing.
#include "alloc/alloc_counter.hpp"

#include <atomic>

#include "support/counting_new.hpp"

namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void fieldlog_support::on_allocation() noexcept { g_allocations.fetch_add(1, std::memory_order_relaxed); }

namespace fieldlog_test {
std::uint64_t allocations() noexcept { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace fieldlog_test

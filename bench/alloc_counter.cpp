// SPDX-License-Identifier: MIT
// fieldlog_bench's allocation count: the shared replaced operator new (tests/support) reports
// every call here. Calls from the shared libraries (spdlog, fmt, the C++ runtime) count too.
#include "alloc_counter.hpp"

#include <atomic>

#include "counting_new.hpp"

namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void fieldlog_support::on_allocation() noexcept { g_allocations.fetch_add(1, std::memory_order_relaxed); }

namespace fieldlog_bench {
std::uint64_t allocations() noexcept { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace fieldlog_bench

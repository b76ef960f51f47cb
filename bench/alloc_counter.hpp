// SPDX-License-Identifier: MIT
// Counts global operator new calls in fieldlog_bench, so every benchmark can report the
// counter allocs_per_op next to its time (what "no heap on the hot path" is measured by).
#pragma once

#include <cstdint>

namespace fieldlog_bench {

/// Global operator new calls so far, on any thread (relaxed: read between benchmark phases).
std::uint64_t allocations() noexcept;

}  // namespace fieldlog_bench

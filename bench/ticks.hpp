// SPDX-License-Identifier: MIT
// Timing single calls: a fenced TSC read, and its length in nanoseconds. Shared by the latency
// tool (latency.cpp) and the latency-during-swaps rows (swap_bench.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace fieldlog_bench {

/// A timestamp counter read: the TSC fenced on both sides, so that what lies between two
/// reads is the call; steady_clock nanoseconds where there is no TSC.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_lfence();
    const std::uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

/// Nanoseconds per tick, measured once against steady_clock over 200 ms.
inline double nanos_per_tick() {
    static const double value = [] {
        const auto wall_start = std::chrono::steady_clock::now();
        const std::uint64_t start = ticks();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const std::uint64_t end = ticks();
        const auto wall = std::chrono::steady_clock::now() - wall_start;
        return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count()) /
               static_cast<double>(end - start);
    }();
    return value;
}

}  // namespace fieldlog_bench

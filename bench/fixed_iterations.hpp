// SPDX-License-Identifier: MIT
// Fixed iteration counts for instruction counting (bench/instructions.py): with the environment
// variable FIELDLOG_BENCH_ITERATIONS=N every benchmark runs exactly N iterations, once, instead
// of as many as its minimum time takes (Google Benchmark 1.7 has no `--benchmark_min_time=Nx`).
// Two runs at two counts then differ by exactly the work of the extra iterations.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>

namespace fieldlog_bench {

/// For Benchmark::Apply at every registration: `->Apply(fixed_iterations)`.
inline void fixed_iterations(benchmark::internal::Benchmark* b) {
    if (const char* text = std::getenv("FIELDLOG_BENCH_ITERATIONS")) {
        const long long n = std::atoll(text);
        if (n > 0) b->Iterations(n);
    }
}

}  // namespace fieldlog_bench

// SPDX-License-Identifier: MIT
// fieldlog_quill_bench: quill's row of the request_7 comparison, `quill/request_7/async`, timed
// as bench/async_bench.cpp times fieldlog's `fieldlog/request_7t/async` (the loop ends when the
// backend has written everything), so that bench/instructions.py counts quill's caller and the
// wall-clock column gives its sustained rate. Built only with FIELDLOG_QUILL_INCLUDE.
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "alloc_counter.hpp"
#include "fixed_iterations.hpp"
#include "quill_workload.hpp"

namespace {

using namespace fieldlog_bench;

void quill_async(benchmark::State& state) {
    std::string pattern = (std::filesystem::temp_directory_path() / "fieldlog_quill_bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    quill::Logger* log = make_quill_json_logger((std::filesystem::path(pattern) / "quill.log").string());
    log_request_7(log);  // warm-up: the thread's queue, the backend's first batch
    drain(log);
    const std::uint64_t allocations_before = allocations();
    const auto last = static_cast<benchmark::IterationCount>(state.max_iterations);
    benchmark::IterationCount done = 0;
    for (auto _ : state) {
        log_request_7(log);
        if (++done == last) drain(log);
    }
    state.counters["allocs_per_op"] =
        static_cast<double>(allocations() - allocations_before) / static_cast<double>(state.iterations());
    quill::Frontend::remove_logger_blocking(log);
    std::error_code ignored;
    std::filesystem::remove_all(pattern, ignored);
}

const bool registered = [] {
    benchmark::RegisterBenchmark("quill/request_7/async", &quill_async)->Apply(fieldlog_bench::fixed_iterations);
    return true;
}();

}  // namespace

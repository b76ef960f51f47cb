// SPDX-License-Identifier: MIT
// The file sink rotating by size, its rotated files left plain or gzip-compressed by the
// retention worker: fields_10, synchronous, 4 MiB files, 20 kept. Records per second
// (items_per_second) say what compression costs the caller, which never compresses itself but
// shares the machine with the worker. Counters: allocs_per_op, and compressed (of the 20
// rotated files at the end of the run, those that are .gz: a file rotated out before the worker
// got to it is never compressed).
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "alloc_counter.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fixed_iterations.hpp"
#include "workloads.hpp"

namespace {

using namespace fieldlog_bench;

std::optional<std::filesystem::path> g_dir;
std::optional<fieldlog::Logger> g_logger;

template <fieldlog::FileCompression C>
void setup_rotating(const benchmark::State& /*state*/) {
    std::string pattern = (std::filesystem::temp_directory_path() / "fieldlog_rotation_bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    g_dir = pattern;
    fieldlog::FileSinkOptions file;
    file.path = (*g_dir / "app.log").string();
    file.max_size = 4 * 1024 * 1024;
    file.keep = 20;
    file.compress = C;
    fieldlog::SinkConfig sink;
    sink.target = file;
    fieldlog::Config config;
    config.sinks = {sink};
    fieldlog::configure(config);
    g_logger = fieldlog::get(kLoggerName);
}

void teardown_rotating(const benchmark::State& /*state*/) {
    g_logger.reset();
    fieldlog::Config no_sinks;
    no_sinks.sinks.clear();
    fieldlog::configure(no_sinks);  // the worker lets go of the files
    std::error_code ignored;
    std::filesystem::remove_all(*g_dir, ignored);
    g_dir.reset();
}

void run_rotating(benchmark::State& state) {
    log_fields_10(*g_logger);  // warm-up: thread buffers
    const std::uint64_t allocations_before = allocations();
    for (auto _ : state) log_fields_10(*g_logger);
    const double calls = static_cast<double>(state.iterations());
    state.counters["allocs_per_op"] = static_cast<double>(allocations() - allocations_before) / calls;
    int compressed = 0;
    for (int n = 1; n <= 20; ++n) compressed += std::filesystem::exists(*g_dir / ("app.log." + std::to_string(n) + ".gz"));
    state.counters["compressed"] = compressed;
    state.SetItemsProcessed(state.iterations());
}

const bool registered = [] {
    benchmark::RegisterBenchmark("fieldlog/fields_10/file_rotating", &run_rotating)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_rotating<fieldlog::FileCompression::none>)
        ->Teardown(&teardown_rotating);
    benchmark::RegisterBenchmark("fieldlog/fields_10/file_rotating_gzip", &run_rotating)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_rotating<fieldlog::FileCompression::gzip>)
        ->Teardown(&teardown_rotating);
    return true;
}();

}  // namespace

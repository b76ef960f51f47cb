// SPDX-License-Identifier: MIT
// Sustained throughput behind a writer thread: `<system>/<workload>/async` for fieldlog and
// spdlog, workloads fields_10 and request_7 (a template and a brace list; workloads.hpp),
// request_8 and request_scope (async_workloads.hpp), the last also from two threads at once,
// the writer then contending with both for the cores. The callers
// log into a file through each system's async queue with policy block (nothing dropped):
// fieldlog's 4 MiB byte ring and writer thread, spdlog's 8192-record queue and worker thread.
// The timed loop ends by waiting until the background thread has written everything, so the
// time per record is the sustained rate, queue-full waits included, not just the enqueue.
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "alloc_counter.hpp"
#include "async_workloads.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fixed_iterations.hpp"
#include "workloads.hpp"

namespace {

using namespace fieldlog_bench;

enum class Workload { fields_10, request_8, request_7, request_7t, request_scope };

/// A fresh directory for the run's files (the same file system for both systems).
std::filesystem::path make_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fieldlog_async_bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    return pattern;
}

struct Fixture {
    std::filesystem::path dir;
    std::optional<fieldlog::Logger> fieldlog_logger;
    std::shared_ptr<spdlog::details::thread_pool> pool;
    std::shared_ptr<CountingFileSink> spdlog_sink;
    std::shared_ptr<spdlog::async_logger> spdlog_logger;
};
Fixture g_fixture;
std::atomic<int> g_warmed_threads{0};  // calling threads past their warm-up
std::uint64_t g_allocations_before = 0;

void setup_fieldlog(const benchmark::State&) {
    g_warmed_threads.store(0);
    g_fixture.dir = make_dir();
    fieldlog::configure(fieldlog_file_config((g_fixture.dir / "fieldlog.log").string(), true));
    g_fixture.fieldlog_logger = fieldlog::get(kLoggerName);
}

void setup_spdlog(const benchmark::State&) {
    g_warmed_threads.store(0);
    g_fixture.dir = make_dir();
    g_fixture.pool = std::make_shared<spdlog::details::thread_pool>(kSpdlogQueueItems, 1);
    g_fixture.spdlog_sink = std::make_shared<CountingFileSink>((g_fixture.dir / "spdlog.log").string());
    g_fixture.spdlog_logger = make_spdlog_async_logger(g_fixture.spdlog_sink, g_fixture.pool);
}

void teardown(const benchmark::State&) {
    g_fixture.fieldlog_logger.reset();
    g_fixture.spdlog_logger.reset();
    g_fixture.spdlog_sink.reset();
    g_fixture.pool.reset();  // joins spdlog's worker
    const fieldlog::Config all_off{.level = fieldlog::Level::off};  // the default stdout sink, writing nothing
    fieldlog::configure(all_off);  // drains fieldlog's writer and closes the file
    std::error_code ignored;
    std::filesystem::remove_all(g_fixture.dir, ignored);
}

template <Workload W, typename Log>
void call(Log& log) {
    if constexpr (W == Workload::fields_10) {
        log_fields_10(log);
    } else if constexpr (W == Workload::request_8) {
        log_request_8(log);
    } else if constexpr (W == Workload::request_7) {
        log_request_7(log);
    } else if constexpr (W == Workload::request_scope) {
        log_request_scope(log);
    } else {
        log_request_7t(log);
    }
}

/// The timed loop of each calling thread; `drain` waits for the background thread after its
/// last call.
template <Workload W, typename Log, typename Drain>
void timed(benchmark::State& state, Log& log, Drain drain) {
    call<W>(log);  // warm-up: thread buffers, the writer's first batch
    drain();
    g_warmed_threads.fetch_add(1, std::memory_order_acq_rel);
    if (state.thread_index() == 0) {
        while (g_warmed_threads.load(std::memory_order_acquire) < state.threads()) std::this_thread::yield();
        g_allocations_before = allocations();
    }
    const auto last = static_cast<benchmark::IterationCount>(state.max_iterations);
    benchmark::IterationCount done = 0;
    for (auto _ : state) {
        call<W>(log);
        if (++done == last) drain();
    }
    // The loop ends with a barrier of all threads: thread 0 sees every timed allocation.
    if (state.thread_index() == 0) {
        const double calls = static_cast<double>(state.iterations()) * state.threads();
        state.counters["allocs_per_op"] = static_cast<double>(allocations() - g_allocations_before) / calls;
    }
}

template <Workload W>
void fieldlog_async(benchmark::State& state) {
    timed<W>(state, *g_fixture.fieldlog_logger, [] { fieldlog::flush(); });
}

template <Workload W>
void spdlog_async(benchmark::State& state) {
    timed<W>(state, *g_fixture.spdlog_logger, [] { drain(*g_fixture.spdlog_logger, *g_fixture.spdlog_sink); });
}

// Sustained throughput: read the wall-clock column (compare.py --time real); the caller's
// CPU column leaves out the writer thread.
const bool registered = [] {
    benchmark::RegisterBenchmark("fieldlog/fields_10/async", &fieldlog_async<Workload::fields_10>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_fieldlog)->Teardown(&teardown);
    benchmark::RegisterBenchmark("spdlog/fields_10/async", &spdlog_async<Workload::fields_10>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_spdlog)->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/request_8/async", &fieldlog_async<Workload::request_8>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_fieldlog)->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/request_7/async", &fieldlog_async<Workload::request_7>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_fieldlog)->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/request_7t/async", &fieldlog_async<Workload::request_7t>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_fieldlog)->Teardown(&teardown);
    benchmark::RegisterBenchmark("spdlog/request_8/async", &spdlog_async<Workload::request_8>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_spdlog)->Teardown(&teardown);
    for (const int threads : {1, 2}) {  // an explicit count, even 1, adds "/threads:N" to the name
        benchmark::RegisterBenchmark("fieldlog/request_scope/async", &fieldlog_async<Workload::request_scope>)
            ->Apply(fieldlog_bench::fixed_iterations)
            ->Setup(&setup_fieldlog)->Teardown(&teardown)->Threads(threads);
        benchmark::RegisterBenchmark("spdlog/request_scope/async", &spdlog_async<Workload::request_scope>)
            ->Apply(fieldlog_bench::fixed_iterations)
            ->Setup(&setup_spdlog)->Teardown(&teardown)->Threads(threads);
    }
    return true;
}();

}  // namespace

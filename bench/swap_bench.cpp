// SPDX-License-Identifier: MIT
// What the swappable dispatcher costs a logging thread. The record path reads the published
// Pipeline through a hazard pointer (src/record/thread_context.cpp) so that configure() can
// swap it at any time; these benchmarks put a number on that:
//   fieldlog/fields_10/null_during_swap   the public path while another thread calls configure()
//                                         back to back, alternating two sink sets
//   fieldlog/fields_10/null_latency/{steady,during_swap}
//                                         every call timed with the TSC: p50/p99/p99.9/max
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fixed_iterations.hpp"
#include "ticks.hpp"
#include "workloads.hpp"

namespace {

using namespace fieldlog_bench;

/// One NullSink at level info: the setup of fieldlog/fields_10/null.
fieldlog::Config null_config(std::shared_ptr<fieldlog::Sink> sink) {
    fieldlog::Config config;
    config.level = fieldlog::Level::info;
    config.sinks = {fieldlog::SinkConfig{.target = std::move(sink)}};
    return config;
}

/// Calls configure() back to back on its own thread, alternating two sink sets (each swap
/// builds a pipeline, publishes it, waits for readers of the old one and retires it).
class Swapper {
public:
    Swapper()
        : a_(null_config(std::make_shared<fieldlog::NullSink>())), b_(null_config(std::make_shared<fieldlog::NullSink>())) {
        fieldlog::configure(a_);
    }
    ~Swapper() { stop(); }
    Swapper(const Swapper&) = delete;
    Swapper& operator=(const Swapper&) = delete;

    /// Allocations one configure() of these two sets makes: the same every time, which is
    /// checked here, so that the logging thread's own count can be told apart later.
    std::uint64_t allocations_per_swap() {
        constexpr int swaps = 64;
        const std::uint64_t before = allocations();
        for (int i = 0; i < swaps; ++i) fieldlog::configure(i % 2 == 0 ? b_ : a_);
        const std::uint64_t total = allocations() - before;
        if (total % swaps != 0) {
            std::fprintf(stderr, "swap_bench: configure() made %llu allocations in %d swaps: not a constant\n",
                         static_cast<unsigned long long>(total), swaps);
            std::abort();
        }
        return total / swaps;
    }

    void start() {
        running_.store(true);
        thread_ = std::thread([this] {
            for (bool to_b = true; running_.load(std::memory_order_relaxed); to_b = !to_b) {
                fieldlog::configure(to_b ? b_ : a_);
                swaps_.fetch_add(1, std::memory_order_relaxed);
            }
        });
    }
    /// Swaps finished so far.
    [[nodiscard]] std::uint64_t swaps() const noexcept { return swaps_.load(std::memory_order_relaxed); }
    void stop() {
        running_.store(false);
        if (thread_.joinable()) thread_.join();
    }

private:
    fieldlog::Config a_;
    fieldlog::Config b_;
    std::atomic<bool> running_{false};
    std::atomic<std::uint64_t> swaps_{0};
    std::thread thread_;
};

void configure_all_off() {
    const fieldlog::Config all_off{.level = fieldlog::Level::off};  // the default stdout sink, writing nothing
    fieldlog::configure(all_off);
}

void during_swap(benchmark::State& state) {
    Swapper swapper;
    const std::uint64_t per_swap = swapper.allocations_per_swap();
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    log_fields_10(log);
    swapper.start();
    const std::uint64_t swaps_before = swapper.swaps();
    const std::uint64_t before = allocations();
    for (auto _ : state) log_fields_10(log);
    const std::uint64_t after = allocations();
    const std::uint64_t swaps = swapper.swaps() - swaps_before;
    swapper.stop();
    // Every allocation in the run minus those of the swaps (a constant each): the caller's.
    // A swap in flight at either end blurs this by at most 2 swaps' worth, hence the clamp.
    const std::uint64_t swapping = swaps * per_swap;
    const std::uint64_t total = after - before;
    state.counters["allocs_per_op"] =
        static_cast<double>(total > swapping ? total - swapping : 0) / static_cast<double>(state.iterations());
    state.counters["swaps"] = static_cast<double>(swaps);
    configure_all_off();
}

/// Times every call; reports p50/p99/p99.9/max in ns (each includes the two TSC reads).
template <bool Swapping>
void latency(benchmark::State& state) {
    std::optional<Swapper> swapper;
    if constexpr (Swapping) {
        swapper.emplace();
    } else {
        fieldlog::configure(null_config(std::make_shared<fieldlog::NullSink>()));
    }
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    for (int i = 0; i < 1000; ++i) log_fields_10(log);
    std::vector<std::uint64_t> samples;
    samples.reserve(static_cast<std::size_t>(state.max_iterations));
    if (swapper) swapper->start();
    for (auto _ : state) {
        const std::uint64_t start = ticks();
        log_fields_10(log);
        samples.push_back(ticks() - start);
    }
    if (swapper) {
        state.counters["swaps"] = static_cast<double>(swapper->swaps());
        swapper->stop();
    }
    std::sort(samples.begin(), samples.end());
    const double scale = nanos_per_tick();
    const auto at = [&](double q) {
        return static_cast<double>(samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1))]) * scale;
    };
    state.counters["p50_ns"] = at(0.50);
    state.counters["p99_ns"] = at(0.99);
    state.counters["p999_ns"] = at(0.999);
    state.counters["max_ns"] = at(1.0);
    configure_all_off();
}

const bool registered = [] {
    benchmark::RegisterBenchmark("fieldlog/fields_10/null_during_swap", &during_swap)
        ->Apply(fieldlog_bench::fixed_iterations);
    // A fixed call count, so that both rows sort the same number of samples.
    benchmark::RegisterBenchmark("fieldlog/fields_10/null_latency/steady", &latency<false>)
        ->Iterations(2'000'000)
        ->Apply(fieldlog_bench::fixed_iterations);
    benchmark::RegisterBenchmark("fieldlog/fields_10/null_latency/during_swap", &latency<true>)
        ->Iterations(2'000'000)
        ->Apply(fieldlog_bench::fixed_iterations);
    return true;
}();

}  // namespace

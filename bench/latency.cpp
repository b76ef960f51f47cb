// SPDX-License-Identifier: MIT
// fieldlog_latency: what one logging call costs the calling thread, call by call, as
// percentiles — the number a service's request thread feels. Method after quill's latency
// benchmark: each caller logs a burst of calls, timing every call with the TSC, then pauses so
// the background thread can catch up; bursts repeat thousands of times. Systems: fieldlog
// sync and async, spdlog async (its default queue, one worker, policy block), all writing the
// same request line (async_workloads.hpp) to a file; and fieldlog async writing request_7 as a
// message template (workloads.hpp), beside quill writing it with named arguments to its JSON
// file sink when built as fieldlog_quill_latency (FIELDLOG_QUILL_INCLUDE). On 1 and 2 caller
// threads.
//
//   fieldlog_latency [--bursts N] [--burst M] [--pause-us P] [--markdown]
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "async_workloads.hpp"
#include "fieldlog/fieldlog.hpp"
#include "ticks.hpp"
#if defined(FIELDLOG_BENCH_QUILL)
#include "quill_workload.hpp"
#endif

namespace {

using namespace fieldlog_bench;

struct Options {
    int bursts = 5'000;  // per thread, after 200 warm-up bursts
    int burst = 20;      // calls per burst
    int pause_us = 100;  // sleep between bursts
    bool markdown = false;
};

void pause_for(int micros) {
    const timespec t{0, static_cast<long>(micros) * 1000};
    ::nanosleep(&t, nullptr);
}

struct Result {
    std::string system;
    int threads = 0;
    std::uint64_t samples = 0;
    double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;  // ns
};

/// One system under test: how to make a call, and how to wait until everything is written.
struct System {
    std::string name;
    std::function<void()> setup;
    std::function<void()> call;
    std::function<void()> drain;
    std::function<void()> teardown;
};

Result measure(const System& system, int threads, const Options& options, double ns_per_tick) {
    system.setup();
    std::vector<std::vector<std::uint64_t>> samples(static_cast<std::size_t>(threads));
    std::atomic<int> ready{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
        callers.emplace_back([&, t] {
            std::vector<std::uint64_t>& mine = samples[static_cast<std::size_t>(t)];
            mine.reserve(static_cast<std::size_t>(options.bursts) * static_cast<std::size_t>(options.burst));
            for (int b = 0; b < 200; ++b) {  // warm-up: thread buffers, queues, page faults
                for (int i = 0; i < options.burst; ++i) system.call();
                pause_for(options.pause_us);
            }
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();
            for (int b = 0; b < options.bursts; ++b) {
                for (int i = 0; i < options.burst; ++i) {
                    const std::uint64_t start = ticks();
                    system.call();
                    mine.push_back(ticks() - start);
                }
                pause_for(options.pause_us);
            }
        });
    }
    for (std::thread& caller : callers) caller.join();
    system.drain();
    system.teardown();

    std::vector<std::uint64_t> all;
    for (const auto& mine : samples) all.insert(all.end(), mine.begin(), mine.end());
    std::sort(all.begin(), all.end());
    auto at = [&](double q) {
        const auto index = static_cast<std::size_t>(q * static_cast<double>(all.size() - 1));
        return static_cast<double>(all[index]) * ns_per_tick;
    };
    return Result{system.name, threads, all.size(), at(0.50), at(0.90), at(0.99), at(0.999), at(1.0)};
}

/// The cost of the two counter reads around an empty call, in ns (included in every sample).
double measurement_overhead(double ns_per_tick) {
    std::vector<std::uint64_t> empty(100'000);
    for (std::uint64_t& sample : empty) {
        const std::uint64_t start = ticks();
        sample = ticks() - start;
    }
    std::sort(empty.begin(), empty.end());
    return static_cast<double>(empty[empty.size() / 2]) * ns_per_tick;
}

std::filesystem::path make_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fieldlog_latency.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    return pattern;
}

std::vector<System> systems(const std::filesystem::path& dir) {
    auto fieldlog_logger = std::make_shared<std::optional<fieldlog::Logger>>();
    auto fieldlog_system = [=](bool async, bool request_7t) {
        return System{
            request_7t ? "fieldlog tpl" : async ? "fieldlog async" : "fieldlog sync",
            [=] {
                fieldlog::configure(fieldlog_file_config((dir / "fieldlog.log").string(), async));
                *fieldlog_logger = fieldlog::get(kLoggerName);
            },
            [=] {
                if (request_7t) {
                    log_request_7t(**fieldlog_logger);
                } else {
                    log_request_8(**fieldlog_logger);
                }
            },
            [] { fieldlog::flush(); },
            [=] {
                fieldlog_logger->reset();
                const fieldlog::Config all_off{.level = fieldlog::Level::off};  // the default stdout sink, writing nothing
                fieldlog::configure(all_off);
                std::filesystem::remove(dir / "fieldlog.log");
            }};
    };
    struct Spdlog {
        std::shared_ptr<spdlog::details::thread_pool> pool;
        std::shared_ptr<CountingFileSink> sink;
        std::shared_ptr<spdlog::async_logger> logger;
    };
    auto spd = std::make_shared<Spdlog>();
    const System spdlog_async{
        "spdlog async",
        [=] {
            spd->pool = std::make_shared<spdlog::details::thread_pool>(kSpdlogQueueItems, 1);
            spd->sink = std::make_shared<CountingFileSink>((dir / "spdlog.log").string());
            spd->logger = make_spdlog_async_logger(spd->sink, spd->pool);
        },
        [=] { log_request_8(*spd->logger); },
        [=] { drain(*spd->logger, *spd->sink); },
        [=] {
            spd->logger.reset();
            spd->sink.reset();
            spd->pool.reset();
            std::filesystem::remove(dir / "spdlog.log");
        }};
    std::vector<System> all{fieldlog_system(false, false), fieldlog_system(true, false), spdlog_async,
                            fieldlog_system(true, true)};
#if defined(FIELDLOG_BENCH_QUILL)
    auto quill_logger = std::make_shared<quill::Logger*>(nullptr);
    all.push_back(System{
        "quill",
        [=] { *quill_logger = make_quill_json_logger((dir / "quill.log").string()); },
        [=] { log_request_7(*quill_logger); },
        [=] { drain(*quill_logger); },
        [=] {
            quill::Frontend::remove_logger_blocking(*quill_logger);
            std::filesystem::remove(dir / "quill.log");
        }});
#endif
    return all;
}

void print(const std::vector<Result>& results, const Options& options, double overhead) {
    std::printf("caller-side ns per call: %d bursts x %d calls per thread, %d us pause; request line to a file\n",
                options.bursts, options.burst, options.pause_us);
    std::printf("(each sample includes ~%.0f ns of timer reads; tpl and quill: request_7, the others request_8)\n\n",
                overhead);
    if (options.markdown) {
        std::printf("| system | threads | p50 | p90 | p99 | p99.9 | max |\n|---|---:|---:|---:|---:|---:|---:|\n");
    } else {
        std::printf("%-16s %7s %8s %8s %8s %8s %10s\n", "system", "threads", "p50", "p90", "p99", "p99.9", "max");
    }
    for (const Result& r : results) {
        if (options.markdown) {
            std::printf("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f |\n", r.system.c_str(), r.threads, r.p50, r.p90,
                        r.p99, r.p999, r.max);
        } else {
            std::printf("%-16s %7d %8.0f %8.0f %8.0f %8.0f %10.0f\n", r.system.c_str(), r.threads, r.p50, r.p90, r.p99,
                        r.p999, r.max);
        }
    }
    std::printf("\n");
    const auto compare = [&](std::string_view mine, std::string_view other) {
        for (const Result& ours : results) {
            if (ours.system != mine) continue;
            for (const Result& theirs : results) {
                if (theirs.system != other || theirs.threads != ours.threads) continue;
                std::printf("%d thread%s: %s / %s = %.2fx at p50, %.2fx at p99, %.2fx at p99.9\n", ours.threads,
                            ours.threads == 1 ? "" : "s", theirs.system.c_str(), ours.system.c_str(),
                            theirs.p50 / ours.p50, theirs.p99 / ours.p99, theirs.p999 / ours.p999);
            }
        }
    };
    compare("fieldlog async", "spdlog async");
    compare("fieldlog tpl", "quill");
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
        if (arg == "--bursts") {
            options.bursts = value();
        } else if (arg == "--burst") {
            options.burst = value();
        } else if (arg == "--pause-us") {
            options.pause_us = value();
        } else if (arg == "--markdown") {
            options.markdown = true;
        } else {
            std::fprintf(stderr, "usage: %s [--bursts N] [--burst M] [--pause-us P] [--markdown]\n", argv[0]);
            return 2;
        }
    }
    if (options.bursts <= 0 || options.burst <= 0 || options.pause_us < 0) {
        std::fprintf(stderr, "fieldlog_latency: counts must be positive\n");
        return 2;
    }
    if (const std::string mismatch = request_8_mismatch(); !mismatch.empty()) {
        std::fprintf(stderr, "fieldlog_latency: the systems write different lines:\n%s\n", mismatch.c_str());
        return 1;
    }
    const double ns_per_tick = nanos_per_tick();
    const double overhead = measurement_overhead(ns_per_tick);
    const std::filesystem::path dir = make_dir();
    std::vector<Result> results;
    for (const int threads : {1, 2}) {
        for (const System& system : systems(dir)) results.push_back(measure(system, threads, options, ns_per_tick));
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    print(results, options, overhead);
    return 0;
}

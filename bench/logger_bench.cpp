// SPDX-License-Identifier: MIT
// The logger comparison: `<system>/<workload>/<sink>` for fieldlog and spdlog, side by side in
// one run. Each run's logger and sink are built by setup() before its threads start; every
// thread then makes one warm-up call (thread buffers, registration) and the allocation count
// covers exactly the timed calls of all threads (counter allocs_per_op). The `null_otel` rows
// are fieldlog's alone: the same workloads in the otel format, to a null sink.
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include <spdlog/sinks/basic_file_sink.h>

#include "alloc_counter.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fixed_iterations.hpp"
#include "workloads.hpp"

namespace {

using namespace fieldlog_bench;

enum class System { fieldlog, spdlog };
enum class Workload { static_msg, fields_10, ctx_10, disabled };
/// null_routed: the null sink with a routing rule (it excludes a logger the benchmark does not
/// use), to price the rules for a logger they do not name.
/// null_otel: the null sink in the otel format.
enum class Output { null, null_routed, null_otel, file };

/// One directory under the system temp dir for both systems' files (same file system),
/// removed at exit.
class BenchDir {
public:
    BenchDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "fieldlog_bench.XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
        }
        path_ = pattern;
    }
    ~BenchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    BenchDir(const BenchDir&) = delete;
    BenchDir& operator=(const BenchDir&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

const std::filesystem::path& bench_dir() {
    static const BenchDir dir;
    return dir.path();
}

/// What the running benchmark logs through. Benchmarks run one at a time, so one is enough.
struct Fixture {
    std::optional<fieldlog::Logger> fieldlog_logger;
    std::shared_ptr<spdlog::logger> spdlog_logger;
    std::filesystem::path file;
    std::atomic<int> warmed_threads{0};
    std::uint64_t allocations_before = 0;
};
Fixture g_fixture;

template <System S, Workload W, Output O>
void setup(const benchmark::State& /*state*/) {
    Fixture& f = g_fixture;
    f.warmed_threads.store(0);
    if constexpr (O == Output::file) {
        f.file = bench_dir() / (S == System::fieldlog ? "fieldlog.log" : "spdlog.log");
    }
    if constexpr (S == System::fieldlog) {
        fieldlog::SinkConfig sink;
        if constexpr (O == Output::null || O == Output::null_routed || O == Output::null_otel) {
            sink.target = std::shared_ptr<fieldlog::Sink>(std::make_shared<fieldlog::NullSink>());
            if (O == Output::null_routed) sink.exclude = {"audit"};
        } else {
            fieldlog::FileSinkOptions file;  // the defaults: 64 KiB buffer, flushed at error and every second
            file.path = f.file.string();
            sink.target = file;
        }
        fieldlog::Config config;
        config.level = W == Workload::disabled ? fieldlog::Level::warn : fieldlog::Level::info;
        if constexpr (O == Output::null_otel) {
            config.format = fieldlog::Format::otel;
            config.resource = {{"service.name", std::string("bench")}};
        }
        config.sinks = {sink};
        fieldlog::configure(config);
        const fieldlog::Logger log = fieldlog::get(kLoggerName);
        f.fieldlog_logger = W == Workload::ctx_10 ? fieldlog_ctx_10(log) : log;
    } else {
        spdlog::sink_ptr sink;
        if constexpr (O == Output::null) {
            sink = std::make_shared<RenderingNullSink>();
        } else {
            // The defaults: stdio's buffer, flushed when it fills (flush_on is off).
            sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(f.file.string(), true);
        }
        f.spdlog_logger = make_spdlog_logger(sink, W == Workload::ctx_10 ? spdlog_ctx_10_context() : std::string());
        if (W == Workload::disabled) f.spdlog_logger->set_level(spdlog::level::warn);
    }
}

void teardown(const benchmark::State& /*state*/) {
    Fixture& f = g_fixture;
    f.fieldlog_logger.reset();
    f.spdlog_logger.reset();
    const fieldlog::Config all_off{.level = fieldlog::Level::off};  // the default stdout sink, writing nothing
    fieldlog::configure(all_off);  // closes the file sink
    if (!f.file.empty()) {
        std::error_code ignored;
        std::filesystem::remove(f.file, ignored);
        f.file.clear();
    }
}

/// Inlined into the timed loop, as a logging call is inlined into its caller: an out-of-line
/// wrapper would add a call and return to every row, which dominates the disabled one.
template <System S, Workload W>
[[gnu::always_inline]] inline void call(const Fixture& f) {
    if constexpr (S == System::fieldlog) {
        const fieldlog::Logger& log = *f.fieldlog_logger;
        if constexpr (W == Workload::fields_10 || W == Workload::disabled) {
            log_fields_10(log);
        } else {
            log_static_msg(log);
        }
    } else {
        spdlog::logger& log = *f.spdlog_logger;
        if constexpr (W == Workload::fields_10 || W == Workload::disabled) {
            log_fields_10(log);
        } else {
            log_static_msg(log);
        }
    }
}

template <System S, Workload W>
void run(benchmark::State& state) {
    Fixture& f = g_fixture;
    call<S, W>(f);
    f.warmed_threads.fetch_add(1, std::memory_order_acq_rel);
    if (state.thread_index() == 0) {
        while (f.warmed_threads.load(std::memory_order_acquire) < state.threads()) std::this_thread::yield();
        f.allocations_before = allocations();
    }
    for (auto _ : state) call<S, W>(f);
    // The loop ends with a barrier of all threads: thread 0 sees every timed allocation.
    if (state.thread_index() == 0) {
        const double calls = static_cast<double>(state.iterations()) * state.threads();
        state.counters["allocs_per_op"] = static_cast<double>(allocations() - f.allocations_before) / calls;
    }
}

constexpr const char* name_of(System s) { return s == System::fieldlog ? "fieldlog" : "spdlog"; }
constexpr const char* name_of(Workload w) {
    switch (w) {
        case Workload::static_msg: return "static_msg";
        case Workload::fields_10: return "fields_10";
        case Workload::ctx_10: return "ctx_10";
        case Workload::disabled: return "disabled";
    }
    return "?";
}
constexpr const char* name_of(Output o) {
    switch (o) {
        case Output::null: return "null";
        case Output::null_routed: return "null_routed";
        case Output::null_otel: return "null_otel";
        case Output::file: return "file";
    }
    return "?";
}

template <System S, Workload W, Output O>
benchmark::internal::Benchmark* add() {
    const std::string name = std::string(name_of(S)) + "/" + name_of(W) + "/" + name_of(O);
    return benchmark::RegisterBenchmark(name.c_str(), &run<S, W>)
        ->Setup(&setup<S, W, O>)
        ->Teardown(&teardown)
        ->Apply(fieldlog_bench::fixed_iterations);
}

/// Registered in this order so that each fieldlog row is followed by its spdlog row.
template <Workload W, Output O>
void add_pair(int threads = 1) {
    for (benchmark::internal::Benchmark* b : {add<System::fieldlog, W, O>(), add<System::spdlog, W, O>()}) {
        if (threads > 1) b->Threads(threads);  // an explicit count, even 1, adds "/threads:N" to the name
    }
}

const bool registered = [] {
    add_pair<Workload::static_msg, Output::null>();
    add<System::fieldlog, Workload::static_msg, Output::null_routed>();  // spdlog has no routing
    add_pair<Workload::fields_10, Output::null>();
    add_pair<Workload::ctx_10, Output::null>();
    add_pair<Workload::disabled, Output::null>();
    add_pair<Workload::fields_10, Output::null>(2);
    add_pair<Workload::static_msg, Output::file>();
    add_pair<Workload::fields_10, Output::file>();
    add_pair<Workload::ctx_10, Output::file>();
    add<System::fieldlog, Workload::static_msg, Output::null_otel>();
    add<System::fieldlog, Workload::fields_10, Output::null_otel>();
    return true;
}();

}  // namespace

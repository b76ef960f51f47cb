// SPDX-License-Identifier: MIT
// Context benchmarks (issue 4), NullSink / spdlog's rendering null sink, one thread:
//   fieldlog/scope_10/null      static message with 10 request-context fields in an open Scope
//   fieldlog/scope_open_10/null the same Scope opened and closed around every record
//   fieldlog/capture_10/null    capture() the scope and re-open it around every record
//   fieldlog/request_8/null     a service's request line: method, path, status, latency,
//   spdlog/request_8/null       bytes, user id, request id, remote address (identical bytes,
//                               checked before timing; latency as integer nanoseconds in both)
//   fieldlog/request_7/null     a request line of 7 values its message shows (workloads.hpp): a
//   fieldlog/request_7t/null    brace list with a fmt message, and a message template (equal lines)
//   fieldlog/request_8_redact3/null  the same with three redaction rules (Config::redact) that
//                               name none of its keys: what the rules cost per field
//   fieldlog/large_string/null  one string field of 1 MiB and 4 MiB (bytes/s: linear time)
//   fieldlog/request_ctx_{inline,with,scope,capture}/null  one request: 3 context fields and 3
//                               records, the fields inline in each record, on a with() child,
//                               in a Scope, in a Scope captured and re-opened
//   fieldlog/with_3/null        the with() of 3 fields alone
//   fieldlog/backtrace_8/null   one request: a Scope keeping a backtrace, 8 debug records of 3
//                               fields below the logger's level, kept, no error: discarded
//   fieldlog/debug_8/null       the same request with the logger at debug: the 8 records written
//   fieldlog/debug_8_scope_level/null  the logger at info, the request's Scope at debug: the 8
//                               records written
//   fieldlog/disabled_scope_level/null  a trace call of 3 fields in a Scope at debug (logger at
//                               info): refused at the level check
//   fieldlog/disabled_level_scope_elsewhere/null  a debug call of 3 fields, logger at info,
//                               while another thread has a Scope at debug open: what that costs
//                               the threads without one
// Each reports allocs_per_op (global operator new, timed calls only). Compare scope_10 with
// logger_bench.cpp's fieldlog/static_msg/null in the same run.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <spdlog/sinks/ostream_sink.h>

#include "alloc_counter.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fixed_iterations.hpp"
#include "workloads.hpp"

namespace {

using namespace fieldlog_bench;
using namespace std::chrono_literals;

/// The request line's values: the same for both systems.
struct Request {
    std::string_view method = "GET";
    std::string_view path = "/api/v1/orders/1234567";
    int status = 200;
    std::chrono::nanoseconds latency = 1250us;
    std::int64_t bytes = 5123;
    std::int64_t user_id = 42;
    std::string_view request_id = "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11";
    std::string_view remote_addr = "10.1.2.3:54321";
};
const Request kRequest{};
constexpr std::string_view kRequestMessage = "request done";

void log_request_8(const fieldlog::Logger& log, const Request& r = kRequest) {
    FIELDLOG_INFO(log, kRequestMessage,
                  {{"method", r.method}, {"path", r.path}, {"status", r.status}, {"latency", r.latency},
                   {"bytes", r.bytes}, {"user_id", r.user_id}, {"request_id", r.request_id},
                   {"remote_addr", r.remote_addr}});
}
void log_request_8(spdlog::logger& log, const Request& r = kRequest) {
    log.info(R"("{}","method":"{}","path":"{}","status":{},"latency":{},"bytes":{},"user_id":{},"request_id":"{}",)"
             R"("remote_addr":"{}")",
             kRequestMessage, r.method, r.path, r.status, r.latency.count(), r.bytes, r.user_id, r.request_id,
             r.remote_addr);
}

/// Ten fields a request scope typically carries (about 330 bytes of JSON).
#define CONTEXT_BENCH_SCOPE_10                                                                                     \
    {                                                                                                              \
        {"request_id", "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11"}, {"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"},   \
            {"span_id", "00f067aa0ba902b7"}, {"user_id", 42}, {"tenant", "acme"}, {"session", "s-8c1d2e"},          \
            {"method", "GET"}, {"path", "/api/v1/orders/1234567"}, {"remote_addr", "10.1.2.3:54321"},             \
            {"attempt", 1},                                                                                        \
    }

fieldlog::Config null_config(fieldlog::DurationFormat duration = fieldlog::DurationFormat::string) {
    fieldlog::Config config;
    config.level = fieldlog::Level::info;
    config.duration = duration;
    config.sinks = {fieldlog::SinkConfig{.target = std::shared_ptr<fieldlog::Sink>(std::make_shared<fieldlog::NullSink>())}};
    return config;
}

/// Runs `call` under the benchmark after one warm-up call, counting allocations of timed calls.
template <typename Call>
void timed(benchmark::State& state, Call&& call) {
    call();
    const std::uint64_t before = allocations();
    for (auto _ : state) call();
    state.counters["allocs_per_op"] =
        static_cast<double>(allocations() - before) / static_cast<double>(state.iterations());
}

void fieldlog_scope_10(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    const fieldlog::Scope scope CONTEXT_BENCH_SCOPE_10;
    timed(state, [&] { log_static_msg(log); });
}

void fieldlog_scope_open_10(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] {
        const fieldlog::Scope scope CONTEXT_BENCH_SCOPE_10;
        log_static_msg(log);
    });
}

void fieldlog_capture_10(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    fieldlog::ScopeContext context;
    {
        const fieldlog::Scope scope CONTEXT_BENCH_SCOPE_10;
        context = fieldlog::Scope::capture();
    }
    timed(state, [&] {
        const fieldlog::Scope reopened{context};
        log_static_msg(log);
    });
}

/// Both systems' request_8 line with `ts` cut out, or an error text.
std::string request_8_mismatch() {
    auto memory = std::make_shared<fieldlog::MemorySink>();
    fieldlog::Config config = null_config(fieldlog::DurationFormat::nanos);
    config.sinks = {fieldlog::SinkConfig{.target = std::shared_ptr<fieldlog::Sink>(memory)}};
    fieldlog::configure(config);
    log_request_8(fieldlog::get(kLoggerName));
    std::ostringstream text;
    auto spdlog_logger = make_spdlog_logger(std::make_shared<spdlog::sinks::ostream_sink_st>(text));
    log_request_8(*spdlog_logger);
    const auto without_ts = [](std::string line) {
        const auto start = line.find("\"ts\":\"");
        const auto end = line.find('"', start + 6);
        return line.erase(start, end - start);
    };
    if (memory->lines().size() != 1) return "fieldlog wrote no line";
    std::string spdlog_line = text.str();
    if (!spdlog_line.empty()) spdlog_line.pop_back();  // '\n'
    const std::string a = without_ts(memory->lines()[0]);
    const std::string b = without_ts(spdlog_line);
    return a == b ? std::string() : "lines differ:\n" + a + "\n" + b;
}

void fieldlog_request_8(benchmark::State& state) {
    if (const std::string error = request_8_mismatch(); !error.empty()) {
        state.SkipWithError(error.c_str());
        return;
    }
    fieldlog::configure(null_config(fieldlog::DurationFormat::nanos));
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] { log_request_8(log); });
}

/// request_7 as a template (`templated`) or as a brace list with a fmt message.
template <bool templated>
void fieldlog_request_7(benchmark::State& state) {
    if (const std::string error = request_7_mismatch(); !error.empty()) {
        state.SkipWithError(error.c_str());
        return;
    }
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    if constexpr (templated) {
        timed(state, [&] { log_request_7t(log); });
    } else {
        timed(state, [&] { log_request_7(log); });
    }
}

void fieldlog_request_8_redact3(benchmark::State& state) {
    fieldlog::Config config = null_config(fieldlog::DurationFormat::nanos);
    config.redact = {"password", "*token*", "*secret*"};
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] { log_request_8(log); });
}

void spdlog_request_8(benchmark::State& state) {
    if (const std::string error = request_8_mismatch(); !error.empty()) {
        state.SkipWithError(error.c_str());
        return;
    }
    auto sink = std::make_shared<RenderingNullSink>();
    auto log = make_spdlog_logger(sink);
    timed(state, [&] { log_request_8(*log); });
}

void fieldlog_large_string(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    const std::string big(static_cast<std::size_t>(state.range(0)), 'x');
    // A record this large leaves the inline buffer for the heap and gives it back: the
    // allocations here are that one growth per record, by design.
    timed(state, [&] { log.info("large", {{"value", big}}); });
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

// One request (each op): 3 context fields — request_id, method, path — and 3 records to the
// null sink, the context attached four ways; with_3 is the with() alone.
#define CONTEXT_BENCH_REQUEST_3 \
    {{"request_id", "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11"}, {"method", "GET"}, {"path", "/api/v1/orders/1234567"}}

void log_3_records(const fieldlog::Logger& log) {
    log.info("request started");
    log.info("cache miss");
    log.info("request done");
}

void fieldlog_request_ctx_inline(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] {
        log.info("request started", CONTEXT_BENCH_REQUEST_3);
        log.info("cache miss", CONTEXT_BENCH_REQUEST_3);
        log.info("request done", CONTEXT_BENCH_REQUEST_3);
    });
}

void fieldlog_request_ctx_with(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] { log_3_records(log.with(CONTEXT_BENCH_REQUEST_3)); });
}

void fieldlog_request_ctx_scope(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] {
        const fieldlog::Scope request CONTEXT_BENCH_REQUEST_3;
        log_3_records(log);
    });
}

void fieldlog_request_ctx_capture(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] {
        const fieldlog::Scope request CONTEXT_BENCH_REQUEST_3;
        const fieldlog::ScopeContext context = fieldlog::Scope::capture();
        const fieldlog::Scope reopened{context};
        log_3_records(log);
    });
}

void fieldlog_with_3(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] { benchmark::DoNotOptimize(log.with(CONTEXT_BENCH_REQUEST_3)); });
}

// One request (each op) of 8 debug records in a scope: kept by its backtrace and discarded
// (the logger at info, no error), or written (the logger at debug, no backtrace).
void log_8_debug_records(const fieldlog::Logger& log) {
    for (int step = 0; step < 8; ++step)
        log.debug("cache lookup", {{"key", "user:42"}, {"hit", step % 2 == 0}, {"elapsed", 1250us}});
}

void fieldlog_backtrace_8(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] {
        const fieldlog::Scope request{{{"request_id", "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11"}},
                                      fieldlog::Backtrace{.records = 16}};
        log_8_debug_records(log);
    });
}

void fieldlog_debug_8(benchmark::State& state) {
    fieldlog::Config config = null_config();
    config.level = fieldlog::Level::debug;
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] {
        const fieldlog::Scope request{{"request_id", "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11"}};
        log_8_debug_records(log);
    });
}

void fieldlog_debug_8_scope_level(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    timed(state, [&] {
        const fieldlog::Scope request{{{"request_id", "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11"}}, fieldlog::Level::debug};
        log_8_debug_records(log);
    });
}

void fieldlog_disabled_scope_level(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    const fieldlog::Scope request{{{"request_id", "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11"}}, fieldlog::Level::debug};
    timed(state, [&] { FIELDLOG_TRACE(log, "cache lookup", {{"key", "user:42"}, {"hit", true}, {"elapsed", 1250us}}); });
}

void fieldlog_disabled_level_scope_elsewhere(benchmark::State& state) {
    fieldlog::configure(null_config());
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    std::promise<void> opened;
    std::promise<void> done;
    std::thread other([&opened, finished = done.get_future()] {
        const fieldlog::Scope debug{fieldlog::Level::debug};
        opened.set_value();
        finished.wait();
    });
    opened.get_future().wait();
    timed(state, [&] { FIELDLOG_DEBUG(log, "cache lookup", {{"key", "user:42"}, {"hit", true}, {"elapsed", 1250us}}); });
    done.set_value();
    other.join();
}

void teardown(const benchmark::State& /*state*/) {
    const fieldlog::Config all_off{.level = fieldlog::Level::off};  // the default stdout sink, writing nothing
    fieldlog::configure(all_off);
}

const bool registered = [] {
    benchmark::RegisterBenchmark("fieldlog/scope_10/null", &fieldlog_scope_10)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/scope_open_10/null", &fieldlog_scope_open_10)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/capture_10/null", &fieldlog_capture_10)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/request_8/null", &fieldlog_request_8)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/request_7/null", &fieldlog_request_7<false>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/request_7t/null", &fieldlog_request_7<true>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    benchmark::RegisterBenchmark("fieldlog/request_8_redact3/null", &fieldlog_request_8_redact3)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    benchmark::RegisterBenchmark("spdlog/request_8/null", &spdlog_request_8)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Teardown(&teardown);
    for (const auto& [name, run] : {std::pair{"fieldlog/request_ctx_inline/null", &fieldlog_request_ctx_inline},
                                    std::pair{"fieldlog/request_ctx_with/null", &fieldlog_request_ctx_with},
                                    std::pair{"fieldlog/request_ctx_scope/null", &fieldlog_request_ctx_scope},
                                    std::pair{"fieldlog/request_ctx_capture/null", &fieldlog_request_ctx_capture},
                                    std::pair{"fieldlog/with_3/null", &fieldlog_with_3},
                                    std::pair{"fieldlog/backtrace_8/null", &fieldlog_backtrace_8},
                                    std::pair{"fieldlog/debug_8/null", &fieldlog_debug_8},
                                    std::pair{"fieldlog/debug_8_scope_level/null", &fieldlog_debug_8_scope_level},
                                    std::pair{"fieldlog/disabled_scope_level/null", &fieldlog_disabled_scope_level},
                                    std::pair{"fieldlog/disabled_level_scope_elsewhere/null",
                                              &fieldlog_disabled_level_scope_elsewhere}}) {
        benchmark::RegisterBenchmark(name, run)->Apply(fieldlog_bench::fixed_iterations)->Teardown(&teardown);
    }
    benchmark::RegisterBenchmark("fieldlog/large_string/null", &fieldlog_large_string)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Arg(1 << 20)
        ->Arg(4 << 20)
        ->Teardown(&teardown);
    return true;
}();

}  // namespace

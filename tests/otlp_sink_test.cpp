// SPDX-License-Identifier: MIT
// The OTLP sink's options: the OpenTelemetry exporter's environment variables (the logs-specific
// one over the generic one), the refusals, and what the sink tells the dispatcher; its thread
// against logging threads, flushes and its close, for ThreadSanitizer. Its encoding and delivery
// are checked against the OpenTelemetry SDK's decoder in tests/otlp/.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fieldlog/sinks/otlp_sink.hpp"
#include "support/loopback_receiver.hpp"
#include "support/test_support.hpp"

using fieldlog_test::ScopedEnv;

namespace {

/// Every variable apply_env() reads, unset while alive (the test's environment must not leak in).
class CleanOtlpEnv {
public:
    CleanOtlpEnv() {
        for (const char* prefix : {"OTEL_EXPORTER_OTLP_LOGS_", "OTEL_EXPORTER_OTLP_"}) {
            for (const char* name : {"ENDPOINT", "HEADERS", "PROTOCOL", "TIMEOUT", "COMPRESSION"}) {
                names_.push_back(std::string(prefix) + name);
            }
        }
        names_.emplace_back("OTEL_SERVICE_NAME");
        names_.emplace_back("OTEL_RESOURCE_ATTRIBUTES");
        for (const std::string& name : names_) unset_.push_back(std::make_unique<ScopedEnv>(name.c_str(), std::nullopt));
    }

private:
    std::vector<std::string> names_;  ///< complete before unset_ points into it
    std::vector<std::unique_ptr<ScopedEnv>> unset_;
};

}  // namespace

TEST_CASE("OTLP options: without the variables, apply_env changes nothing", "[otlp]") {
    const CleanOtlpEnv clean;
    fieldlog::OtlpSinkOptions options;
    options.apply_env();
    CHECK(options == fieldlog::OtlpSinkOptions{});
    CHECK(options.endpoint == "http://localhost:4318/v1/logs");
}

TEST_CASE("OTLP options: the generic endpoint gets /v1/logs, the logs one is used as it is", "[otlp]") {
    const CleanOtlpEnv clean;
    {
        const ScopedEnv generic("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/");
        CHECK(fieldlog::OtlpSinkOptions{}.apply_env().endpoint == "http://collector:4318/v1/logs");
        const ScopedEnv logs("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "https://intake.example/custom");
        CHECK(fieldlog::OtlpSinkOptions{}.apply_env().endpoint == "https://intake.example/custom");
    }
}

TEST_CASE("OTLP options: headers, protocol, timeout and compression, the logs variable first", "[otlp]") {
    const CleanOtlpEnv clean;
    const ScopedEnv generic_headers("OTEL_EXPORTER_OTLP_HEADERS", "x-generic=1");
    const ScopedEnv headers("OTEL_EXPORTER_OTLP_LOGS_HEADERS", " api-key = a%20b%2Cc , ,x-team=logs");
    const ScopedEnv generic_protocol("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
    const ScopedEnv protocol("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/json");
    const ScopedEnv timeout("OTEL_EXPORTER_OTLP_TIMEOUT", "2500");
    const ScopedEnv compression("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "gzip");
    fieldlog::OtlpSinkOptions options;
    options.apply_env();
    using Header = std::pair<std::string, std::string>;
    CHECK(options.headers == std::vector<Header>{{"api-key", "a b,c"}, {"x-team", "logs"}});
    CHECK(options.encoding == fieldlog::OtlpEncoding::json);
    CHECK(options.timeout == std::chrono::milliseconds(2500));
    CHECK(options.gzip);
}

TEST_CASE("OTLP options: a malformed variable is refused with its name", "[otlp]") {
    const CleanOtlpEnv clean;
    const std::pair<const char*, const char*> malformed[] = {
        {"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc"},  {"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"},
        {"OTEL_EXPORTER_OTLP_HEADERS", "novalue"},     {"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "k=%zz"},
        {"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"},
    };
    for (const auto& [name, value] : malformed) {
        const ScopedEnv set(name, value);
        CHECK_THROWS_WITH(fieldlog::OtlpSinkOptions{}.apply_env(), Catch::Contains(name));
    }
}

TEST_CASE("OTLP sink: a typed sink of kind otlp, and an endpoint that is not http(s) is refused", "[otlp]") {
    std::shared_ptr<fieldlog::OtlpSink> sink;
    try {
        sink = fieldlog::make_otlp_sink({.endpoint = "http://127.0.0.1:9/v1/logs", .shutdown_timeout = std::chrono::milliseconds(0)});
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("rebuild with -DFIELDLOG_WITH_OTLP=ON"));
        WARN("test skipped: " << e.what());
        return;
    }
    const fieldlog::SinkInfo info = sink->info();
    CHECK(info.typed);
    CHECK(info.kind == "otlp");
    CHECK(info.target == "http://127.0.0.1:9/v1/logs");
    CHECK_THROWS_WITH(fieldlog::make_otlp_sink({.endpoint = "ftp://collector/v1/logs"}), Catch::Contains("not an http"));
}

TEST_CASE("OTLP sink: a forked child drops its records and closes without the parent's thread", "[otlp]") {
    std::shared_ptr<fieldlog::OtlpSink> sink;
    try {
        sink = fieldlog::make_otlp_sink({.endpoint = "http://127.0.0.1:9/v1/logs",
                                         .flush_timeout = std::chrono::milliseconds(0),
                                         .shutdown_timeout = std::chrono::milliseconds(0)});
    } catch (const std::invalid_argument& e) {
        WARN("test skipped: " << e.what());
        return;
    }
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const fieldlog::Message message("in the child");
        sink->write_typed(fieldlog::TypedRecordView{.message = message});
        sink->close();  // must not wait for a thread that is not in this process
        ::_exit(sink->stats().overflowed == 1 && sink->counters().dropped == 1 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    sink->close();
}

TEST_CASE("OTLP options: the resource comes from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES when none is given", "[otlp]") {
    const CleanOtlpEnv clean;
    const ScopedEnv listed("OTEL_RESOURCE_ATTRIBUTES", "service.name=listed,deployment.environment=prod%20eu,bad");
    const ScopedEnv service("OTEL_SERVICE_NAME", "checkout");
    const fieldlog::OtlpSinkOptions options = fieldlog::OtlpSinkOptions{}.apply_env();
    REQUIRE(options.resource.size() == 2);
    CHECK(options.resource[0] == fieldlog::ResourceAttribute{"service.name", std::string("checkout")});
    CHECK(options.resource[1] == fieldlog::ResourceAttribute{"deployment.environment", std::string("prod eu")});
    fieldlog::OtlpSinkOptions given;
    given.resource = {{"service.name", std::string("in code")}};
    CHECK(given.apply_env().resource.size() == 1);
}

TEST_CASE("OTLP sink type: a TOML file names it, and a typo in a key is refused with a hint", "[otlp]") {
    const CleanOtlpEnv clean;
    const fieldlog::Config config = fieldlog::Config::parse(R"([[sinks]]
type = "otlp"
endpoint = "http://collector:4318/v1/logs"
encoding = "json"
headers = ["api-key=secret", "x-team=core"]
compression = "none"
batch_size = 64
linger = "50ms"
overflow = "block"
)", "app.toml");
    REQUIRE(config.sinks.size() == 1);
    const auto& otlp = fieldlog_test::options_of<fieldlog::OtlpSinkOptions>(config.sinks[0].target);
    CHECK(otlp.endpoint == "http://collector:4318/v1/logs");
    CHECK(otlp.encoding == fieldlog::OtlpEncoding::json);
    CHECK(otlp.headers == std::vector<std::pair<std::string, std::string>>{{"api-key", "secret"}, {"x-team", "core"}});
    CHECK(otlp.batch_size == 64);
    CHECK(otlp.linger == std::chrono::milliseconds(50));
    CHECK(otlp.overflow == fieldlog::OtlpOverflow::block);
    try {
        static_cast<void>(fieldlog::Config::parse("[[sinks]]\ntype = \"otlp\"\nendpont = \"http://x:4318\"\n", "app.toml"));
        FAIL("a typo'd key was accepted");
    } catch (const fieldlog::ConfigError& error) {
        const std::string what = error.what();
        CHECK(what.find("app.toml:3") != std::string::npos);
        CHECK(what.find("endpont") != std::string::npos);
        CHECK(what.find("did you mean \"endpoint\"") != std::string::npos);
    }
}

TEST_CASE("OTLP sink: logging threads, flushes, stats and the close meet the sink's thread, every record delivered or counted",
          "[otlp][concurrent]") {
    fieldlog_test::LoopbackReceiver receiver(fieldlog_test::LoopbackReceiver::Kind::http_answering, "race-record");
    std::shared_ptr<fieldlog::OtlpSink> sink;
    try {
        sink = fieldlog::make_otlp_sink({.endpoint = "http://" + receiver.address() + "/v1/logs",
                                         .batch_size = 32,
                                         .linger = std::chrono::milliseconds(1),
                                         .shutdown_timeout = std::chrono::seconds(20)});
    } catch (const std::invalid_argument& e) {
        FIELDLOG_TEST_SKIP(e.what());
    }
    fieldlog::configure({.sinks = {{.target = sink}}});
    constexpr int kThreads = 4;
    constexpr int kEach = 500;
    std::atomic<int> logging{kThreads};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            const fieldlog::Logger log = fieldlog::get("race");
            for (int n = 0; n < kEach; ++n) log.info("race-record", {{"t", t}, {"n", n}});
            --logging;
        });
    }
    std::uint64_t requests_seen = 0;
    while (logging > 0) {  // flushes and reads meanwhile
        fieldlog::flush();
        requests_seen = std::max(requests_seen, sink->stats().requests);
    }
    for (std::thread& thread : threads) thread.join();
    // The end begins while a thread still logs: its records are delivered or counted dropped.
    std::thread late([&] {
        const fieldlog::Logger log = fieldlog::get("race");
        for (int n = 0; n < kEach; ++n) log.info("race-record", {{"t", kThreads}, {"n", n}});
    });
    fieldlog::shutdown();
    late.join();
    sink->close();
    const fieldlog::SinkCounters counters = sink->counters();
    CHECK(counters.records >= kThreads * kEach);
    CHECK(counters.dropped == 0);  // the receiver answers: everything goes out within the bound
    CHECK(receiver.records() == counters.records);
    CHECK(sink->stats().records == counters.records);
    CHECK(requests_seen <= sink->stats().requests);
}

// SPDX-License-Identifier: MIT
// The OTLP sink's options: the OpenTelemetry exporter's environment variables (the logs-specific
// one over the generic one), the refusals, and what the sink tells the dispatcher. Its encoding
// and delivery are checked against the OpenTelemetry SDK's decoder in tests/otlp/.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "fieldlog/sinks/otlp_sink.hpp"
#include "support/test_support.hpp"

using fieldlog_test::ScopedEnv;

namespace {

/// Every variable apply_env() reads, unset while alive (the test's environment must not leak in).
struct CleanOtlpEnv {
    ScopedEnv logs_endpoint{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", std::nullopt};
    ScopedEnv endpoint{"OTEL_EXPORTER_OTLP_ENDPOINT", std::nullopt};
    ScopedEnv logs_headers{"OTEL_EXPORTER_OTLP_LOGS_HEADERS", std::nullopt};
    ScopedEnv headers{"OTEL_EXPORTER_OTLP_HEADERS", std::nullopt};
    ScopedEnv logs_protocol{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", std::nullopt};
    ScopedEnv protocol{"OTEL_EXPORTER_OTLP_PROTOCOL", std::nullopt};
    ScopedEnv logs_timeout{"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", std::nullopt};
    ScopedEnv timeout{"OTEL_EXPORTER_OTLP_TIMEOUT", std::nullopt};
    ScopedEnv logs_compression{"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", std::nullopt};
    ScopedEnv compression{"OTEL_EXPORTER_OTLP_COMPRESSION", std::nullopt};
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
    SECTION("protocol") {
        const ScopedEnv v("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc");
        CHECK_THROWS_WITH(fieldlog::OtlpSinkOptions{}.apply_env(), Catch::Contains("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"));
    }
    SECTION("timeout") {
        const ScopedEnv v("OTEL_EXPORTER_OTLP_TIMEOUT", "10s");
        CHECK_THROWS_WITH(fieldlog::OtlpSinkOptions{}.apply_env(), Catch::Contains("OTEL_EXPORTER_OTLP_TIMEOUT"));
    }
    SECTION("headers") {
        const ScopedEnv v("OTEL_EXPORTER_OTLP_HEADERS", "novalue");
        CHECK_THROWS_WITH(fieldlog::OtlpSinkOptions{}.apply_env(), Catch::Contains("OTEL_EXPORTER_OTLP_HEADERS"));
    }
    SECTION("a bad escape") {
        const ScopedEnv v("OTEL_EXPORTER_OTLP_HEADERS", "k=%zz");
        CHECK_THROWS_WITH(fieldlog::OtlpSinkOptions{}.apply_env(), Catch::Contains("two hex digits"));
    }
    SECTION("compression") {
        const ScopedEnv v("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd");
        CHECK_THROWS_WITH(fieldlog::OtlpSinkOptions{}.apply_env(), Catch::Contains("OTEL_EXPORTER_OTLP_COMPRESSION"));
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

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
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
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

/// Whether this build has OTLP; without it, says the test is skipped (tests/catch_main.cpp).
bool built_with_otlp() {
    try {
        static_cast<void>(fieldlog::make_otlp_sink({.shutdown_timeout = std::chrono::milliseconds(0)}));
        return true;
    } catch (const std::invalid_argument& e) {
        if (std::string_view(e.what()).find("this build of fieldlog") == std::string_view::npos) throw;
        WARN("test skipped: " << e.what());
        return false;
    }
}

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
    if (!built_with_otlp()) return;  // no endpoint is one there
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
    CHECK(options.compression == fieldlog::OtlpCompression::gzip);
}

TEST_CASE("OTLP options: OTEL_EXPORTER_OTLP_LOGS_HEADERS replaces OTEL_EXPORTER_OTLP_HEADERS and the options' headers whole",
          "[otlp]") {
    const CleanOtlpEnv clean;
    const ScopedEnv generic("OTEL_EXPORTER_OTLP_HEADERS", "api-key=generic,x-both=generic");
    fieldlog::OtlpSinkOptions options{.headers = {{"x-code", "1"}}};
    using Headers = std::vector<std::pair<std::string, std::string>>;
    CHECK(fieldlog::OtlpSinkOptions(options).apply_env().headers == Headers{{"api-key", "generic"}, {"x-both", "generic"}});
    const ScopedEnv logs("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "x-both=logs");
    CHECK(options.apply_env().headers == Headers{{"x-both", "logs"}});
}

TEST_CASE("OTLP options: OTEL_EXPORTER_OTLP_TIMEOUT=0 is no limit, as the specification says", "[otlp]") {
    const CleanOtlpEnv clean;
    const ScopedEnv timeout("OTEL_EXPORTER_OTLP_TIMEOUT", "0");
    CHECK(fieldlog::OtlpSinkOptions{}.apply_env().timeout == std::chrono::milliseconds(std::numeric_limits<std::int32_t>::max()));
}

TEST_CASE("OTLP options: a malformed variable is ignored, as the specification says, and named on stderr", "[otlp]") {
    const CleanOtlpEnv clean;
    struct Case {
        const char* name;
        const char* value;
        const char* says;
    };
    const Case malformed[] = {
        {"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc", "not a protocol fieldlog speaks: http/protobuf or http/json"},
        {"OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "not a number of milliseconds (0: no limit)"},
        {"OTEL_EXPORTER_OTLP_TIMEOUT", "-1", "not a number of milliseconds (0: no limit)"},
        {"OTEL_EXPORTER_OTLP_HEADERS", "novalue", "has \"novalue\", not name=value"},
        {"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "k=%zz", "has a '%' not followed by two hex digits"},
        {"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "not a compression fieldlog has: gzip or none"},
        {"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://127.0.0.1:99999/v1/logs", "is no endpoint: the port"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "is no endpoint: not a URL"},
    };
    for (const Case& c : malformed) {
        DYNAMIC_SECTION(c.name << "=" << c.value) {
            const fieldlog_test::TempDir dir;
            const std::string errors = dir.file("stderr");
            const ScopedEnv set(c.name, c.value);
            fieldlog::OtlpSinkOptions options;
            {
                const fieldlog_test::StderrTo to(errors);
                REQUIRE_NOTHROW(options.apply_env());
            }
            CHECK(options == fieldlog::OtlpSinkOptions{});
            const std::string said = fieldlog_test::read_file(errors);
            CHECK_THAT(said, Catch::StartsWith(std::string("fieldlog: ") + c.name + ": \"" + c.value + "\" ") &&
                                 Catch::Contains(c.says) && Catch::EndsWith("; the variable is ignored\n"));
        }
    }
    SECTION("the generic variable stands in for an ignored logs-specific one") {
        const ScopedEnv generic("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
        const ScopedEnv logs("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc");
        const fieldlog_test::StderrTo quiet;
        CHECK(fieldlog::OtlpSinkOptions{}.apply_env().encoding == fieldlog::OtlpEncoding::json);
    }
}

TEST_CASE("OTLP endpoint: one that is not an http(s) URL with a host, a port from 1 to 65535 and a path is refused when "
          "the sink is made",
          "[otlp]") {
    const CleanOtlpEnv clean;
    const std::pair<const char*, const char*> refused[] = {
        {"http://", "no host"},
        {"https://", "no host"},
        {"http:///v1/logs", "no host"},
        {"http://127.0.0.1:99999/v1/logs", "the port (after the host and one ':') is not a number from 1 to 65535"},
        {"http://127.0.0.1:0/v1/logs", "the port (after the host and one ':') is not a number from 1 to 65535"},
        {"http://127.0.0.1:4318:5/v1/logs", "the port (after the host and one ':') is not a number from 1 to 65535"},
        {"http://exa mple.com/v1/logs", "the host is not a host name or an IP address"},
        {"http://[::1/v1/logs", "a bad IPv6 address"},
        {"http://collector/v1 logs", "a character a URL cannot hold after the host (write a space as %20)"},
        {"ftp://collector/v1/logs", "the scheme is not http or https"},
        {"collector:4318/v1/logs", "not a URL (write http://host:port/v1/logs, or https://)"},
    };
    for (const auto& [endpoint, problem] : refused) {
        DYNAMIC_SECTION(endpoint) {
            CHECK_THROWS_WITH(fieldlog::make_otlp_sink({.endpoint = endpoint}),
                              Catch::StartsWith(std::string("endpoint \"") + endpoint + "\": " + problem));
            // configure() refuses it as a ConfigError naming the sink, and keeps what runs.
            try {
                fieldlog::configure({.sinks = {{.target = fieldlog::OtlpSinkOptions{.endpoint = endpoint}}}});
                FAIL("configure() took " << endpoint);
            } catch (const fieldlog::ConfigError& error) {
                CHECK_THAT(error.what(), Catch::StartsWith(std::string("sinks[0]: endpoint \"") + endpoint + "\": " + problem));
            }
        }
    }
    SECTION("what is an endpoint is taken") {
        for (const char* endpoint : {"http://127.0.0.1:9/v1/logs", "https://[::1]:4318/v1/logs", "HTTP://collector:65535",
                                     "http://user:pw@collector:1/v1/logs?tenant=a"}) {
            CHECK_NOTHROW(fieldlog::make_otlp_sink({.endpoint = endpoint, .shutdown_timeout = std::chrono::milliseconds(0)}));
        }
    }
}

TEST_CASE("OTLP sink type: a bad endpoint is refused when the file is read, at the endpoint's own line", "[otlp]") {
    const CleanOtlpEnv clean;
    for (const char* endpoint : {"http://", "https://", "http://127.0.0.1:99999/v1/logs", "http://exa mple.com/v1/logs",
                                 "http://127.0.0.1:4318:5/v1/logs"}) {
        DYNAMIC_SECTION(endpoint) {
            const std::string text = std::string("level = \"info\"\n\n[[sinks]]\ntype = \"otlp\"\nendpoint = \"") + endpoint + "\"\n";
            CHECK_THROWS_WITH(fieldlog::Config::parse(text, "bad.toml"),
                              Catch::StartsWith(std::string("bad.toml:5: sinks[0].endpoint: \"") + endpoint + "\": "));
        }
    }
}

TEST_CASE("OTLP sink: a typed sink of kind otlp", "[otlp]") {
    std::shared_ptr<fieldlog::OtlpSink> sink;
    try {
        sink = fieldlog::make_otlp_sink({.endpoint = "http://127.0.0.1:9/v1/logs", .shutdown_timeout = std::chrono::milliseconds(0)});
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("rebuild with -DFIELDLOG_WITH_OTLP=ON"));
        WARN("test skipped: " << e.what());
        return;
    }
    const fieldlog::SinkInfo info = sink->info();
    CHECK_FALSE(info.lines);
    CHECK(info.kind == "otlp");
    CHECK(info.target == "http://127.0.0.1:9/v1/logs");
}

TEST_CASE("OTLP sink: a forked child drops its records and closes without the parent's thread", "[otlp]") {
    FIELDLOG_SKIP_THREADED_FORK_UNDER_EMULATION();
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
        sink->write(fieldlog::RecordView{.message = &message});
        sink->close();  // must not wait for a thread that is not in this process
        ::_exit(sink->stats().overflowed == 1 && sink->counters().dropped == 1 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    sink->close();
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

TEST_CASE("OTLP sink type: every option of OtlpSinkOptions has its key, by the same name", "[otlp]") {
    const CleanOtlpEnv clean;
    const fieldlog::Config config = fieldlog::Config::parse(R"([[sinks]]
type = "otlp"
endpoint = "https://collector.example:4318/v1/logs"
encoding = "json"
headers = ["api-key=secret"]
compression = "gzip"
timeout = "3s"
batch_size = 64
linger = "50ms"
queue_bytes = "1MiB"
overflow = "block"
flush_timeout = "1s"
shutdown_timeout = "2s"
retry_initial = "250ms"
retry_max = "10s"
ca_file = "/etc/ssl/ca.pem"
cert_file = "/etc/app/client.pem"
key_file = "/etc/app/client.key"
)", "app.toml");
    REQUIRE(config.sinks.size() == 1);
    using std::chrono::milliseconds;
    // Each member set to what it is not by default; the resource is the configuration's ([resource]).
    const fieldlog::OtlpSinkOptions expected{.endpoint = "https://collector.example:4318/v1/logs",
                                             .encoding = fieldlog::OtlpEncoding::json,
                                             .headers = {{"api-key", "secret"}},
                                             .compression = fieldlog::OtlpCompression::gzip,
                                             .timeout = milliseconds(3000),
                                             .batch_size = 64,
                                             .linger = milliseconds(50),
                                             .queue_bytes = 1024 * 1024,
                                             .overflow = fieldlog::OtlpOverflow::block,
                                             .flush_timeout = milliseconds(1000),
                                             .shutdown_timeout = milliseconds(2000),
                                             .retry_initial = milliseconds(250),
                                             .retry_max = milliseconds(10'000),
                                             .ca_file = "/etc/ssl/ca.pem",
                                             .cert_file = "/etc/app/client.pem",
                                             .key_file = "/etc/app/client.key"};
    CHECK(fieldlog_test::options_of<fieldlog::OtlpSinkOptions>(config.sinks[0].target) == expected);
    CHECK_THROWS_WITH(fieldlog::Config::parse("[[sinks]]\ntype = \"otlp\"\nretry_initial = \"2s\"\nretry_max = \"1s\"\n", "app.toml"),
                      "app.toml:4: sinks[0].retry_max: retry_max must be at least retry_initial (the backoff doubles from one "
                      "up to the other)");
}

TEST_CASE("OTLP sink type: a header that is not name=value is refused at its line, saying what to write", "[otlp]") {
    const CleanOtlpEnv clean;
    CHECK_THROWS_WITH(fieldlog::Config::parse("[[sinks]]\ntype = \"otlp\"\nheaders = [\n  \"api-key=secret\",\n  \"novalue\",\n]\n",
                                              "app.toml"),
                      "app.toml:5: sinks[0].headers[1]: \"novalue\" is not \"name=value\": write the header's name, '=' and "
                      "its value, like \"novalue=secret\"");
    CHECK_THROWS_WITH(fieldlog::Config::parse("[[sinks]]\ntype = \"otlp\"\nheaders = [\"=secret\"]\n", "app.toml"),
                      "app.toml:3: sinks[0].headers[0]: \"=secret\" is not \"name=value\": write the header's name, '=' and "
                      "its value, like \"api-key=secret\"");
}

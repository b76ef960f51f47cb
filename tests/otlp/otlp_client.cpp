// SPDX-License-Identifier: MIT
// The logging side of the OTLP tests (decode_test.js, delivery_test.js, tls_test.js): logs a scenario's
// records through an OtlpSink to the receiver the script runs, closes the sink, and prints the
// sink's counters and how long the logging calls and the whole run (close() included) took
// as one JSON line (`configured`: where it logged). The scripts know what each scenario logs.
//
//   otlp_client kinds <endpoint> [encoding=json] [gzip=1]
//   otlp_client configured <endpoint> [encoding=json]
//   otlp_client load <endpoint> count=N [batch_size=…] [queue_bytes=…] [overflow=block]
//               [timeout_ms=…] [shutdown_ms=…] [pause_every=… pause_ms=…] [encoding=json]
//               [ca_file=… cert_file=… key_file=…]
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/thread_id.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fieldlog/sinks/otlp_sink.hpp"
#include "fieldlog/trace_context.hpp"

namespace demo {
struct Grid {
    int rows;
    int cols;
};
/// A user type written through the stream calls, with an array inside.
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Grid& g) {
    enc.begin_object();
    for (const auto& [name, size] : {std::pair{"rows", g.rows}, std::pair{"cols", g.cols}}) {
        enc.key(name);
        enc.value(size);
    }
    enc.key("cells");
    enc.begin_array();
    for (int i = 0; i < g.rows; ++i) enc.value(i);
    enc.value("end");
    enc.end_array();
    enc.end_object();
}
}  // namespace demo

namespace {

using namespace std::chrono_literals;

constexpr fieldlog::Timestamp kTime{1796027891, 123456789};
fieldlog::Timestamp fixed_clock() noexcept { return kTime; }

std::map<std::string, std::string> parse_args(int argc, char** argv) {
    std::map<std::string, std::string> args;
    for (int i = 3; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const std::size_t equals = arg.find('=');
        if (equals != std::string_view::npos) args[std::string(arg.substr(0, equals))] = std::string(arg.substr(equals + 1));
    }
    return args;
}

std::size_t number(const std::map<std::string, std::string>& args, const std::string& key, std::size_t fallback) {
    const auto found = args.find(key);
    return found == args.end() ? fallback : std::stoull(found->second);
}

/// Every value kind, in a trace context's scope.
void log_traced(const fieldlog::Logger& http) {
    const auto trace = fieldlog::TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    const fieldlog::Scope traced{trace};
    const fieldlog::Scope request(fieldlog::Fields{{"request_id", "r-1"}});
    const std::error_code refused(ECONNREFUSED, std::system_category());
    const std::byte raw[] = {std::byte{0}, std::byte{1}, std::byte{0xfe}, std::byte{0xff}};
    const std::vector<int> list{1, 2, 3};
    const std::map<std::string, int> map{{"a", 1}, {"b", 2}};
    const demo::Grid grid{2, 3};
    const std::optional<int> none;
    const std::optional<int> five = 5;
    http.info("request done",
              {{"status", 200},
               {"neg", -5},
               {"min", std::numeric_limits<std::int64_t>::min()},
               {"big", std::numeric_limits<std::uint64_t>::max()},
               {"small_unsigned", std::uint64_t{7}},
               {"pi", 3.25},
               {"nan", std::nan("")},
               {"inf", std::numeric_limits<double>::infinity()},
               {"ninf", -std::numeric_limits<double>::infinity()},
               {"ok", true},
               {"no", false},
               {"nothing", nullptr},
               {"path", "/a b"},
               {"latency", 1250us},
               {"when", kTime},
               {"ec", refused},
               {"raw", fieldlog::Bytes{raw}},
               {"user", fieldlog::Object{{"name", "ann"}, {"id", 7}, {"tags", fieldlog::Array{1, "two", 2.5}}}},
               {"list", list},
               {"map", map},
               {"grid", grid},
               {"none", none},
               {"five", five},
               {"dup", "first"},
               {"dup", "second"},
               {"service", "override"},
               {"password", "hunter2"},
               {"nested", fieldlog::Object{{"api_token", "secret"}, {"keep", 1}}}});
}

void log_kinds() {
    const fieldlog::Logger http = fieldlog::get("http").with({{"service", "checkout"}, {"version", 3}});
    log_traced(http);

    const fieldlog::Logger db = fieldlog::get("db");
    db.trace("at trace");
    db.debug("at debug");
    db.info("at info");
    db.warn("at warn");
    db.error("at error");
    db.fatal("at fatal");
    db.info(fieldlog::format("formatted {} of {}", 1, 2));

    const std::string large(std::size_t{1} << 20, 'x');
    db.info("large", {{"large", large}});
    db.info("bad \xff\xfe end", {{"k\xc3", "a\xed\xa0\x80" "b"}, {"ok", "caf\xc3\xa9"}});
}

void log_load(const std::map<std::string, std::string>& args) {
    const fieldlog::Logger load = fieldlog::get("load");
    const std::size_t count = number(args, "count", 1000);
    const std::size_t pause_every = number(args, "pause_every", 0);
    const auto pause = std::chrono::milliseconds(number(args, "pause_ms", 0));
    const std::string padding(number(args, "padding", 0), 'p');
    for (std::size_t i = 0; i < count; ++i) {
        load.info("load", {{"seq", static_cast<std::int64_t>(i)}, {"padding", padding}});
        if (pause_every != 0 && (i + 1) % pause_every == 0) std::this_thread::sleep_for(pause);
    }
}

/// The `configured` scenario: an OTLP sink that a configuration file names, beside its
/// [resource] (OTEL_SERVICE_NAME over it), with the call facts on and durations in nanoseconds.
/// Prints where it logged its record, which the script expects in the record's code attributes.
int run_configured(const std::string& endpoint, const std::string& encoding) {
    fieldlog::Config config = fieldlog::Config::parse(R"(level = "info"
caller = "function"
tid = true
duration = "nanos"

[resource]
"service.name" = "from-file"
"service.version" = "1.4.2"
replicas = 3

[[sinks]]
type = "otlp"
endpoint = ")" + endpoint + R"("
encoding = ")" + encoding + R"("
linger = "20ms"
retry_initial = "20ms"
retry_max = "200ms"
)", "configured.toml");
    config.apply_env();
    config.clock = &fixed_clock;
    fieldlog::configure(config);
    const int line = __LINE__ + 1;
    fieldlog::get("svc").info("configured", {{"took", 1500us}});
    fieldlog::shutdown();
    std::printf("{\"file\":\"%s\",\"line\":%d,\"function\":\"%s\",\"tid\":%d}\n", __FILE__, line, __func__,
                fieldlog::detail::kernel_thread_id());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: otlp_client kinds|load|configured <endpoint> [key=value…]\n");
        return 2;
    }
    const std::string_view scenario = argv[1];
    const auto args = parse_args(argc, argv);
    if (scenario == "configured") {
        return run_configured(argv[2], args.count("encoding") != 0 ? args.at("encoding") : "protobuf");
    }
    fieldlog::OtlpSinkOptions options;
    options.endpoint = argv[2];
    if (args.count("encoding") != 0 && args.at("encoding") == "json") options.encoding = fieldlog::OtlpEncoding::json;
    if (number(args, "gzip", 0) != 0) options.compression = fieldlog::OtlpCompression::gzip;
    options.batch_size = number(args, "batch_size", options.batch_size);
    options.queue_bytes = number(args, "queue_bytes", options.queue_bytes);
    options.linger = std::chrono::milliseconds(number(args, "linger_ms", 20));
    options.timeout = std::chrono::milliseconds(number(args, "timeout_ms", 10'000));
    options.shutdown_timeout = std::chrono::milliseconds(number(args, "shutdown_ms", 60'000));
    options.flush_timeout = options.shutdown_timeout;
    options.retry_initial = std::chrono::milliseconds(number(args, "retry_ms", 20));
    options.retry_max = std::chrono::milliseconds(number(args, "retry_max_ms", 200));
    if (args.count("overflow") != 0 && args.at("overflow") == "block") options.overflow = fieldlog::OtlpOverflow::block;
    for (auto [key, option] : {std::pair{"ca_file", &options.ca_file}, std::pair{"cert_file", &options.cert_file},
                               std::pair{"key_file", &options.key_file}}) {
        if (args.count(key) != 0) *option = args.at(key);
    }
    options.resource = {{"service.name", std::string("checkout")},
                        {"service.version", std::string("1.4.2")},
                        {"replicas", std::int64_t{3}},
                        {"ratio", 0.5},
                        {"canary", true}};
    const std::shared_ptr<fieldlog::OtlpSink> sink = fieldlog::make_otlp_sink(options);

    fieldlog::Config config;
    config.level = fieldlog::Level::trace;
    config.clock = &fixed_clock;
    config.redact = {"password", "*token*"};
    config.sinks.push_back(fieldlog::SinkConfig{.target = sink});
    fieldlog::configure(config);

    const auto start = std::chrono::steady_clock::now();
    if (scenario == "kinds") {
        log_kinds();
    } else {
        log_load(args);
    }
    const auto logged = std::chrono::steady_clock::now();
    fieldlog::shutdown();
    sink->close();
    const auto closed = std::chrono::steady_clock::now();
    const auto seconds = [](std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); };
    const fieldlog::SinkCounters counters = sink->counters();
    const fieldlog::OtlpSinkStats stats = sink->stats();
    std::printf(
        "{\"records\":%llu,\"dropped\":%llu,\"errors\":%llu,\"requests\":%llu,\"delivered\":%llu,\"retries\":%llu,"
        "\"rejected\":%llu,\"refused\":%llu,\"overflowed\":%llu,\"expired\":%llu,\"log_seconds\":%.6f,"
        "\"total_seconds\":%.6f}\n",
        static_cast<unsigned long long>(counters.records), static_cast<unsigned long long>(counters.dropped),
        static_cast<unsigned long long>(counters.errors), static_cast<unsigned long long>(stats.requests),
        static_cast<unsigned long long>(stats.records), static_cast<unsigned long long>(stats.retries),
        static_cast<unsigned long long>(stats.rejected), static_cast<unsigned long long>(stats.refused),
        static_cast<unsigned long long>(stats.overflowed), static_cast<unsigned long long>(stats.expired),
        seconds(logged - start), seconds(closed - start));
    return 0;
}

// SPDX-License-Identifier: MIT
// The OTLP sink as a configuration names it (`type = "otlp"`): its keys, read into
// OtlpSinkOptions (the endpoint parsed here, so a bad one names its line), then the exporter's
// environment variables over them (they win, as the OpenTelemetry specification says), and what
// configure() makes of those options.
#include <fmt/format.h>

#include "base/quoting.hpp"
#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sinks/otlp_sink.hpp"
#include "otlp_http.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const OtlpSinkOptions& options) { return make_otlp_sink(options); }

SinkDestination sink_destination(const OtlpSinkOptions& options) { return {.kind = "otlp", .target = options.endpoint}; }

namespace detail {
namespace {

/// `headers = ["name=value", …]`; an entry without a name and '=' is refused at its line.
std::vector<std::pair<std::string, std::string>> headers_setting(const SinkSettings& settings) {
    std::vector<std::pair<std::string, std::string>> headers;
    const std::vector<std::string> entries = settings.texts("headers", "\"name=value\" strings like \"api-key=secret\"");
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const std::string& entry = entries[i];
        const std::size_t equals = entry.find('=');
        if (equals == std::string::npos || equals == 0) {
            const std::string example = equals == std::string::npos && !entry.empty() ? entry + "=secret" : "api-key=secret";
            settings.fail("headers", i,
                          fmt::format("{} is not \"name=value\": write the header's name, '=' and its value, like {}",
                                      in_quotes(entry), in_quotes(example)));
        }
        headers.emplace_back(entry.substr(0, equals), entry.substr(equals + 1));
    }
    return headers;
}

}  // namespace

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType otlp_sink_type() {
    return {"otlp",
            {"endpoint", "encoding", "headers", "compression", "timeout", "batch_size", "linger", "queue_bytes",
             "overflow", "flush_timeout", "shutdown_timeout", "retry_initial", "retry_max", "ca_file", "cert_file",
             "key_file"},
            [](SinkSettings& settings) -> SinkTarget {
                OtlpSinkOptions otlp;
                if (settings.has("endpoint")) {
                    otlp.endpoint = settings.text("endpoint", "a URL like \"http://localhost:4318/v1/logs\"");
                    if (const std::string problem = endpoint_problem(otlp.endpoint); !problem.empty()) {
                        settings.fail("endpoint", fmt::format("{}: {}", in_quotes(otlp.endpoint), problem));
                    }
                }
                otlp.encoding = settings.choice<OtlpEncoding>(
                    "encoding", otlp.encoding, {{"protobuf", OtlpEncoding::protobuf}, {"json", OtlpEncoding::json}});
                otlp.headers = headers_setting(settings);
                otlp.compression = settings.choice<OtlpCompression>(
                    "compression", otlp.compression, {{"none", OtlpCompression::none}, {"gzip", OtlpCompression::gzip}});
                otlp.timeout = settings.duration("timeout", otlp.timeout, "10s");
                otlp.batch_size = static_cast<std::size_t>(
                    settings.integer("batch_size", static_cast<std::int64_t>(otlp.batch_size), 1, 1'000'000, "a record count"));
                otlp.linger = settings.duration("linger", otlp.linger, "200ms");
                otlp.queue_bytes = settings.size("queue_bytes", otlp.queue_bytes, "4MiB", 64 * 1024);
                otlp.overflow = settings.choice<OtlpOverflow>(
                    "overflow", otlp.overflow, {{"drop", OtlpOverflow::drop}, {"block", OtlpOverflow::block}});
                otlp.flush_timeout = settings.duration("flush_timeout", otlp.flush_timeout, "5s");
                otlp.shutdown_timeout = settings.duration("shutdown_timeout", otlp.shutdown_timeout, "5s");
                otlp.retry_initial = settings.duration("retry_initial", otlp.retry_initial, "100ms");
                otlp.retry_max = settings.duration("retry_max", otlp.retry_max, "5s");
                if (otlp.retry_max < otlp.retry_initial) {
                    settings.fail(settings.has("retry_max") ? "retry_max" : "retry_initial",
                                  "retry_max must be at least retry_initial (the backoff doubles from one up to the other)");
                }
                otlp.ca_file = settings.text("ca_file", "a path", otlp.ca_file);
                otlp.cert_file = settings.text("cert_file", "a path", otlp.cert_file);
                otlp.key_file = settings.text("key_file", "a path", otlp.key_file);
                otlp.apply_env();
                return otlp;
            }};
}

}  // namespace detail
}  // namespace fieldlog

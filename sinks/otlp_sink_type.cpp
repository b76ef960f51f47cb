// SPDX-License-Identifier: MIT
// The OTLP sink as a configuration names it (`type = "otlp"`): its keys, read into
// OtlpSinkOptions, then the exporter's environment variables over them (they win, as the
// OpenTelemetry specification says), and what configure() makes of those options.
#include <stdexcept>

#include "base/builtin_sink_types.hpp"
#include "fieldlog/sinks/otlp_sink.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const OtlpSinkOptions& options) { return make_otlp_sink(options); }

SinkDestination sink_destination(const OtlpSinkOptions& options) { return {.kind = "otlp", .target = options.endpoint}; }

namespace detail {

SinkType otlp_sink_type() {
    return {"otlp",
            {"endpoint", "encoding", "headers", "compression", "timeout", "batch_size", "linger", "queue_bytes",
             "overflow", "flush_timeout", "shutdown_timeout", "ca_file", "cert_file", "key_file"},
            [](SinkSettings& settings) -> SinkTarget {
                OtlpSinkOptions otlp;
                otlp.endpoint = settings.text("endpoint", "a URL like \"http://localhost:4318/v1/logs\"", otlp.endpoint);
                otlp.encoding = settings.choice<OtlpEncoding>(
                    "encoding", otlp.encoding, {{"protobuf", OtlpEncoding::protobuf}, {"json", OtlpEncoding::json}});
                for (const std::string& header : settings.texts("headers", "a list of \"name=value\" strings")) {
                    const std::size_t equals = header.find('=');
                    if (equals == std::string::npos || equals == 0) settings.expected("headers", "\"name=value\" strings");
                    otlp.headers.emplace_back(header.substr(0, equals), header.substr(equals + 1));
                }
                otlp.gzip = settings.choice<bool>("compression", otlp.gzip, {{"gzip", true}, {"none", false}});
                otlp.timeout = settings.duration("timeout", otlp.timeout, "10s");
                otlp.batch_size = static_cast<std::size_t>(
                    settings.integer("batch_size", static_cast<std::int64_t>(otlp.batch_size), 1, 1'000'000, "a record count"));
                otlp.linger = settings.duration("linger", otlp.linger, "200ms");
                otlp.queue_bytes = settings.size("queue_bytes", otlp.queue_bytes, "4MiB", 64 * 1024);
                otlp.overflow = settings.choice<OtlpOverflow>(
                    "overflow", otlp.overflow, {{"drop", OtlpOverflow::drop}, {"block", OtlpOverflow::block}});
                otlp.flush_timeout = settings.duration("flush_timeout", otlp.flush_timeout, "5s");
                otlp.shutdown_timeout = settings.duration("shutdown_timeout", otlp.shutdown_timeout, "5s");
                otlp.ca_file = settings.text("ca_file", "a path", otlp.ca_file);
                otlp.cert_file = settings.text("cert_file", "a path", otlp.cert_file);
                otlp.key_file = settings.text("key_file", "a path", otlp.key_file);
                try {
                    otlp.apply_env();
                } catch (const std::invalid_argument& error) {
                    settings.fail("endpoint", error.what());
                }
                return otlp;
            }};
}

}  // namespace detail
}  // namespace fieldlog

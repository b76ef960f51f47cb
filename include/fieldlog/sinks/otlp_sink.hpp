// SPDX-License-Identifier: MIT
// The OTLP sink: records to an OpenTelemetry Collector (or any OTLP/HTTP endpoint) as
// ExportLogsServiceRequest messages, protobuf or JSON. It reads the record's parts
// (SinkInfo::lines false), so numbers stay numbers. The caller encodes its record into the
// sink's own buffer and queues the bytes; the sink's thread batches them, sends them with
// libcurl (HTTP/1.1, keep-alive) and retries what the receiver could not take yet. docs/otlp.md
// states the mapping.
//
// What is lost, and when (each counted in the sink's `dropped`):
// - a record that does not fit in `queue_bytes` with overflow = drop (block waits for room);
// - a batch the receiver refuses for good (400 and the other codes that are not retried);
// - records the receiver reports as rejected (a partial success);
// - what is still queued when close() passes `shutdown_timeout`;
// - a record logged in a forked child (the sink's thread stays in the parent).
// Nothing else: a receiver that is down, restarting, overloaded (429, 502, 503, 504) or
// silent has the batch sent again, after a backoff, until it takes it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fieldlog/encoder.hpp"
#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_target.hpp"

namespace fieldlog {

/// How a request's body is written.
enum class OtlpEncoding : std::uint8_t {
    protobuf,  ///< `application/x-protobuf` (the default, as the specification's)
    json,      ///< `application/json`: OTLP/JSON (hex ids, 64-bit integers as strings)
};

/// What the sink does with a record that does not fit in its queue.
enum class OtlpOverflow : std::uint8_t {
    drop,   ///< drop it and count it: the caller never waits for the network (default)
    block,  ///< wait for room (the logging call waits while the receiver is away)
};

/// How a request's body is compressed (`Content-Encoding`).
enum class OtlpCompression : std::uint8_t {
    none,  ///< as it is (the default)
    gzip,  ///< gzip; refused by a build without zlib
};

/// The sink's own options. Durations and times in fields, and the call facts, follow the sink's
/// configuration as in every format (Config::duration, SinkConfig::timestamp, caller and tid).
struct FIELDLOG_API OtlpSinkOptions {
    /// The full URL requests are POSTed to; `https://` uses libcurl's TLS.
    std::string endpoint = "http://localhost:4318/v1/logs";
    OtlpEncoding encoding = OtlpEncoding::protobuf;
    /// Extra request headers (an API key): {"x-api-key", "…"}.
    std::vector<std::pair<std::string, std::string>> headers{};
    OtlpCompression compression = OtlpCompression::none;
    /// The most one request may take, connecting included; a request past it is sent again.
    std::chrono::milliseconds timeout{10'000};
    /// Records per request, at most (0 is taken as 1).
    std::size_t batch_size = 512;
    /// How long the first queued record waits for others before its batch leaves.
    std::chrono::milliseconds linger{200};
    /// The bound on the encoded bytes queued and in flight (each record also takes 8 bytes
    /// and its logger's name); the sink reserves twice this when it is made.
    std::size_t queue_bytes = 4 * 1024 * 1024;
    OtlpOverflow overflow = OtlpOverflow::drop;
    /// How long flush() waits for the queue to be delivered, and close() (or the destructor)
    /// before it drops what is left.
    std::chrono::milliseconds flush_timeout{5'000};
    std::chrono::milliseconds shutdown_timeout{5'000};
    /// The first and the longest wait between tries of one batch; each wait doubles, with
    /// jitter, unless the receiver's Retry-After says how long.
    std::chrono::milliseconds retry_initial{100};
    std::chrono::milliseconds retry_max{5'000};
    /// TLS: the CA bundle to check the server with (empty: libcurl's default store), and a
    /// client certificate with its key, PEM.
    std::string ca_file{};
    std::string cert_file{};
    std::string key_file{};
    /// The resource of every request. Empty (the default): configure() gives the sink the
    /// configuration's, Config::resource (TOML `[resource]`, OTEL_RESOURCE_ATTRIBUTES and
    /// OTEL_SERVICE_NAME over it), the otel format's too: one resource per process. Without
    /// service.name the sink writes `unknown_service:<program>`, as the OpenTelemetry SDKs do.
    std::vector<ResourceAttribute> resource{};

    /// Applies the OpenTelemetry exporter's environment variables over these options, the
    /// logs-specific one instead of the generic one: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (used as
    /// it is) or OTEL_EXPORTER_OTLP_ENDPOINT (+ "/v1/logs"), …_HEADERS (`k=v,k2=v2`,
    /// percent-decoded), …_PROTOCOL (`http/protobuf`, `http/json`), …_TIMEOUT (milliseconds; 0:
    /// no limit), …_COMPRESSION (`gzip`, `none`). A malformed one is ignored, as the
    /// specification says, and named on stderr.
    OtlpSinkOptions& apply_env();

    friend bool operator==(const OtlpSinkOptions&, const OtlpSinkOptions&) = default;
};

/// What the sink did, besides the dispatcher's counters.
struct FIELDLOG_API OtlpSinkStats {
    std::uint64_t requests = 0;   ///< requests the receiver answered with success
    std::uint64_t records = 0;    ///< records in those requests (rejected ones included)
    std::uint64_t retries = 0;    ///< tries after a retryable failure
    std::uint64_t rejected = 0;   ///< records a partial success rejected (counted as dropped too)
    std::uint64_t refused = 0;    ///< records in batches refused for good (400, …; dropped too)
    std::uint64_t overflowed = 0; ///< records a full queue (or a closed sink) dropped (dropped too)
    std::uint64_t expired = 0;    ///< records left when close() ran out of time (dropped too)
};

namespace detail {
class OtlpRecordEncoder;
class OtlpDelivery;
}  // namespace detail

class FIELDLOG_API OtlpSink final : public Sink {
public:
    /// Made by make_otlp_sink(), which gives it the encoder.
    OtlpSink(const OtlpSinkOptions& options, std::unique_ptr<detail::OtlpRecordEncoder> encoder);
    ~OtlpSink() override;

    /// Encodes the record's parts and queues them for the next request.
    void write(const RecordView& record) override;
    /// Waits (at most flush_timeout) until every record queued before it was delivered or dropped.
    void flush() override;
    /// The crash path, to an http:// endpoint (https:// has none: TLS is not safe in a signal
    /// handler): what is queued, then the `fatal` record, each in plain POSTs within one second
    /// together (docs/crashes-signals-fork.md).
    void write_on_crash(std::span<const RecordView> records) noexcept override;
    [[nodiscard]] SinkInfo info() const override;

    /// The close deadline begins (Sink::begin_close): every record, queued or written later,
    /// is delivered within shutdown_timeout or then dropped and counted; returns shutdown_timeout.
    std::chrono::milliseconds begin_close() override;
    /// Sends what is queued (at most shutdown_timeout from the first begin_close() or close()),
    /// counts what is left as dropped and stops the sink's thread. The destructor does it too.
    /// Later records are dropped and counted.
    void close();
    [[nodiscard]] OtlpSinkStats stats() const;

private:
    friend class detail::OtlpDelivery;  // counts what its thread drops

    std::unique_ptr<detail::OtlpRecordEncoder> encoder_;
    std::unique_ptr<detail::OtlpDelivery> delivery_;
    std::string target_;
};

/// An OTLP sink for `options`. Throws std::invalid_argument when they cannot work (an endpoint
/// that is not an http:// or https:// URL with a host and a port from 1 to 65535, a build
/// without OTLP or without zlib for gzip).
FIELDLOG_API std::shared_ptr<OtlpSink> make_otlp_sink(const OtlpSinkOptions& options);

/// How a SinkConfig's target made of OtlpSinkOptions becomes a sink (sink_target.hpp).
FIELDLOG_API std::shared_ptr<Sink> make_sink(const OtlpSinkOptions& options);
FIELDLOG_API SinkDestination sink_destination(const OtlpSinkOptions& options);

}  // namespace fieldlog

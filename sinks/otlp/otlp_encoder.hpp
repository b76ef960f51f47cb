// SPDX-License-Identifier: MIT
// The OTLP encoder: a record's parts as an OpenTelemetry LogRecord, and batches of them as an
// ExportLogsServiceRequest, in protobuf (the wire format written by hand: these few messages
// need a dozen field writers, no generated code) or in OTLP/JSON (proto3's JSON mapping).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "base/buffer.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sinks/otlp_sink.hpp"

namespace fieldlog::detail {

/// One record as a request is made of it, encoded already: its logger's name and its
/// LogRecord's bytes.
struct LogRecordBytes {
    std::string_view logger;
    std::string_view log_record;
};

/// log_record() runs on the logging thread (under the sink's lock); request(), request_bound()
/// and rejected_records() on the sink's thread, at the same time: they read only what the encoder
/// made when it was constructed.
class OtlpRecordEncoder {
public:
    virtual ~OtlpRecordEncoder() = default;
    /// The LogRecord of `record`: the message's bytes (protobuf) or one JSON object, in the
    /// encoder's buffer until the next call. Allocates nothing once its buffers have grown to
    /// the largest record.
    virtual std::string_view log_record(const RecordView& record) = 0;
    /// Appends one ExportLogsServiceRequest holding `records` (in order; a run of one logger's
    /// records is one ScopeLogs) to `out`.
    virtual void request(std::span<const LogRecordBytes> records, Buffer& out) = 0;
    /// The most bytes request() may need free in `out` for `records`: room reserved up to it
    /// keeps the request off the heap (the crash path's).
    [[nodiscard]] virtual std::size_t request_bound(std::span<const LogRecordBytes> records) const noexcept = 0;
    /// The partial success's rejected_log_records in a response body (0 when there is none).
    [[nodiscard]] virtual std::int64_t rejected_records(std::string_view response) const noexcept = 0;
    /// The request's Content-Type.
    [[nodiscard]] virtual std::string_view content_type() const noexcept = 0;
};

/// The encoder for `options` (its encoding, resource, duration and time formats).
std::unique_ptr<OtlpRecordEncoder> make_otlp_encoder(const OtlpSinkOptions& options);

}  // namespace fieldlog::detail

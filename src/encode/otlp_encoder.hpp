// SPDX-License-Identifier: MIT
// The OTLP encoder: a record's parts as an OpenTelemetry LogRecord, and batches of them as an
// ExportLogsServiceRequest, in protobuf (the wire format written by hand: these few messages
// need a dozen field writers, no generated code) or in OTLP/JSON (proto3's JSON mapping).
#pragma once

#include <memory>

#include "fieldlog/sinks/otlp_sink.hpp"
#include "sinks/otlp_encoding.hpp"

namespace fieldlog::detail {

/// The encoder for `options` (its encoding, resource, duration and time formats).
std::unique_ptr<OtlpRecordEncoder> make_otlp_encoder(const OtlpSinkOptions& options);

}  // namespace fieldlog::detail

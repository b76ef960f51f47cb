// SPDX-License-Identifier: MIT
// Encoders: turn a record (time, level, logger, message, fields) into one line of bytes in the
// per-thread record buffer. One encoder per format in use; options travel with it, so two
// sinks (or two programs in one process) can differ. Append-only, never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fieldlog/export.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog {

/// The line format of a sink.
enum class Format : std::uint8_t {
    json,     ///< one JSON object per line (default)
    logfmt,   ///< key=value pairs, quoted where needed
    console,  ///< aligned and human-readable; coloured on a terminal
    /// One JSON object per line in the OpenTelemetry logs data model's names: the record's
    /// fields under `attributes`, the trace context top-level (README: "OpenTelemetry records")
    otel,
};
inline constexpr int format_count = 4;

constexpr std::string_view to_string(Format f) noexcept {
    switch (f) {
        case Format::json: return "json";
        case Format::logfmt: return "logfmt";
        case Format::console: return "console";
        case Format::otel: return "otel";
    }
    return "invalid";
}
constexpr std::optional<Format> parse_format(std::string_view name) noexcept {
    if (name == "json") return Format::json;
    if (name == "logfmt") return Format::logfmt;
    if (name == "console") return Format::console;
    if (name == "otel") return Format::otel;
    return std::nullopt;
}

/// How duration fields are written.
enum class DurationFormat : std::uint8_t {
    string,        ///< Go's time.Duration.String(): "1.25ms", "1.5µs", "2h0m0s" (default)
    string_ascii,  ///< the same with `us` for µs, for ASCII-only readers: "1.5us"
    nanos,         ///< integer nanoseconds
    seconds,       ///< floating-point seconds
};

/// The bits of EncoderOptions::call_facts.
enum CallFact : std::uint8_t {
    /// Where the record was logged: "caller":"http/server.cpp:142" (the file's last two path
    /// components, as Go's zap writes them).
    caller_fact = 1,
    function_fact = 2,   ///< with caller: "function":"<the function's name>"
    thread_id_fact = 4,  ///< the kernel's thread id (gettid(2)): "tid":4711
};

/// One OpenTelemetry resource attribute, like `service.name = "checkout"`: what the otel
/// format writes under `resource` on every record.
struct FIELDLOG_API ResourceAttribute {
    std::string key;
    std::variant<std::string, std::int64_t, double, bool> value;

    friend bool operator==(const ResourceAttribute&, const ResourceAttribute&) = default;
};

/// The console format's logger column, in code points, unless a sink sets its own.
inline constexpr std::uint8_t default_logger_width = 12;

/// Everything that shapes the bytes of a line besides the record itself.
struct FIELDLOG_API EncoderOptions {
    Format format = Format::json;
    TimestampFormat timestamp{};
    DurationFormat duration = DurationFormat::string;
    bool colour = false;  ///< console only: ANSI colours (dim time and keys, level by severity, bold message)
    /// Console only: the logger column's width; a longer name is cut to it, ending in `…`.
    /// 0: no column, the name as it is (the message then moves with the name's length).
    std::uint8_t logger_width = default_logger_width;
    /// What a record says about its call, after the message: CallFact bits (one byte, so that
    /// a record with none of them pays one test).
    std::uint8_t call_facts = 0;
    /// Otel only: the resource's attributes, in order (empty in the other formats, so that
    /// their channels do not differ by it).
    std::vector<ResourceAttribute> resource{};
    /// Keys whose values are written as "[REDACTED]" at every depth: exact names or globs
    /// (`*` any run of bytes), ASCII case-insensitive (Config::redact).
    std::vector<std::string> redact{};
    /// A string value longer than this is cut at a UTF-8 boundary at or below it and ends in
    /// `…[truncated N bytes]`, N the bytes cut; 0: no cap (Config::max_value_bytes).
    std::size_t max_value_bytes = 0;

    friend bool operator==(const EncoderOptions&, const EncoderOptions&) = default;
};

}  // namespace fieldlog

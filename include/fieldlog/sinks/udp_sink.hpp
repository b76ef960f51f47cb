// SPDX-License-Identifier: MIT
// The UDP sink: one record per datagram to host:port, never blocking the caller. Framing is
// the JSON line itself or an RFC 5424 syslog message whose body is the JSON line. It sits at
// the end of the record path; re-resolving a host name runs on the library's background thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_target.hpp"

namespace fieldlog {

/// What a datagram carries: the line without its '\n' (`json`), or an RFC 5424 message
/// `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - - LINE` (`rfc5424`, for syslog daemons).
enum class UdpFraming : std::uint8_t { json, rfc5424 };
/// What happens to a record whose datagram would exceed max_datagram (see UdpSink).
enum class OversizePolicy : std::uint8_t { truncate, drop };

struct FIELDLOG_API UdpSinkOptions {
    std::string address;                      ///< "host:port", "1.2.3.4:port", "[::1]:port"
    UdpFraming framing = UdpFraming::json;
    std::size_t max_datagram = 2048;          ///< whole datagram, header included; RFC 5426's safe size; ≤ 65507
    OversizePolicy oversize = OversizePolicy::truncate;
    int facility = 16;                        ///< syslog facility 0–23 (16 = local0)
    std::string app_name = "fieldlog";       ///< RFC 5424 APP-NAME
    std::string hostname;                     ///< RFC 5424 HOSTNAME; empty: gethostname()
    std::chrono::seconds resolve_interval{60};  ///< a host name is resolved again this often; 0: never

    friend bool operator==(const UdpSinkOptions&, const UdpSinkOptions&) = default;
};

/// SinkTarget's hooks (fieldlog/sink_target.hpp): what configure() makes of these options.
FIELDLOG_API std::shared_ptr<Sink> make_sink(const UdpSinkOptions& options);
FIELDLOG_API SinkDestination sink_destination(const UdpSinkOptions& options);

/// Sends each record as one datagram from a non-blocking, connected socket; on Linux a batch
/// goes out with one sendmmsg(2).
///
/// - The address is resolved at construction (a name through getaddrinfo, the first result);
///   a name, not a literal, is resolved again every resolve_interval on the background thread,
///   so DNS never delays a caller; a new answer is taken under mutex(), between records. IPv6
///   literals need brackets.
/// - A missing receiver (ECONNREFUSED) or any other send error drops the record it was for;
///   a full socket buffer (EAGAIN, ENOBUFS) drops the rest of the batch, which would fail too.
///   Each failed call counts one error, each lost record one drop; nothing but EINTR is
///   retried and the caller never blocks. Errors are reported on stderr at most once per second.
/// - rfc5424: PRI = facility × 8 + severity (trace and debug 7, info 6, warn 4, error 3,
///   fatal 2); TIMESTAMP in UTC with 6 fraction digits, floored (RFC 5424 allows at most 6);
///   HOSTNAME, APP-NAME and PROCID keep printable ASCII only (others become '_') and are cut
///   to 255, 48 and 128 characters; MSGID and STRUCTURED-DATA are "-".
/// - Oversize rule (policy `truncate`): a JSON line keeps its structure — the longest string
///   value is cut at a character boundary (UTF-8 sequence or escape, never inside one) and
///   ends with "…", and `"_truncated":<original line length>` is added as the last member.
///   The record counts as written and in truncated(). When cutting that one value cannot
///   make it fit, or the line is not a JSON object (logfmt, console), it is dropped and
///   counted, as with policy `drop`. No oversized datagram reaches the socket, so EMSGSIZE
///   never surfaces per record.
///
/// Construction throws std::invalid_argument for a malformed or unresolvable address or bad
/// options, std::system_error when the socket cannot be made.
class FIELDLOG_API UdpSink final : public Sink {
public:
    explicit UdpSink(UdpSinkOptions options);
    ~UdpSink() override;

    void write(const RecordView& record) override;
    void write_batch(std::span<const RecordView> records) override;
    void flush() override {}
    /// Crash path: one send(2) per record, RFC 5424 with a nil TIMESTAMP (async-signal-safe).
    void write_on_crash(std::span<const RecordView> records) noexcept override;
    [[nodiscard]] SinkInfo info() const override;

    /// Records sent cut to max_datagram by the oversize rule.
    [[nodiscard]] std::uint64_t truncated() const noexcept;
    [[nodiscard]] const UdpSinkOptions& options() const noexcept;

private:
    struct FIELDLOG_LOCAL State;  // the implementation: not exported with the class
    std::unique_ptr<State> state_;
};

}  // namespace fieldlog

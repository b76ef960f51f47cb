// SPDX-License-Identifier: MIT
// The syslog sink: RFC 5424 messages over TCP (RFC 6587 octet counting), TLS (RFC 5425) or
// RELP (rsyslog's imrelp), plain or inside TLS, to a syslog daemon, through a bounded buffer that
// outlives a receiver restart. It sits at the end of the record path: the caller copies its
// record into the buffer; a thread of the sink's own does every network call.
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

/// How the syslog sink reaches its receiver.
enum class SyslogTransport : std::uint8_t {
    tcp,  ///< RFC 6587 octet counting: "LEN SP MSG"
    tls,  ///< the same frames inside TLS (RFC 5425), GnuTLS
    relp, ///< RELP over TCP: each message a `syslog` command the receiver answers with `rsp 200`
    relp_tls, ///< RELP inside TLS (rsyslog's imrelp with tls="on"), the TLS options as for tls
};

struct FIELDLOG_API SyslogSinkOptions {
    std::string address;                      ///< "host:port", "1.2.3.4:port", "[::1]:port"
    SyslogTransport transport = SyslogTransport::tcp;
    std::string ca_file;      ///< TLS: PEM file of the CAs to trust; empty: the system's trust store
    std::string cert_file;    ///< TLS: PEM client certificate (with key_file); empty: none
    std::string key_file;     ///< TLS: PEM private key of cert_file
    bool verify = true;       ///< TLS: check the receiver's certificate and its name
    std::string server_name;  ///< TLS: the name to check and send as SNI; empty: the address's host
    std::size_t buffer_bytes = 4 * 1024 * 1024;   ///< records kept until the receiver has them
    std::chrono::milliseconds reconnect_max{5000};  ///< the longest wait between connection attempts
    std::chrono::milliseconds drain_timeout{2000};  ///< how long closing the sink waits for the receiver
    int facility = 16;                        ///< syslog facility 0–23 (16 = local0)
    std::string app_name = "fieldlog";        ///< RFC 5424 APP-NAME
    std::string hostname;                     ///< RFC 5424 HOSTNAME; empty: gethostname()

    friend bool operator==(const SyslogSinkOptions&, const SyslogSinkOptions&) = default;
};

/// SinkTarget's hooks (fieldlog/sink_target.hpp): what configure() makes of these options.
FIELDLOG_API std::shared_ptr<Sink> make_sink(const SyslogSinkOptions& options);
FIELDLOG_API SinkDestination sink_destination(const SyslogSinkOptions& options);

/// The sink's own counters, readable at any time from any thread.
struct FIELDLOG_API SyslogSinkStats {
    std::uint64_t connects = 0;        ///< connections made (TLS: handshakes completed)
    std::uint64_t resent_records = 0;  ///< records sent again on a new connection
    std::uint64_t buffered_bytes = 0;  ///< bytes in the buffer now, not yet acknowledged
    std::uint64_t unacknowledged_records = 0;  ///< RELP: records sent on this connection, no `rsp` yet
    std::uint64_t refused_records = 0;  ///< RELP: records the receiver answered with an error (dropped)
};

/// Sends each record as one RFC 5424 message `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - - LINE`
/// (the header as UdpSink's rfc5424 framing writes it; LINE is the JSON line without its '\n'),
/// framed by octet counting, over one TCP or TLS connection.
///
/// - write() copies the frame into a ring of buffer_bytes allocated once, and wakes the sink's
///   thread only when it sleeps; it never makes a network call and never waits for one. A frame
///   that does not fit in the free part of the ring is dropped and counted (Sink::counters()).
/// - The sink's thread connects (with a backoff from 20 ms doubling to reconnect_max, starting
///   over once the receiver takes records again), sends what the ring holds, and frees a frame
///   only once the kernel reports every byte of it acknowledged by the receiver's TCP
///   (SIOCOUTQ). When the connection breaks, it connects again and sends again from the first
///   frame not wholly acknowledged: a frame is never sent again after the receiver's kernel
///   acknowledged it all.
/// - What that guarantees, and what it cannot (bytes a receiver's kernel acknowledged but the
///   daemon never read): README, "syslog over TCP, TLS and RELP".
/// - RELP: the connection opens with `open` (the receiver must offer the `syslog` command);
///   each frame is sent as `TXNR syslog LEN MSG`, at most 128 of them without their `rsp`,
///   and leaves the ring only when its `rsp` arrives: `200` frees it, any other status
///   drops it (counted dropped and refused, reported). After a broken connection or a
///   `serverclose`, every frame without its `rsp` is sent again on a new session. Closing
///   sends `close` once the ring is all acknowledged. relp_tls: the same session inside TLS.
/// - TLS: GnuTLS, the system's default priorities; with `verify` the receiver's certificate
///   must chain to ca_file (or the system store) and match server_name (or the host).
/// - Closing the sink (begin_close(): the program's end, shutdown(), a new configuration without
///   it; or its destructor) gives the receiver drain_timeout to acknowledge the ring, records
///   written meanwhile included; the frames still in it then are counted dropped, and their
///   number is reported on stderr (the counters end with the sink). The connection is then
///   reset, so none of them arrives later. A connection being opened then (connect, TLS
///   handshake, RELP open) is given up at the same deadline.
/// - flush() wakes the thread and returns; once closing, it waits for the receiver's
///   acknowledgement, until the deadline at most.
///
/// Construction throws std::invalid_argument for a malformed or unresolvable address, bad
/// options or TLS files that cannot be used; an unreachable receiver is not an error (the ring
/// fills meanwhile).
class FIELDLOG_API SyslogSink final : public Sink {
public:
    explicit SyslogSink(SyslogSinkOptions options);
    ~SyslogSink() override;

    void write(const RecordView& record) override;
    void flush() override;
    [[nodiscard]] SinkInfo info() const override;
    /// The drain deadline begins (Sink::begin_close); returns drain_timeout.
    std::chrono::milliseconds begin_close() override;

    [[nodiscard]] SyslogSinkStats stats() const noexcept;
    [[nodiscard]] const SyslogSinkOptions& options() const noexcept;

private:
    struct FIELDLOG_LOCAL State;  // the implementation: not exported with the class
    std::unique_ptr<State> state_;
};

}  // namespace fieldlog

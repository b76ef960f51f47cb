// The UDP sink: one record per datagram to host:port, never blocking the caller. Framing is
// the JSON line itself or an RFC 5424 syslog message whose body is the JSON line.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fieldlog/sink.hpp"

namespace fieldlog {

enum class UdpFraming : std::uint8_t { json, rfc5424 };
enum class OversizePolicy : std::uint8_t { truncate, drop };

struct UdpSinkOptions {
    std::string address;                      ///< "host:port", "[v6]:port"; resolved at construction
    UdpFraming framing = UdpFraming::json;
    std::size_t max_datagram = 2048;          ///< RFC 5426's safe syslog size; at most 65507
    OversizePolicy oversize = OversizePolicy::truncate;
    int facility = 16;                        ///< syslog facility (16 = local0)
    std::string app_name = "fieldlog";       ///< RFC 5424 APP-NAME
    std::string hostname;                     ///< RFC 5424 HOSTNAME; empty: gethostname()
    std::chrono::seconds resolve_interval{60};  ///< how often the host name is resolved again

    friend bool operator==(const UdpSinkOptions&, const UdpSinkOptions&) = default;
};

/// Sends each record as one datagram from a non-blocking socket (sendmmsg for batches).
/// Construction throws std::system_error / std::invalid_argument for a bad address; a missing
/// receiver, EAGAIN or ENOBUFS later are counted drops.
class UdpSink final : public Sink {
public:
    explicit UdpSink(UdpSinkOptions options);
    ~UdpSink() override;

    void write(std::span<const char> record) override;
    void write_record(const RecordView& record) override;
    void write_batch(std::span<const RecordView> records) override;
    void flush() override {}

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace fieldlog

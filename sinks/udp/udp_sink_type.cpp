// SPDX-License-Identifier: MIT
// The UDP sink as a configuration names it (`type = "udp"`): its keys, read into
// UdpSinkOptions, and what configure() makes of those options.
#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sinks/udp_sink.hpp"
#include "sinks/common/address.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const UdpSinkOptions& options) { return std::make_shared<UdpSink>(options); }

SinkDestination sink_destination(const UdpSinkOptions& options) { return {.kind = "udp", .target = options.address}; }

namespace detail {

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType udp_sink_type() {
    return {"udp",
            {"address", "framing", "max_datagram", "oversize", "facility", "app_name", "hostname", "resolve_interval"},
            [](SinkSettings& settings) -> SinkTarget {
                UdpSinkOptions udp;
                udp.address = address_setting(settings, "an address like \"127.0.0.1:5140\"");
                udp.framing = settings.choice<UdpFraming>("framing", udp.framing,
                                                          {{"json", UdpFraming::json}, {"rfc5424", UdpFraming::rfc5424}});
                udp.max_datagram = settings.size("max_datagram", udp.max_datagram, "2KiB", 1, 65507);
                udp.oversize = settings.choice<OversizePolicy>(
                    "oversize", udp.oversize, {{"truncate", OversizePolicy::truncate}, {"drop", OversizePolicy::drop}});
                udp.facility = static_cast<int>(settings.integer("facility", udp.facility, 0, 23, "a syslog facility"));
                udp.app_name = settings.text("app_name", "a name", udp.app_name);
                udp.hostname = settings.text("hostname", "a host name", udp.hostname);
                udp.resolve_interval = settings.duration("resolve_interval", udp.resolve_interval, "60s");
                if (udp.address.empty()) settings.missing("address", "a udp sink sends to \"host:port\"");
                return udp;
            }};
}

}  // namespace detail
}  // namespace fieldlog

// SPDX-License-Identifier: MIT
// "host:port" as the network sinks take it (UDP, syslog over TCP/TLS): checked once when the
// sink is made, resolved through getaddrinfo. Internal to sinks/; cold path.
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>

#include "fieldlog/sink_registry.hpp"

namespace fieldlog::detail {

/// A resolved socket address.
struct Endpoint {
    sockaddr_storage address{};
    socklen_t length = 0;

    [[nodiscard]] bool same_as(const Endpoint& other) const noexcept;
};

struct HostPort {
    std::string host;
    std::string port;
};

/// Splits "host:port", "1.2.3.4:port" or "[::1]:port"; throws std::invalid_argument naming the
/// address when there is no port, no host, a host that is no host name or IP address, an IPv6
/// address without brackets, or a port that is neither a number from 1 to 65535 nor a service
/// name.
HostPort split_address(const std::string& address);

/// getaddrinfo's first answer for `socktype` (SOCK_DGRAM, SOCK_STREAM); 0 or the EAI_* code.
int resolve(const HostPort& where, int socktype, int flags, Endpoint& out) noexcept;

/// The key `address` of a network sink's table, "host:port" (`example` shows one in errors),
/// split here so that a bad one is refused at its line; it then identifies the sink in
/// configure()'s errors. "" when the table leaves it out.
std::string address_setting(SinkSettings& settings, std::string_view example);

}  // namespace fieldlog::detail

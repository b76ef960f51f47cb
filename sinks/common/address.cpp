// SPDX-License-Identifier: MIT
// Splitting and resolving "host:port" for the network sinks.
#include "address.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace fieldlog::detail {

bool Endpoint::same_as(const Endpoint& other) const noexcept {
    return length == other.length && std::memcmp(&address, &other.address, length) == 0;
}

namespace {

bool is_alnum(char c) noexcept { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// A host name (letters, digits, '-' and '_' in dot-separated labels, as resolvers take them) or
/// an IPv4 address, which has that form too.
bool is_host_name(std::string_view host) noexcept {
    if (host.empty() || host.size() > 253) return false;
    std::size_t label = 0;
    for (const char c : host) {
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
        } else if (is_alnum(c) || c == '-' || c == '_') {
            if (++label > 63) return false;
        } else {
            return false;
        }
    }
    return true;
}

/// A service name of /etc/services (`syslog`, `syslog-tls`): letters, digits and '-', a letter among them.
bool is_service_name(std::string_view port) noexcept {
    return !port.empty() && std::all_of(port.begin(), port.end(), [](char c) { return is_alnum(c) || c == '-'; }) &&
           std::any_of(port.begin(), port.end(), [](char c) { return !(c >= '0' && c <= '9') && c != '-'; });
}

}  // namespace

HostPort split_address(const std::string& address) {
    const std::size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon + 1 == address.size()) {
        throw std::invalid_argument("address '" + address + "' has no :port");
    }
    std::string host = address.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
        in6_addr ipv6{};
        if (::inet_pton(AF_INET6, host.c_str(), &ipv6) != 1) {
            throw std::invalid_argument("address '" + address + "': [" + host + "] is not an IPv6 address");
        }
    } else if (host.find(':') != std::string::npos) {
        in6_addr ipv6{};
        throw std::invalid_argument(::inet_pton(AF_INET6, host.c_str(), &ipv6) == 1
                                        ? "address '" + address + "': an IPv6 address needs brackets, e.g. [::1]:5140"
                                        : "address '" + address + "': one ':' between host and port, e.g. 127.0.0.1:5140");
    } else if (!host.empty() && !is_host_name(host)) {
        throw std::invalid_argument("address '" + address + "': '" + host + "' is not a host name or an IP address");
    }
    if (host.empty()) throw std::invalid_argument("address '" + address + "' has no host");
    std::string port = address.substr(colon + 1);
    if (std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        // getaddrinfo takes any number and keeps its low 16 bits: 99999 would be port 34463.
        unsigned value = 0;
        const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (error != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
            throw std::invalid_argument("address '" + address + "': port " + port + " is not in 1-65535");
        }
    } else if (!is_service_name(port)) {  // a service name goes to getaddrinfo, through /etc/services
        throw std::invalid_argument("address '" + address + "': port " + port +
                                    " is neither a number from 1 to 65535 nor a service name like syslog");
    }
    return {host, std::move(port)};
}

int resolve(const HostPort& where, int socktype, int flags, Endpoint& out) noexcept {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = socktype;
    hints.ai_flags = flags;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(where.host.c_str(), where.port.c_str(), &hints, &found); rc != 0) return rc;
    std::memcpy(&out.address, found->ai_addr, found->ai_addrlen);
    out.length = found->ai_addrlen;
    ::freeaddrinfo(found);
    return 0;
}

std::string address_setting(SinkSettings& settings, std::string_view example) {
    if (!settings.has("address")) return {};
    std::string address = settings.text("address", example);
    if (address.find(':') == std::string::npos) settings.expected("address", example);
    try {
        static_cast<void>(split_address(address));
    } catch (const std::invalid_argument& error) {
        settings.fail("address", error.what());
    }
    settings.identify_by("address");
    return address;
}

}  // namespace fieldlog::detail

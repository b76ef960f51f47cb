// SPDX-License-Identifier: MIT
// Splitting and resolving "host:port" for the network sinks.
#include "address.hpp"

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

HostPort split_address(const std::string& address) {
    const std::size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon + 1 == address.size()) {
        throw std::invalid_argument("address '" + address + "' has no :port");
    }
    std::string host = address.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    } else if (host.find(':') != std::string::npos) {
        throw std::invalid_argument("address '" + address + "': an IPv6 address needs brackets, e.g. [::1]:5140");
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
    }  // otherwise a service name (/etc/services), for getaddrinfo
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
    settings.identify_by("address");
    return address;
}

}  // namespace fieldlog::detail

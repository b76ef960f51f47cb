// SPDX-License-Identifier: MIT
// The OTLP sink's requests from the crash path: HTTP/1.1 POSTs over a plain socket, made of
// async-signal-safe calls only (socket, connect, poll, fcntl, setsockopt, sendmsg, read, close)
// and no heap. What they need is made beforehand: the request's head when the sink is made, the
// receiver's address (getaddrinfo is not safe in a handler): the one libcurl last reached, else
// the resolver's first. TLS is not safe there: an https:// endpoint has none
// (OtlpHttpClient::crash_post()).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "sinks/common/address.hpp"

namespace fieldlog::detail {

class CrashPost {
public:
    /// `head`: the request line and the headers, up to and with "Content-Length: ".
    CrashPost(HostPort where, std::string head);

    /// Looks the host up until it has an address (when the sink is made, then before each request).
    void resolve() noexcept;
    /// The address libcurl reached the receiver at (`ip` as text), which the crash path then
    /// uses: a name with several addresses ("localhost": ::1 and 127.0.0.1) may listen on one.
    void reached(const char* ip, long port) noexcept;
    /// POSTs `body` and reads the status line, waiting at most until `deadline_ns`
    /// (CLOCK_MONOTONIC); true when the receiver answered 2xx. Async-signal-safe.
    bool post(std::string_view body, std::int64_t deadline_ns) const noexcept;

private:
    /// Stores `address` in the slot the crash path is not reading, then makes it current.
    void use(const Endpoint& address) noexcept;

    const HostPort where_;
    const std::string head_;
    Endpoint slots_[2]{};
    std::atomic<int> current_{-1};  ///< the slot in use; -1 before any address
};

/// CLOCK_MONOTONIC in nanoseconds: the crash path's clock.
std::int64_t monotonic_ns() noexcept;

}  // namespace fieldlog::detail

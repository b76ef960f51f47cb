// SPDX-License-Identifier: MIT
// The crash path's POST (otlp_crash_post.hpp). Every wait is bounded by the deadline (poll()
// for the connection, then the socket's timeouts): a receiver that is down refuses the
// connection at once, one that reads nothing runs out the bound.
#include "otlp_crash_post.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "sinks/common/sink_io.hpp"

namespace fieldlog::detail {
namespace {

/// Waits until `fd` is ready for `events` or the deadline passed; false then.
bool wait_for(int fd, short events, std::int64_t deadline_ns) noexcept {
    for (;;) {
        const std::int64_t left = deadline_ns - monotonic_ns();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left / 1'000'000 + 1));
        if (ready > 0) return true;
        if (ready < 0 && errno != EINTR) return false;
    }
}

bool connected(int fd, const Endpoint& to, std::int64_t deadline_ns) noexcept {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&to.address), to.length) == 0) return true;
    if (errno != EINPROGRESS || !wait_for(fd, POLLOUT, deadline_ns)) return false;
    int error = 0;
    socklen_t length = sizeof error;
    return ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
}

/// From here on each send and read on `fd` blocks until the deadline at most.
bool bounded_from_now(int fd, std::int64_t deadline_ns) noexcept {
    const std::int64_t left = deadline_ns - monotonic_ns();
    if (left <= 0) return false;
    const timeval bound{static_cast<time_t>(left / 1'000'000'000), static_cast<suseconds_t>(left % 1'000'000'000 / 1000 + 1)};
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 &&
           ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound) == 0 &&
           ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound) == 0;
}

/// Reads the status line's code ("HTTP/1.1 200 …"); 0 when none came in time.
int status_of_answer(int fd) noexcept {
    char line[16];
    std::size_t size = 0;
    while (size < 12) {
        const ssize_t n = ::read(fd, line + size, sizeof line - size);
        if (n > 0) {
            size += static_cast<std::size_t>(n);
        } else if (n == 0 || errno != EINTR) {
            return 0;  // closed, or SO_RCVTIMEO ran out
        }
    }
    int status = 0;
    const auto [end, error] = std::from_chars(line + 9, line + 12, status);
    return std::memcmp(line, "HTTP/1.", 7) == 0 && error == std::errc() && end == line + 12 ? status : 0;
}

}  // namespace

std::int64_t monotonic_ns() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

CrashPost::CrashPost(HostPort where, std::string head) : where_(std::move(where)), head_(std::move(head)) {}

void CrashPost::use(const Endpoint& address) noexcept {
    const int current = current_.load(std::memory_order_relaxed);
    if (current >= 0 && slots_[current].same_as(address)) return;
    const int next = current == 0 ? 1 : 0;
    slots_[next] = address;
    current_.store(next, std::memory_order_release);
}

void CrashPost::resolve() noexcept {
    if (current_.load(std::memory_order_relaxed) >= 0) return;
    Endpoint found;
    if (detail::resolve(where_, SOCK_STREAM, AI_NUMERICSERV, found) == 0) use(found);
}

void CrashPost::reached(const char* ip, long port) noexcept {
    if (ip == nullptr || port <= 0 || port > 65535) return;
    Endpoint at;
    auto& v4 = reinterpret_cast<sockaddr_in&>(at.address);
    auto& v6 = reinterpret_cast<sockaddr_in6&>(at.address);
    if (::inet_pton(AF_INET, ip, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(static_cast<std::uint16_t>(port));
        at.length = sizeof v4;
    } else if (::inet_pton(AF_INET6, ip, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(static_cast<std::uint16_t>(port));
        at.length = sizeof v6;
    } else {
        return;
    }
    use(at);
}

bool CrashPost::post(std::string_view body, std::int64_t deadline_ns) const noexcept {
    const int current = current_.load(std::memory_order_acquire);
    if (current < 0) return false;
    const Endpoint address = slots_[current];
    const int fd = ::socket(address.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    char length[32];
    char* end = std::to_chars(length, length + 20, body.size()).ptr;
    std::memcpy(end, "\r\n\r\n", 4);
    iovec parts[3] = {{const_cast<char*>(head_.data()), head_.size()},
                      {length, static_cast<std::size_t>(end + 4 - length)},
                      {const_cast<char*>(body.data()), body.size()}};
    std::size_t written = 0;
    const bool delivered = connected(fd, address, deadline_ns) && bounded_from_now(fd, deadline_ns) &&
                           send_all(fd, parts, 3, written) == 0 && status_of_answer(fd) / 100 == 2;
    ::close(fd);
    return delivered;
}

}  // namespace fieldlog::detail

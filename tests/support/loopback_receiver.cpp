// SPDX-License-Identifier: MIT
#include "support/loopback_receiver.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <strings.h>
#include <system_error>

namespace fieldlog_test {
namespace {

int bound_socket(int type, int port) {
    const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        const int error = errno;
        ::close(fd);
        throw std::system_error(error, std::generic_category(), "bind");
    }
    return fd;
}

int port_of(int fd) {
    sockaddr_in address{};
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    return ntohs(address.sin_port);
}

/// The Content-Length of an HTTP request's head, or 0.
std::size_t content_length(std::string_view head) {
    constexpr std::string_view kName = "\r\ncontent-length:";
    for (std::size_t at = 0; at + kName.size() <= head.size(); ++at) {
        if (::strncasecmp(head.data() + at, kName.data(), kName.size()) == 0) {
            return std::strtoull(std::string(head.substr(at + kName.size(), 20)).c_str(), nullptr, 10);
        }
    }
    return 0;
}

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";

}  // namespace

int unused_port(int type) {
    // Below the kernel's ephemeral range: no socket bound to port 0 (a receiver, a sender's own
    // end) is given it while the test runs, so it stays one where nothing listens.
    int ephemeral_low = 32768;
    if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> ephemeral_low;
    constexpr int kLowest = 10000;
    std::minstd_rand pick(std::random_device{}());
    for (int tries = 0; tries < 1000; ++tries) {
        const int port = kLowest + static_cast<int>(pick() % static_cast<unsigned>(std::max(ephemeral_low - kLowest, 1)));
        try {
            ::close(bound_socket(type, port));
            return port;
        } catch (const std::system_error&) {  // taken: another
        }
    }
    throw std::runtime_error("no free port below the ephemeral range");
}

LoopbackReceiver::LoopbackReceiver(Kind kind, std::string marker) : kind_(kind), marker_(std::move(marker)) {
    const bool datagrams = kind_ == Kind::datagrams;
    fd_ = bound_socket(datagrams ? SOCK_DGRAM : SOCK_STREAM, 0);
    if (kind_ == Kind::frames_unread) {
        const int small = 4096;  // the kernel's minimum or near it: a receiver that falls behind at once
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    if (!datagrams && ::listen(fd_, 16) != 0) {
        const int error = errno;
        ::close(fd_);
        throw std::system_error(error, std::generic_category(), "listen");
    }
    port_ = port_of(fd_);
    thread_ = std::thread([this] { serve(); });
}

LoopbackReceiver::~LoopbackReceiver() {
    stop_ = true;
    thread_.join();
    for (const Connection& connection : connections_) ::close(connection.fd);
    ::close(fd_);
}

std::string LoopbackReceiver::address() const { return "127.0.0.1:" + std::to_string(port_); }

std::size_t LoopbackReceiver::records() {
    const std::lock_guard lock(mutex_);
    return records_;
}

bool LoopbackReceiver::answered_with(std::string_view text) {
    const std::lock_guard lock(mutex_);
    return answered_.find(text) != std::string::npos;
}

void LoopbackReceiver::read_rest() {
    const std::lock_guard lock(mutex_);
    if (kind_ == Kind::datagrams) {
        while (read_datagram()) {
        }
        return;
    }
    for (Connection& connection : connections_) {
        while (read_from(connection)) {
        }
    }
}

std::size_t LoopbackReceiver::occurrences(std::string_view text) const {
    std::size_t count = 0;
    for (std::size_t at = text.find(marker_); at != std::string_view::npos; at = text.find(marker_, at + marker_.size())) {
        ++count;
    }
    return count;
}

void LoopbackReceiver::serve() {
    while (!stop_) {
        std::vector<pollfd> watched{{fd_, POLLIN, 0}};
        {
            const std::lock_guard lock(mutex_);
            if (kind_ != Kind::frames_unread) {
                for (const Connection& connection : connections_) {
                    if (!connection.ended) watched.push_back({connection.fd, POLLIN, 0});
                }
            }
        }
        if (::poll(watched.data(), watched.size(), 10) <= 0) continue;
        const std::lock_guard lock(mutex_);
        if ((watched[0].revents & POLLIN) != 0) {
            if (kind_ == Kind::datagrams) {
                read_datagram();
            } else {
                accept_one();
            }
        }
        for (std::size_t i = 1; i < watched.size(); ++i) {
            if (watched[i].revents == 0) continue;
            for (Connection& connection : connections_) {
                if (connection.fd == watched[i].fd) read_from(connection);
            }
        }
    }
}

bool LoopbackReceiver::read_datagram() {
    char datagram[65536];
    const ssize_t got = ::recv(fd_, datagram, sizeof datagram, MSG_DONTWAIT);
    if (got < 0) return false;
    if (occurrences(std::string_view(datagram, static_cast<std::size_t>(got))) > 0) ++records_;
    return true;
}

void LoopbackReceiver::accept_one() {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) connections_.push_back(Connection{fd, {}});
}

bool LoopbackReceiver::read_from(Connection& connection) {
    if (connection.ended) return false;
    char chunk[65536];
    const ssize_t got = ::recv(connection.fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (got <= 0) {
        connection.ended = got == 0 || (errno != EAGAIN && errno != EINTR);
        return false;
    }
    connection.pending.append(chunk, static_cast<std::size_t>(got));
    take(connection);
    return true;
}

void LoopbackReceiver::take(Connection& connection) {
    std::string& pending = connection.pending;
    for (;;) {
        if (kind_ == Kind::http_answering || kind_ == Kind::http_silent) {
            const std::size_t head_end = pending.find("\r\n\r\n");
            if (head_end == std::string::npos) return;
            const std::size_t size = content_length(std::string_view(pending).substr(0, head_end + 2));
            if (pending.size() < head_end + 4 + size) return;
            const std::string_view body = std::string_view(pending).substr(head_end + 4, size);
            if (kind_ == Kind::http_answering) {
                records_ += occurrences(body);
                answered_.append(body);
                static_cast<void>(::send(connection.fd, kOk.data(), kOk.size(), MSG_NOSIGNAL));
            }
            pending.erase(0, head_end + 4 + size);
        } else {
            const std::size_t space = pending.find(' ');
            if (space == std::string::npos) return;
            const std::size_t size = std::strtoull(pending.substr(0, space).c_str(), nullptr, 10);
            if (pending.size() < space + 1 + size) return;
            if (occurrences(std::string_view(pending).substr(space + 1, size)) > 0) ++records_;
            pending.erase(0, space + 1 + size);
        }
    }
}

}  // namespace fieldlog_test

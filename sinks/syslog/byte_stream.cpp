// SPDX-License-Identifier: MIT
// The syslog sink's connection to its receiver: opening it (TCP, then TLS), sending, receiving,
// the kernel's word on what the receiver's TCP acknowledged.
#include "byte_stream.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>

#include "base/platform.hpp"

#if FIELDLOG_LINUX_FACILITIES
#include <linux/sockios.h>
#include <sys/ioctl.h>
#endif

namespace fieldlog::detail {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{20};
constexpr int kSendTimeoutMs = 100;  // a send blocked by a slow receiver returns to look at the clock

bool is_transient(int error) noexcept { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

}  // namespace

ByteStream::ByteStream(HostPort where, TlsSettings tls_settings, std::unique_ptr<TlsCredentials> credentials,
                       milliseconds reconnect_max, const DrainDeadline& deadline, SyslogEvents& events)
    : where_(std::move(where)),
      tls_settings_(std::move(tls_settings)),
      credentials_(std::move(credentials)),
      reconnect_max_(reconnect_max),
      deadline_(deadline),
      events_(events),
      backoff_(kFirstBackoff) {}

// --- opening ----------------------------------------------------------------------------------

bool ByteStream::open(SocketWaiter& waiter, Clock::time_point give_up, bool await_server_verdict) noexcept {
    verdict_operation_ = {};
    if (!connect(give_up, waiter)) return false;
    pushed_ = 0;
    if (credentials_) {
        session_ = credentials_->open(tls_settings_, fd_, pushed_);
        if (const std::string failure = session_->handshake(waiter, give_up, await_server_verdict); !failure.empty()) {
            return give_up_opening("TLS handshake", failure);
        }
    }
    return make_blocking();
}

/// Non-blocking until the connection is open, so that every wait in the opening is the
/// waiter's, which closing the sink cuts short.
bool ByteStream::connect(Clock::time_point give_up, SocketWaiter& waiter) noexcept {
    Endpoint target;
    if (const int rc = resolve(where_, SOCK_STREAM, 0, target); rc != 0) {
        events_.count_error();
        events_.report("resolve", ::gai_strerror(rc));
        return false;
    }
    fd_ = ::socket(target.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
        events_.count_error();
        events_.report("socket", errno);
        return false;
    }
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&target.address), target.length) != 0) {
        int error = errno;
        if (error == EINPROGRESS) {
            socklen_t length = sizeof error;
            if (!waiter.await_socket(fd_, POLLOUT, give_up)) {
                error = ETIMEDOUT;
            } else if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
                error = errno;
            }
        }
        if (error != 0) return give_up_opening("connect", error);
    }
    return true;
}

/// Blocking from here, with a send timeout: the thread has nothing else to do while the
/// receiver is slow, and looks at the clock (closing) between timeouts.
bool ByteStream::make_blocking() noexcept {
    const timeval send_timeout{0, kSendTimeoutMs * 1000};
    if (::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK) != 0 ||
        ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout) != 0) {
        return give_up_opening("connect", errno);
    }
    return true;
}

/// Ends an attempt that failed at `operation`: counted, reported, the socket closed. Always false.
bool ByteStream::give_up_opening(std::string_view operation, std::string_view reason) noexcept {
    events_.count_error();
    events_.report(operation, deadline_.passed() ? "the sink closed before the connection was open (drain_timeout)" : reason);
    close();
    return false;
}

bool ByteStream::give_up_opening(std::string_view operation, int error) noexcept {
    char text[128];
    return give_up_opening(operation, error_text(error, text));
}

void ByteStream::close() noexcept {
    session_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

void ByteStream::discard_unsent() noexcept {
    const linger reset{.l_onoff = 1, .l_linger = 0};
    if (fd_ >= 0) ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
}

void ByteStream::back_off() noexcept { backoff_ = std::min(backoff_ * 2, std::max(reconnect_max_, kFirstBackoff)); }

void ByteStream::reset_backoff() noexcept { backoff_ = kFirstBackoff; }

// --- sending ----------------------------------------------------------------------------------

bool ByteStream::acknowledged(std::uint64_t& bytes) const noexcept {
#if FIELDLOG_LINUX_FACILITIES
    int unacknowledged = 0;
    if (::ioctl(fd_, SIOCOUTQ, &unacknowledged) != 0) return false;
    bytes = pushed_ - static_cast<std::uint64_t>(unacknowledged);
#else
    bytes = pushed_;  // the kernel does not say: what it took counts as delivered
#endif
    return true;
}

bool ByteStream::send_some(const RingSlice& data, std::size_t& sent) noexcept {
    iovec parts[2] = {{const_cast<char*>(data.first.data()), data.first.size()},
                      {const_cast<char*>(data.second.data()), data.second.size()}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = data.second.empty() ? 1 : 2;
    const ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    sent = 0;
    if (n > 0) {
        sent = static_cast<std::size_t>(n);
        pushed_ += sent;
        return true;
    }
    if (n < 0 && is_transient(errno)) return true;  // a slow receiver
    events_.count_error();
    events_.report("send", n < 0 ? errno : EIO);
    return false;
}

bool ByteStream::send_all(std::string_view data, BlockedSendHandler& handler) noexcept {
    return session_ ? send_all_tls(data, handler) : send_all_plain(data, handler);
}

bool ByteStream::send_all_plain(std::string_view data, BlockedSendHandler& handler) noexcept {
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && is_transient(errno) && !deadline_.passed()) {
            if (!handler.on_send_blocked()) return false;
            continue;
        }
        events_.count_error();
        events_.report("send", n < 0 ? errno : EIO);
        return false;
    }
    return true;
}

bool ByteStream::send_all_tls(std::string_view data, BlockedSendHandler& handler) noexcept {
    std::size_t done = 0;
    for (;;) {
        const int rc = session_->send(data.data(), data.size(), done);
        if (rc > 0) return true;
        if (rc < 0) {
            events_.count_error();
            report_session_failure("TLS send");
            return false;
        }
        if (deadline_.passed()) {
            events_.count_error();
            events_.report("TLS send", session_->error_text());
            return false;
        }
        if (!handler.on_send_blocked()) return false;
    }
}

// --- receiving --------------------------------------------------------------------------------

bool ByteStream::receive(char* data, std::size_t size, std::size_t& got) noexcept {
    got = 0;
    if (!session_) return receive_plain(data, size, got);
    const ssize_t n = session_->receive(data, size);
    if (n < 0) {
        report_session_failure("receive");
        return false;
    }
    got = static_cast<std::size_t>(n);
    return true;
}

bool ByteStream::receive_plain(char* data, std::size_t size, std::size_t& got) noexcept {
    got = 0;
    for (;;) {
        const ssize_t n = ::recv(fd_, data, size, MSG_DONTWAIT);
        if (n > 0) {
            got = static_cast<std::size_t>(n);
            return true;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n == 0) {
            events_.report("receive", "the receiver closed the connection");
        } else {
            events_.report("receive", errno);
        }
        return false;
    }
}

bool ByteStream::discard_input() noexcept {
    if (session_) {
        if (session_->drain_input()) return true;
        events_.report("receive", session_->error_text());
        return false;
    }
    char scratch[512];
    std::size_t got = 0;
    do {
        if (!receive_plain(scratch, sizeof scratch, got)) return false;
    } while (got > 0);
    return true;
}

bool ByteStream::await_input(int timeout_ms) const noexcept {
    pollfd readable{fd_, POLLIN | POLLRDHUP, 0};
    return ::poll(&readable, 1, timeout_ms) > 0;
}

void ByteStream::report_session_failure(std::string_view operation) noexcept {
    if (verdict_operation_.empty()) {
        events_.report(operation, session_->error_text());
        return;
    }
    char reason[256];
    const int size = std::snprintf(reason, sizeof reason, "the receiver closed the session after the handshake: %s",
                                   session_->error_text());
    const std::size_t written = size < 0 ? 0 : std::min(static_cast<std::size_t>(size), sizeof reason - 1);
    events_.report(verdict_operation_, std::string_view(reason, written));
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The syslog sink's byte stream to its receiver: one TCP connection, inside TLS or not, and the
// backoff between attempts to open it. Opening never blocks (every wait is the SocketWaiter's,
// which closing the sink cuts short); once open, the socket blocks with a send timeout, so a
// slow receiver returns the thread to look at the clock. Reports its own failures. Internal to
// sinks/; runs on the syslog sink's own thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "drain_deadline.hpp"
#include "frame_ring.hpp"
#include "sinks/common/address.hpp"
#include "syslog_events.hpp"
#include "tls_stream.hpp"

namespace fieldlog::detail {

/// What a sender does while the receiver is slow to take its bytes; false ends the send.
class BlockedSendHandler {
public:
    virtual bool on_send_blocked() noexcept = 0;

protected:
    ~BlockedSendHandler() = default;
};

class ByteStream {
public:
    using Clock = std::chrono::steady_clock;

    /// `credentials` null: plain TCP.
    ByteStream(HostPort where, TlsSettings tls_settings, std::unique_ptr<TlsCredentials> credentials,
               std::chrono::milliseconds reconnect_max, const DrainDeadline& deadline, SyslogEvents& events);
    ~ByteStream() { close(); }
    ByteStream(const ByteStream&) = delete;
    ByteStream& operator=(const ByteStream&) = delete;

    /// Connects and (TLS) runs the handshake until `give_up`; false, counted and reported,
    /// when that failed. `await_server_verdict`: see TlsStream::handshake.
    bool open(SocketWaiter& waiter, Clock::time_point give_up, bool await_server_verdict) noexcept;
    void close() noexcept;
    /// Makes the next close() reset the connection (SO_LINGER 0): the kernel then sends none of
    /// what the sink still holds unacknowledged, which it counts as dropped.
    void discard_unsent() noexcept;
    [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] bool tls() const noexcept { return credentials_ != nullptr; }
    /// The most plaintext one TLS record carries.
    [[nodiscard]] std::size_t max_record() const noexcept { return session_->max_record(); }

    /// Bytes this connection handed to the kernel (TLS: ciphertext, handshake included).
    [[nodiscard]] std::uint64_t pushed() const noexcept { return pushed_; }
    /// Of pushed(), the bytes the receiver's TCP acknowledged (SIOCOUTQ: what the kernel still
    /// holds, sent or not); false when the kernel does not say. Without SIOCOUTQ (a port), all
    /// of pushed().
    bool acknowledged(std::uint64_t& bytes) const noexcept;

    /// Plain TCP: hands what the kernel takes of `data` to it in one call; `sent` 0 when the
    /// receiver is slow. False when the connection is gone.
    bool send_some(const RingSlice& data, std::size_t& sent) noexcept;
    /// Sends all of `data`, calling `handler` whenever the receiver is slow. False when the
    /// connection is gone or the drain deadline passed.
    bool send_all(std::string_view data, BlockedSendHandler& handler) noexcept;
    /// Reads into `data` what the receiver sent, without waiting (`got` 0: nothing yet). False
    /// when it closed the connection or the session failed.
    bool receive(char* data, std::size_t size, std::size_t& got) noexcept;
    /// Reads and discards what the receiver sent; false when it closed the connection.
    bool discard_input() noexcept;
    /// Waits up to `timeout_ms` for the receiver to say something; false when nothing came.
    bool await_input(int timeout_ms) const noexcept;

    /// Until verdict_given(), a failing TLS session is the receiver's verdict on the first
    /// exchange at `operation` (a refused client certificate looks so under TLS 1.3), reported
    /// as such.
    void await_verdict(std::string_view operation) noexcept { verdict_operation_ = operation; }
    void verdict_given() noexcept { verdict_operation_ = {}; }

    /// How long to wait before the next attempt to open.
    [[nodiscard]] std::chrono::milliseconds backoff() const noexcept { return backoff_; }
    /// After a failed attempt: doubles the wait, up to reconnect_max.
    void back_off() noexcept;
    /// The receiver takes records: a later break starts over quickly.
    void reset_backoff() noexcept;

private:
    bool connect(Clock::time_point give_up, SocketWaiter& waiter) noexcept;
    bool make_blocking() noexcept;
    bool give_up_opening(std::string_view operation, std::string_view reason) noexcept;
    bool give_up_opening(std::string_view operation, int error) noexcept;
    bool send_all_plain(std::string_view data, BlockedSendHandler& handler) noexcept;
    bool send_all_tls(std::string_view data, BlockedSendHandler& handler) noexcept;
    bool receive_plain(char* data, std::size_t size, std::size_t& got) noexcept;
    void report_session_failure(std::string_view operation) noexcept;

    const HostPort where_;
    const TlsSettings tls_settings_;
    const std::unique_ptr<TlsCredentials> credentials_;
    const std::chrono::milliseconds reconnect_max_;
    const DrainDeadline& deadline_;
    SyslogEvents& events_;

    int fd_ = -1;
    std::unique_ptr<TlsStream> session_;
    std::uint64_t pushed_ = 0;
    std::string_view verdict_operation_;
    std::chrono::milliseconds backoff_;
};

}  // namespace fieldlog::detail

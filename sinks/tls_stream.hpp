// SPDX-License-Identifier: MIT
// TLS for the syslog sink (RFC 5425), over GnuTLS: credentials loaded once when the sink is
// made, one client session per connection. The session writes through a counter of the
// ciphertext bytes it hands the kernel, so the sink can tell which of its records the
// receiver's TCP acknowledged. Internal to sinks/; runs on the syslog sink's own thread.
#pragma once

#include <gnutls/gnutls.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace fieldlog::detail {

/// How the syslog sink's thread waits for its socket while a connection opens: besides the
/// socket it watches its wake-up fd, so that closing the sink cuts the wait to the drain deadline.
class SocketWaiter {
public:
    /// Waits until `fd` is ready for `events` (true) or `until` passed, or the drain deadline
    /// of a closing sink if that is sooner (false).
    virtual bool await_socket(int fd, short events, std::chrono::steady_clock::time_point until) noexcept = 0;

protected:
    ~SocketWaiter() = default;
};

struct TlsSettings {
    std::string ca_file;    ///< empty: the system's trust store
    std::string cert_file;  ///< empty: no client certificate
    std::string key_file;
    bool verify = true;
    std::string server_name;  ///< the name checked and sent as SNI (not for an IP literal)
};

/// Certificates and keys, read when the sink is made; throws std::invalid_argument naming the
/// file that cannot be used.
class TlsCredentials {
public:
    explicit TlsCredentials(const TlsSettings& settings);
    ~TlsCredentials();
    TlsCredentials(const TlsCredentials&) = delete;
    TlsCredentials& operator=(const TlsCredentials&) = delete;

    [[nodiscard]] gnutls_certificate_credentials_t get() const noexcept { return credentials_; }

private:
    gnutls_certificate_credentials_t credentials_ = nullptr;
};

/// One client session on a connected socket: non-blocking for the handshake, then blocking with
/// a send timeout (SO_SNDTIMEO).
class TlsStream {
public:
    /// Starts a session on `fd` (the caller keeps the descriptor); `pushed` counts every byte
    /// the session hands to the kernel, handshake included.
    TlsStream(const TlsCredentials& credentials, const TlsSettings& settings, int fd, std::uint64_t& pushed);
    ~TlsStream();
    TlsStream(const TlsStream&) = delete;
    TlsStream& operator=(const TlsStream&) = delete;

    /// Runs the handshake, verification included, and (`await_server_verdict`) the server's
    /// verdict on our certificate (await_verdict), on the non-blocking socket, waiting through
    /// `waiter` until `give_up`; "" or why it failed. A protocol whose first exchange is
    /// answered (RELP's `open`) has its verdict there and need not wait.
    std::string handshake(SocketWaiter& waiter, std::chrono::steady_clock::time_point give_up,
                          bool await_server_verdict) noexcept;
    /// Sends `data[done, size)` as records, advancing `done`; 1 all sent, 0 the send timed out
    /// (call again with the same arguments), -1 the connection is gone.
    int send(const char* data, std::size_t size, std::size_t& done) noexcept;
    /// Reads into `data` what the receiver sent, without waiting; the bytes read, 0 when none
    /// are there yet, -1 when it closed the connection or the session failed.
    ssize_t receive(char* data, std::size_t size) noexcept;
    /// Reads and discards what the receiver sent (session tickets, alerts); false when it
    /// closed the connection or the session failed.
    bool drain_input() noexcept;
    /// The most plaintext one TLS record carries on this session.
    [[nodiscard]] std::size_t max_record() const noexcept { return gnutls_record_get_max_size(session_); }
    /// The last error's text.
    [[nodiscard]] const char* error_text() const noexcept { return gnutls_strerror(last_error_); }

private:
    /// TLS 1.3 lets a client finish its handshake before the server has checked the client's
    /// certificate; a server that refuses it answers with an alert and discards what we sent
    /// meanwhile, although its TCP acknowledges those bytes. So when the server asked for a
    /// certificate, wait for its verdict before any record goes out: a session ticket or other
    /// data (accepted), an alert or a close (refused: why), or nothing until `until` from a
    /// server that sends no tickets (taken as accepted).
    std::string await_verdict(SocketWaiter& waiter, std::chrono::steady_clock::time_point until) noexcept;

    static ssize_t push(gnutls_transport_ptr_t self, const void* data, std::size_t size) noexcept;
    static ssize_t pull(gnutls_transport_ptr_t self, void* data, std::size_t size) noexcept;
    static int pull_timeout(gnutls_transport_ptr_t self, unsigned int ms) noexcept;
    static int on_ticket(gnutls_session_t session, unsigned type, unsigned when, unsigned incoming,
                         const gnutls_datum_t* message) noexcept;

    gnutls_session_t session_ = nullptr;
    int fd_;
    std::uint64_t& pushed_;
    int last_error_ = 0;
    bool ticket_received_ = false;  ///< the server sent a session ticket: it accepted the session
};

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// TLS for the syslog sink (RFC 5425): credentials loaded once when the sink is made, one client
// session per connection. The session writes through a counter of the ciphertext bytes it hands
// the kernel, so the sink can tell which of its records the receiver's TCP acknowledged. GnuTLS
// stays in tls_stream.cpp; a build without it has tls_refused.cpp, which refuses the credentials.
// Internal to sinks/; runs on the syslog sink's own thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
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

class TlsStream;

/// Certificates and keys, read when the sink is made, and the sessions made with them.
class TlsCredentials {
public:
    virtual ~TlsCredentials() = default;

    /// Starts a session on `fd` (the caller keeps the descriptor); `pushed` counts every byte
    /// the session hands to the kernel, handshake included.
    [[nodiscard]] virtual std::unique_ptr<TlsStream> open(const TlsSettings& settings, int fd,
                                                          std::uint64_t& pushed) const = 0;
};

/// Reads the credentials `settings` name; throws std::invalid_argument naming the file that
/// cannot be used, or saying that this build of fieldlog has no TLS.
std::unique_ptr<TlsCredentials> load_tls_credentials(const TlsSettings& settings);

/// One client session on a connected socket: non-blocking for the handshake, then blocking with
/// a send timeout (SO_SNDTIMEO).
class TlsStream {
public:
    virtual ~TlsStream() = default;

    /// Runs the handshake, verification included, and (`await_server_verdict`) the server's
    /// verdict on our certificate, on the non-blocking socket, waiting through `waiter` until
    /// `give_up`; "" or why it failed. A protocol whose first exchange is answered (RELP's
    /// `open`) has its verdict there and need not wait.
    virtual std::string handshake(SocketWaiter& waiter, std::chrono::steady_clock::time_point give_up,
                                  bool await_server_verdict) noexcept = 0;
    /// Sends `data[done, size)` as records, advancing `done`; 1 all sent, 0 the send timed out
    /// (call again with the same arguments), -1 the connection is gone.
    virtual int send(const char* data, std::size_t size, std::size_t& done) noexcept = 0;
    /// Reads into `data` what the receiver sent, without waiting; the bytes read, 0 when none
    /// are there yet, -1 when it closed the connection or the session failed.
    virtual ssize_t receive(char* data, std::size_t size) noexcept = 0;
    /// Reads and discards what the receiver sent (session tickets, alerts); false when it
    /// closed the connection or the session failed.
    bool drain_input() noexcept {
        char scratch[4096];
        ssize_t got;
        while ((got = receive(scratch, sizeof scratch)) > 0) {
        }
        return got == 0;
    }
    /// The most plaintext one TLS record carries on this session.
    [[nodiscard]] virtual std::size_t max_record() const noexcept = 0;
    /// The last error's text.
    [[nodiscard]] virtual const char* error_text() const noexcept = 0;
};

}  // namespace fieldlog::detail

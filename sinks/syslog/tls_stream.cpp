// SPDX-License-Identifier: MIT
// GnuTLS for the syslog sink: a client session whose transport is our own socket, counted.
#include "tls_stream.hpp"

#include <gnutls/gnutls.h>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <stdexcept>

namespace fieldlog::detail {
namespace {

using Clock = std::chrono::steady_clock;

/// The shortest wait for a TLS 1.3 server's verdict on our certificate (see await_verdict): a
/// busy receiver (rsyslog on a loaded machine) was seen to refuse more than 50 ms late.
constexpr std::chrono::milliseconds kLeastVerdictWindow{1000};

bool is_ip_literal(const std::string& host) {
    unsigned char buffer[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

class GnuTlsCredentials final : public TlsCredentials {
public:
    explicit GnuTlsCredentials(const TlsSettings& settings);
    ~GnuTlsCredentials() override;
    GnuTlsCredentials(const GnuTlsCredentials&) = delete;
    GnuTlsCredentials& operator=(const GnuTlsCredentials&) = delete;

    std::unique_ptr<TlsStream> open(const TlsSettings& settings, int fd, std::uint64_t& pushed) const override;

private:
    gnutls_certificate_credentials_t credentials_ = nullptr;
};

class GnuTlsStream final : public TlsStream {
public:
    GnuTlsStream(gnutls_certificate_credentials_t credentials, const TlsSettings& settings, int fd,
                 std::uint64_t& pushed);
    ~GnuTlsStream() override;
    GnuTlsStream(const GnuTlsStream&) = delete;
    GnuTlsStream& operator=(const GnuTlsStream&) = delete;

    std::string handshake(SocketWaiter& waiter, Clock::time_point give_up, bool await_server_verdict) noexcept override;
    int send(const char* data, std::size_t size, std::size_t& done) noexcept override;
    ssize_t receive(char* data, std::size_t size) noexcept override;
    std::size_t max_record() const noexcept override { return gnutls_record_get_max_size(session_); }
    const char* error_text() const noexcept override { return gnutls_strerror(last_error_); }

private:
    /// TLS 1.3 lets a client finish its handshake before the server has checked the client's
    /// certificate; a server that refuses it answers with an alert and discards what we sent
    /// meanwhile, although its TCP acknowledges those bytes. So when the server asked for a
    /// certificate, wait for its verdict before any record goes out: a session ticket or other
    /// data (accepted), an alert or a close (refused: why), or nothing until `until` from a
    /// server that sends no tickets (taken as accepted).
    std::string await_verdict(SocketWaiter& waiter, Clock::time_point until) noexcept;

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

GnuTlsCredentials::GnuTlsCredentials(const TlsSettings& settings) {
    if (const int rc = gnutls_certificate_allocate_credentials(&credentials_); rc < 0) {
        throw std::invalid_argument(std::string("TLS credentials: ") + gnutls_strerror(rc));
    }
    try {
        if (settings.ca_file.empty()) {
            if (settings.verify && gnutls_certificate_set_x509_system_trust(credentials_) <= 0) {
                throw std::invalid_argument("no ca_file and no system trust store to verify the receiver with");
            }
        } else {
            const int count = gnutls_certificate_set_x509_trust_file(credentials_, settings.ca_file.c_str(), GNUTLS_X509_FMT_PEM);
            if (count <= 0) {
                throw std::invalid_argument("ca_file '" + settings.ca_file + "': " +
                                            (count < 0 ? gnutls_strerror(count) : "no certificate in it"));
            }
        }
        if (settings.cert_file.empty() != settings.key_file.empty()) {
            throw std::invalid_argument("cert_file and key_file go together");
        }
        if (!settings.cert_file.empty()) {
            const int rc = gnutls_certificate_set_x509_key_file(credentials_, settings.cert_file.c_str(),
                                                                settings.key_file.c_str(), GNUTLS_X509_FMT_PEM);
            if (rc < 0) {
                throw std::invalid_argument("cert_file '" + settings.cert_file + "' with key_file '" + settings.key_file +
                                            "': " + gnutls_strerror(rc));
            }
        }
    } catch (...) {
        gnutls_certificate_free_credentials(credentials_);
        throw;
    }
}

GnuTlsCredentials::~GnuTlsCredentials() { gnutls_certificate_free_credentials(credentials_); }

std::unique_ptr<TlsStream> GnuTlsCredentials::open(const TlsSettings& settings, int fd, std::uint64_t& pushed) const {
    return std::make_unique<GnuTlsStream>(credentials_, settings, fd, pushed);
}

GnuTlsStream::GnuTlsStream(gnutls_certificate_credentials_t credentials, const TlsSettings& settings, int fd,
                           std::uint64_t& pushed)
    : fd_(fd), pushed_(pushed) {
    last_error_ = gnutls_init(&session_, GNUTLS_CLIENT);
    if (last_error_ < 0) {
        session_ = nullptr;
        return;
    }
    gnutls_set_default_priority(session_);
    gnutls_credentials_set(session_, GNUTLS_CRD_CERTIFICATE, credentials);
    if (!settings.server_name.empty() && !is_ip_literal(settings.server_name)) {
        gnutls_server_name_set(session_, GNUTLS_NAME_DNS, settings.server_name.data(), settings.server_name.size());
    }
    if (settings.verify) gnutls_session_set_verify_cert(session_, settings.server_name.c_str(), 0);
    gnutls_transport_set_ptr(session_, this);
    gnutls_transport_set_push_function(session_, &GnuTlsStream::push);
    gnutls_transport_set_pull_function(session_, &GnuTlsStream::pull);
    gnutls_transport_set_pull_timeout_function(session_, &GnuTlsStream::pull_timeout);
    gnutls_handshake_set_hook_function(session_, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET, GNUTLS_HOOK_POST,
                                       &GnuTlsStream::on_ticket);
}

GnuTlsStream::~GnuTlsStream() {
    if (session_ != nullptr) gnutls_deinit(session_);
}

ssize_t GnuTlsStream::push(gnutls_transport_ptr_t self, const void* data, std::size_t size) noexcept {
    auto* stream = static_cast<GnuTlsStream*>(self);
    const ssize_t sent = ::send(stream->fd_, data, size, MSG_NOSIGNAL);
    if (sent > 0) stream->pushed_ += static_cast<std::uint64_t>(sent);
    if (sent < 0) gnutls_transport_set_errno(stream->session_, errno);
    return sent;
}

ssize_t GnuTlsStream::pull(gnutls_transport_ptr_t self, void* data, std::size_t size) noexcept {
    auto* stream = static_cast<GnuTlsStream*>(self);
    const ssize_t got = ::recv(stream->fd_, data, size, MSG_DONTWAIT);
    if (got < 0) gnutls_transport_set_errno(stream->session_, errno);
    return got;
}

int GnuTlsStream::pull_timeout(gnutls_transport_ptr_t self, unsigned int ms) noexcept {
    pollfd watched{static_cast<GnuTlsStream*>(self)->fd_, POLLIN, 0};
    return ::poll(&watched, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : static_cast<int>(ms));
}

int GnuTlsStream::on_ticket(gnutls_session_t session, unsigned, unsigned, unsigned incoming, const gnutls_datum_t*) noexcept {
    if (incoming != 0) static_cast<GnuTlsStream*>(gnutls_transport_get_ptr(session))->ticket_received_ = true;
    return 0;
}

std::string GnuTlsStream::handshake(SocketWaiter& waiter, Clock::time_point give_up, bool await_server_verdict) noexcept {
    if (session_ == nullptr) return gnutls_strerror(last_error_);
    // No timeout of GnuTLS's own: it would wait in pull_timeout, where closing the sink cannot
    // reach it. GnuTLS returns GNUTLS_E_AGAIN instead, and the waiter keeps the time.
    gnutls_handshake_set_timeout(session_, 0);
    const Clock::time_point start = Clock::now();
    int rc;
    for (;;) {
        rc = gnutls_handshake(session_);
        if (rc >= 0 || gnutls_error_is_fatal(rc) != 0) break;
        if (rc != GNUTLS_E_AGAIN) continue;  // interrupted, a warning alert: go on
        const short events = gnutls_record_get_direction(session_) == 1 ? POLLOUT : POLLIN;
        if (!waiter.await_socket(fd_, events, give_up)) {
            last_error_ = GNUTLS_E_TIMEDOUT;
            return "no answer from the receiver";
        }
    }
    if (rc >= 0) {
        if (!await_server_verdict) return {};
        // The verdict follows our last flight by about one round trip; the handshake took at
        // least one.
        const Clock::time_point done = Clock::now();
        const Clock::duration window = std::max<Clock::duration>(4 * (done - start), kLeastVerdictWindow);
        return await_verdict(waiter, std::min(done + window, give_up));
    }
    last_error_ = rc;
    if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
        gnutls_datum_t text{};
        const unsigned status = gnutls_session_get_verify_cert_status(session_);
        if (gnutls_certificate_verification_status_print(status, gnutls_certificate_type_get(session_), &text, 0) == 0) {
            std::string reason(reinterpret_cast<const char*>(text.data), text.size);
            gnutls_free(text.data);
            return reason;
        }
    }
    return gnutls_strerror(rc);
}

std::string GnuTlsStream::await_verdict(SocketWaiter& waiter, Clock::time_point until) noexcept {
    if (gnutls_protocol_get_version(session_) != GNUTLS_TLS1_3 ||
        gnutls_certificate_client_get_request_status(session_) == 0) {
        return {};
    }
    for (;;) {
        if (ticket_received_) return {};
        if (!waiter.await_socket(fd_, POLLIN, until)) return {};
        char scratch[256];
        const ssize_t got = gnutls_record_recv(session_, scratch, sizeof scratch);
        if (got > 0) return {};  // it speaks to us: it took the session
        if (got == GNUTLS_E_AGAIN || got == GNUTLS_E_INTERRUPTED) continue;
        if (got < 0 && gnutls_error_is_fatal(static_cast<int>(got)) == 0) continue;
        last_error_ = got == 0 ? GNUTLS_E_PREMATURE_TERMINATION : static_cast<int>(got);
        if (got == GNUTLS_E_FATAL_ALERT_RECEIVED) {
            return std::string("the receiver refused the session after the handshake: ") +
                   gnutls_alert_get_name(gnutls_alert_get(session_));
        }
        return std::string("the receiver closed the session after the handshake: ") + gnutls_strerror(last_error_);
    }
}

int GnuTlsStream::send(const char* data, std::size_t size, std::size_t& done) noexcept {
    while (done < size) {
        const ssize_t sent = gnutls_record_send(session_, data + done, size - done);
        if (sent == GNUTLS_E_AGAIN || sent == GNUTLS_E_INTERRUPTED) return 0;
        if (sent < 0) {
            last_error_ = static_cast<int>(sent);
            return -1;
        }
        done += static_cast<std::size_t>(sent);
    }
    return 1;
}

ssize_t GnuTlsStream::receive(char* data, std::size_t size) noexcept {
    for (;;) {
        const ssize_t got = gnutls_record_recv(session_, data, size);
        if (got > 0) return got;
        if (got == GNUTLS_E_AGAIN || got == GNUTLS_E_INTERRUPTED) return 0;
        if (got < 0 && gnutls_error_is_fatal(static_cast<int>(got)) == 0) continue;  // a warning alert, a ticket
        last_error_ = got == 0 ? GNUTLS_E_PREMATURE_TERMINATION : static_cast<int>(got);
        return -1;
    }
}

}  // namespace

std::unique_ptr<TlsCredentials> load_tls_credentials(const TlsSettings& settings) {
    return std::make_unique<GnuTlsCredentials>(settings);
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The syslog sink. The caller's write() copies one octet-counted RFC 5424 frame into a ring
// and returns; the sink's own thread connects, sends, and frees frames once the receiver's TCP
// has acknowledged every byte of them (SIOCOUTQ: bytes the kernel still holds, sent or not).
// After a broken connection it sends again from the first frame not wholly acknowledged. Over
// RELP (plain or inside TLS) the receiver's `rsp` to each frame takes SIOCOUTQ's place. The
// ring's two positions are all the threads share: `head` (the caller's) and `released` (the
// sink thread's).
#include "fieldlog/sinks/syslog_sink.hpp"

#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>

#include "address.hpp"
#include "relp_frame.hpp"
#include "sink_io.hpp"
#include "syslog_header.hpp"
#include "tls_stream.hpp"

namespace fieldlog {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{20};
constexpr milliseconds kOpenTimeout{5000};  // for opening a connection: connect(), TLS handshake, RELP open
constexpr int kSendTimeoutMs = 100;      // a send blocked by a slow receiver returns to look at the clock
constexpr int kAckPollMs = 2;            // while bytes are unacknowledged, SIOCOUTQ is read this often
constexpr std::size_t kTcpChunk = 256 * 1024;   // bytes per sendmsg
constexpr std::size_t kTlsChunk = 8 * 1024;     // whole frames per TLS record: well under its 16 KiB
constexpr std::size_t kMarks = 4096;            // TLS chunks in flight
constexpr std::size_t kSmallestBuffer = 4096;
constexpr std::size_t kRelpWindow = 128;        // RELP frames sent without their rsp (librelp's default)
constexpr std::size_t kRelpStaging = 64 * 1024; // RELP frames copied together into one send
constexpr std::size_t kRelpReceive = 16 * 1024; // the longest answer taken (an open's rsp with its offers)
constexpr std::string_view kRelpOffers = "relp_version=0\nrelp_software=fieldlog\ncommands=syslog";

/// Where a TLS chunk ends, in the connection's byte stream and in the ring.
struct Mark {
    std::uint64_t stream_end = 0;
    std::uint64_t ring_end = 0;
};

/// A RELP frame sent and not yet answered: its transaction number and where it ends in the ring.
struct InFlight {
    std::uint32_t txnr = 0;
    std::uint64_t ring_end = 0;
};

}  // namespace

struct SyslogSink::State final : detail::SocketWaiter {
    State(SyslogSink& sink, SyslogSinkOptions opts);
    ~State();
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    SyslogSink& owner;
    const SyslogSinkOptions options;
    const detail::HostPort where;
    const detail::TlsSettings tls_settings;
    const std::unique_ptr<detail::TlsCredentials> credentials;  ///< TLS only
    detail::SyslogTail tail;
    const std::uint64_t fork_at_start = detail::fork_generation();

    // The ring: frames back to back at absolute positions (modulo capacity).
    const std::size_t capacity;
    const std::unique_ptr<char[]> ring;
    std::atomic<std::uint64_t> head{0};      ///< end of the last whole frame (written by the caller)
    std::atomic<std::uint64_t> released{0};  ///< first frame not known acknowledged (sink thread)
    std::atomic<bool> sleeping{false};       ///< the sink thread waits for `wake_fd`
    std::atomic<bool> closing{false};
    /// When closing began (steady clock ticks): the drain deadline counts from it, not from when
    /// the sink thread, perhaps inside a connection attempt, noticed.
    std::atomic<Clock::rep> closing_since{0};
    int wake_fd = -1;

    std::atomic<std::uint64_t> connects{0};
    std::atomic<std::uint64_t> resent{0};
    std::atomic<std::uint64_t> unanswered{0};  ///< RELP: in_flight_count, for stats()
    std::atomic<std::uint64_t> refused{0};
    detail::ErrorReporter errors;

    // The sink thread's alone.
    int fd = -1;
    std::unique_ptr<detail::TlsStream> session;
    std::uint64_t sent = 0;       ///< ring position of the next byte to send
    std::uint64_t pushed = 0;     ///< bytes this connection handed to the kernel
    std::uint64_t ring_base = 0;  ///< TCP: ring position of the connection's first byte
    std::array<Mark, kMarks> marks{};
    std::size_t first_mark = 0;
    std::size_t mark_count = 0;
    milliseconds backoff = kFirstBackoff;
    Clock::time_point drain_deadline = Clock::time_point::max();
    std::array<char, kTlsChunk> scratch{};  ///< a TLS chunk that wraps around the ring's end

    // RELP, the sink thread's alone: the window of frames awaiting their rsp (answered in the
    // order sent), the next transaction number, what arrived and is not parsed yet.
    const bool relp = options.transport == SyslogTransport::relp || options.transport == SyslogTransport::relp_tls;
    std::array<InFlight, kRelpWindow> in_flight{};
    std::size_t first_in_flight = 0;
    std::size_t in_flight_count = 0;
    std::uint32_t next_txnr = 1;
    bool relp_session_open = false;
    std::array<char, kRelpReceive> received{};
    std::size_t received_size = 0;
    std::array<char, kRelpStaging> staging{};

    std::thread thread;  // last: started when everything above is ready

    void write(const RecordView& record) noexcept;
    void wake() noexcept;

    void run() noexcept;
    void note_closing() noexcept;
    bool connect_once() noexcept;
    bool await_socket(int socket, short events, Clock::time_point until) noexcept override;
    bool give_up_opening(std::string_view operation, std::string_view reason) noexcept;
    bool give_up_opening(std::string_view operation, int error) noexcept {
        char text[128];
        return give_up_opening(operation, std::string_view(::strerror_r(error, text, sizeof text)));  // GNU: returns the text
    }
    bool step() noexcept;
    bool send_tcp(std::uint64_t until) noexcept;
    bool send_tls(std::uint64_t until) noexcept;
    bool send_tls_piece(const char* data, std::size_t size) noexcept;
    void report_session_failure(std::string_view operation) noexcept;
    bool open_relp_session(Clock::time_point give_up) noexcept;
    bool send_relp(std::uint64_t until) noexcept;
    bool send_relp_command(std::string_view command, std::string_view data) noexcept;
    bool send_all(const char* data, std::size_t size) noexcept;
    bool receive_some(char* data, std::size_t size, std::size_t& got) noexcept;
    bool receive_relp() noexcept;
    bool take_relp_frame(const detail::RelpFrame& frame) noexcept;
    void close_relp_session() noexcept;
    [[nodiscard]] int time_left_ms() const noexcept;
    bool wait(int timeout_ms) noexcept;
    bool input_ok() noexcept;
    void update_acked() noexcept;
    void disconnect() noexcept;

    void put(std::uint64_t at, const char* data, std::size_t size) noexcept;
    [[nodiscard]] std::uint64_t frame_end(std::uint64_t start) const noexcept;
    [[nodiscard]] std::uint64_t frames_between(std::uint64_t from, std::uint64_t to) const noexcept;
    [[nodiscard]] bool past_deadline() const noexcept { return Clock::now() >= drain_deadline; }
    void report(std::string_view operation, int error) noexcept { errors.report("syslog", options.address, operation, error); }
    void report(std::string_view operation, std::string_view reason) noexcept {
        errors.report("syslog", options.address, operation, reason);
    }
};

namespace {

bool over_tls(SyslogTransport transport) { return transport == SyslogTransport::tls || transport == SyslogTransport::relp_tls; }

detail::TlsSettings tls_settings_of(const SyslogSinkOptions& options, const detail::HostPort& where) {
    return {.ca_file = options.ca_file,
            .cert_file = options.cert_file,
            .key_file = options.key_file,
            .verify = options.verify,
            .server_name = options.server_name.empty() ? where.host : options.server_name};
}

}  // namespace

SyslogSink::State::State(SyslogSink& sink, SyslogSinkOptions opts)
    : owner(sink),
      options(std::move(opts)),
      where(detail::split_address(options.address)),
      tls_settings(tls_settings_of(options, where)),
      credentials(over_tls(options.transport) ? detail::load_tls_credentials(tls_settings) : nullptr),
      tail(options.hostname, options.app_name),
      capacity(options.buffer_bytes),
      ring(std::make_unique<char[]>(options.buffer_bytes)) {
    if (options.facility < 0 || options.facility > 23) {
        throw std::invalid_argument("facility " + std::to_string(options.facility) + " is not 0-23");
    }
    if (options.buffer_bytes < kSmallestBuffer) {
        throw std::invalid_argument("buffer_bytes " + std::to_string(options.buffer_bytes) + " is under " +
                                    std::to_string(kSmallestBuffer));
    }
    if (!over_tls(options.transport) &&
        (!options.ca_file.empty() || !options.cert_file.empty() || !options.key_file.empty())) {
        throw std::invalid_argument("ca_file, cert_file and key_file are for transports tls and relp-tls");
    }
    detail::Endpoint probe;
    if (const int rc = detail::resolve(where, SOCK_STREAM, 0, probe); rc != 0) {
        throw std::invalid_argument("cannot resolve '" + options.address + "': " + ::gai_strerror(rc));
    }
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) throw std::system_error(errno, std::generic_category(), "eventfd for " + options.address);
    thread = std::thread([this] { run(); });
}

SyslogSink::State::~State() {
    closing_since.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    closing.store(true, std::memory_order_seq_cst);
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t rc = ::write(wake_fd, &one, sizeof one);
    thread.join();
    ::close(wake_fd);
}

// --- the caller's side: copy, publish, wake ------------------------------------------------

void SyslogSink::State::put(std::uint64_t at, const char* data, std::size_t size) noexcept {
    const std::size_t offset = static_cast<std::size_t>(at % capacity);
    const std::size_t first = std::min(size, capacity - offset);
    std::memcpy(ring.get() + offset, data, first);
    std::memcpy(ring.get(), data + first, size - first);
}

void SyslogSink::State::write(const RecordView& record) noexcept {
    if (detail::fork_generation() != fork_at_start) {  // the sink thread stayed in the parent
        owner.count_dropped();
        return;
    }
    std::string_view line(record.bytes.data(), record.bytes.size());
    if (line.ends_with('\n')) line.remove_suffix(1);
    char syslog_head[detail::kSyslogHeadCapacity];
    const char* const head_end = detail::append_syslog_head(syslog_head, options.facility, record.level, record.time);
    const auto head_size = static_cast<std::size_t>(head_end - syslog_head);
    const std::string_view header_tail = tail.last();
    const std::size_t message_size = head_size + header_tail.size() + line.size();
    char length[24];
    char* length_end = std::to_chars(length, length + sizeof length - 1, message_size).ptr;
    *length_end++ = ' ';
    const auto length_size = static_cast<std::size_t>(length_end - length);
    const std::size_t frame_size = length_size + message_size;

    const std::uint64_t at = head.load(std::memory_order_relaxed);
    const std::uint64_t free = capacity - (at - released.load(std::memory_order_acquire));
    if (frame_size > free) {
        owner.count_dropped();
        return;
    }
    put(at, length, length_size);
    put(at + length_size, syslog_head, head_size);
    put(at + length_size + head_size, header_tail.data(), header_tail.size());
    put(at + length_size + head_size + header_tail.size(), line.data(), line.size());
    // seq_cst with `sleeping` (Dekker): either the sink thread sees this frame before it
    // sleeps, or this thread sees it asleep and wakes it.
    head.store(at + frame_size, std::memory_order_seq_cst);
    if (sleeping.load(std::memory_order_seq_cst)) wake();
}

void SyslogSink::State::wake() noexcept {
    if (!sleeping.exchange(false, std::memory_order_seq_cst)) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t rc = ::write(wake_fd, &one, sizeof one);
}

// --- the sink thread -------------------------------------------------------------------------

std::uint64_t SyslogSink::State::frame_end(std::uint64_t start) const noexcept {
    std::uint64_t length = 0;
    std::uint64_t at = start;
    for (;;) {
        const char c = ring[static_cast<std::size_t>(at % capacity)];
        ++at;
        if (c == ' ') break;
        length = length * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return at + length;
}

std::uint64_t SyslogSink::State::frames_between(std::uint64_t from, std::uint64_t to) const noexcept {
    std::uint64_t count = 0;
    for (std::uint64_t at = from; at < to; at = frame_end(at)) ++count;
    return count;
}

void SyslogSink::State::note_closing() noexcept {
    if (closing.load(std::memory_order_acquire) && drain_deadline == Clock::time_point::max()) {
        drain_deadline = Clock::time_point(Clock::duration(closing_since.load(std::memory_order_relaxed))) +
                         options.drain_timeout;
    }
}

void SyslogSink::State::run() noexcept {
    for (;;) {
        note_closing();
        if (released.load(std::memory_order_relaxed) == head.load(std::memory_order_acquire) &&
            drain_deadline != Clock::time_point::max()) {
            break;
        }
        if (past_deadline()) break;
        if (fd < 0) {
            if (connect_once()) continue;
            // The attempt may have outlasted the drain deadline: wait 0 then, not poll()'s forever.
            const auto left = std::chrono::duration_cast<milliseconds>(drain_deadline - Clock::now());
            wait(static_cast<int>(std::clamp(left, milliseconds(0), backoff).count()));
            backoff = std::min(backoff * 2, std::max(options.reconnect_max, kFirstBackoff));
            continue;
        }
        if (!step()) disconnect();
    }
    if (fd >= 0) {
        if (relp && released.load(std::memory_order_relaxed) == head.load(std::memory_order_acquire)) {
            close_relp_session();
        }
        update_acked();
        disconnect();
    }
    const std::uint64_t from = released.load(std::memory_order_relaxed);
    const std::uint64_t lost = frames_between(from, head.load(std::memory_order_acquire));
    if (lost > 0) {
        owner.count_dropped(lost);
        // The sink's counters end with it: say what it dropped, whatever was reported just before.
        char text[96];
        std::snprintf(text, sizeof text, "%llu records not delivered within drain_timeout, counted dropped",
                      static_cast<unsigned long long>(lost));
        errors.report_final("syslog", options.address, "close", text);
    }
    released.store(head.load(std::memory_order_relaxed), std::memory_order_release);
}

bool SyslogSink::State::connect_once() noexcept {
    detail::Endpoint target;
    if (const int rc = detail::resolve(where, SOCK_STREAM, 0, target); rc != 0) {
        owner.count_error();
        report("resolve", ::gai_strerror(rc));
        return false;
    }
    fd = ::socket(target.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        owner.count_error();
        report("socket", errno);
        return false;
    }
    // Non-blocking until the connection is open, so that every wait in the opening is
    // await_socket's, which closing the sink cuts short.
    const Clock::time_point give_up = Clock::now() + kOpenTimeout;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&target.address), target.length) != 0) {
        int error = errno;
        if (error == EINPROGRESS) {
            socklen_t length = sizeof error;
            if (!await_socket(fd, POLLOUT, give_up)) {
                error = ETIMEDOUT;
            } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
                error = errno;
            }
        }
        if (error != 0) return give_up_opening("connect", error);
    }
    pushed = 0;
    if (credentials) {
        session = credentials->open(tls_settings, fd, pushed);
        if (const std::string failure = session->handshake(*this, give_up, !relp); !failure.empty()) {
            return give_up_opening("TLS handshake", failure);
        }
    }
    // Blocking from here, with a send timeout: this thread has nothing else to do while the
    // receiver is slow, and looks at the clock (closing) between timeouts.
    const timeval send_timeout{0, kSendTimeoutMs * 1000};
    if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout) != 0) {
        return give_up_opening("connect", errno);
    }
    ring_base = released.load(std::memory_order_relaxed);
    sent = ring_base;
    first_mark = 0;
    mark_count = 0;
    if (relp && !open_relp_session(give_up)) {
        owner.count_error();
        session.reset();
        ::close(fd);
        fd = -1;
        return false;
    }
    connects.fetch_add(1, std::memory_order_relaxed);
    return true;
}

bool SyslogSink::State::await_socket(int socket, short events, Clock::time_point until) noexcept {
    for (;;) {
        note_closing();
        const auto left = std::chrono::ceil<milliseconds>(std::min(until, drain_deadline) - Clock::now()).count();
        if (left <= 0) return false;
        pollfd watched[2] = {{socket, events, 0}, {wake_fd, POLLIN, 0}};
        if (::poll(watched, 2, static_cast<int>(left)) < 0 && errno != EINTR) return false;
        if ((watched[1].revents & POLLIN) != 0) {  // perhaps closing: note_closing() looks
            std::uint64_t count = 0;
            [[maybe_unused]] const ssize_t rc = ::read(wake_fd, &count, sizeof count);
        }
        if (watched[0].revents != 0) return true;
    }
}

/// Ends a connection attempt that failed at `operation`: counted, reported, the socket closed.
/// Always false.
bool SyslogSink::State::give_up_opening(std::string_view operation, std::string_view reason) noexcept {
    owner.count_error();
    report(operation, past_deadline() ? "the sink closed before the connection was open (drain_timeout)" : reason);
    session.reset();
    ::close(fd);
    fd = -1;
    return false;
}

/// One step on a live connection: send what there is, else wait for acknowledgements or new
/// frames. False when the connection is gone.
bool SyslogSink::State::step() noexcept {
    if (relp) {
        const std::uint64_t until = head.load(std::memory_order_acquire);
        if (sent < until && in_flight_count < kRelpWindow) return send_relp(until);
        // Wait for an answer, or (room in the window) for a new frame.
        sleeping.store(true, std::memory_order_seq_cst);
        if (head.load(std::memory_order_seq_cst) != sent && in_flight_count < kRelpWindow) {
            sleeping.store(false, std::memory_order_relaxed);
            return true;
        }
        const bool alive = wait(time_left_ms());
        sleeping.store(false, std::memory_order_relaxed);
        return alive;
    }
    update_acked();
    const std::uint64_t until = head.load(std::memory_order_acquire);
    if (sent < until && mark_count < kMarks) return credentials ? send_tls(until) : send_tcp(until);
    if (released.load(std::memory_order_relaxed) != sent || mark_count == kMarks) return wait(kAckPollMs);
    if (drain_deadline != Clock::time_point::max()) return true;  // all acknowledged: run() ends
    sleeping.store(true, std::memory_order_seq_cst);
    if (head.load(std::memory_order_seq_cst) != sent) {
        sleeping.store(false, std::memory_order_relaxed);
        return true;
    }
    const bool alive = wait(-1);
    sleeping.store(false, std::memory_order_relaxed);
    return alive;
}

bool SyslogSink::State::send_tcp(std::uint64_t until) noexcept {
    const std::size_t size = static_cast<std::size_t>(std::min<std::uint64_t>(until - sent, kTcpChunk));
    const std::size_t offset = static_cast<std::size_t>(sent % capacity);
    const std::size_t first = std::min(size, capacity - offset);
    iovec parts[2] = {{ring.get() + offset, first}, {ring.get(), size - first}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = size > first ? 2 : 1;
    const ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL);
    if (n > 0) {
        sent += static_cast<std::uint64_t>(n);
        pushed += static_cast<std::uint64_t>(n);
        return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;  // slow receiver
    owner.count_error();
    report("send", n < 0 ? errno : EIO);
    return false;
}

bool SyslogSink::State::send_tls(std::uint64_t until) noexcept {
    // Whole frames, at most one TLS record's worth unless one frame is larger: a record the
    // receiver's TCP did not acknowledge whole was not decrypted, so none of its frames arrived.
    const std::size_t limit = std::min(kTlsChunk, session->max_record());
    std::uint64_t end = frame_end(sent);
    while (end < until) {
        const std::uint64_t next = frame_end(end);
        if (next - sent > limit) break;
        end = next;
    }
    const auto size = static_cast<std::size_t>(end - sent);
    const std::size_t offset = static_cast<std::size_t>(sent % capacity);
    const std::size_t first = std::min(size, capacity - offset);
    bool ok;
    if (first == size) {
        ok = send_tls_piece(ring.get() + offset, size);
    } else if (size <= scratch.size()) {
        std::memcpy(scratch.data(), ring.get() + offset, first);
        std::memcpy(scratch.data() + first, ring.get(), size - first);
        ok = send_tls_piece(scratch.data(), size);
    } else {
        ok = send_tls_piece(ring.get() + offset, first) && send_tls_piece(ring.get(), size - first);
    }
    if (!ok) return false;
    marks[(first_mark + mark_count) % kMarks] = Mark{pushed, end};
    ++mark_count;
    sent = end;
    return true;
}

/// Reports the TLS session's failure at `operation`. Before the answer to RELP's open, the
/// session failing is the receiver's verdict on it (a refused client certificate looks so under
/// TLS 1.3), reported as such.
void SyslogSink::State::report_session_failure(std::string_view operation) noexcept {
    if (relp && !relp_session_open) {
        char reason[256];
        const int size = std::snprintf(reason, sizeof reason, "the receiver closed the session after the handshake: %s",
                                       session->error_text());
        const std::size_t written = size < 0 ? 0 : std::min(static_cast<std::size_t>(size), sizeof reason - 1);
        report("RELP open", std::string_view(reason, written));
    } else {
        report(operation, session->error_text());
    }
}

bool SyslogSink::State::send_tls_piece(const char* data, std::size_t size) noexcept {
    std::size_t done = 0;
    for (;;) {
        const int rc = session->send(data, size, done);
        if (rc > 0) return true;
        if (rc < 0) {
            owner.count_error();
            report_session_failure("TLS send");
            return false;
        }
        if (past_deadline()) {
            owner.count_error();
            report("TLS send", session->error_text());
            return false;
        }
        // A slow receiver: take its rsps meanwhile (RELP, so a window of them cannot stall both
        // sides), or let the caller have the room its TCP freed.
        if (relp) {
            if (!receive_relp()) return false;
        } else {
            update_acked();
        }
    }
}

// --- RELP: the receiver's rsp frees each frame ------------------------------------------------

/// Sends `open` with our offers and waits (until `give_up`, or the drain deadline once closing)
/// for its rsp, which must be 200 and offer the syslog command.
bool SyslogSink::State::open_relp_session(Clock::time_point give_up) noexcept {
    in_flight_count = 0;
    first_in_flight = 0;
    unanswered.store(0, std::memory_order_relaxed);
    received_size = 0;
    relp_session_open = false;
    next_txnr = 1;
    if (!send_relp_command("open", kRelpOffers)) return false;
    while (!relp_session_open) {
        if (!await_socket(fd, POLLIN | POLLRDHUP, give_up)) {
            report("RELP open", past_deadline() ? "the sink closed before the receiver answered (drain_timeout)"
                                                : "no answer from the receiver");
            return false;
        }
        if (!receive_relp()) return false;
    }
    return true;
}

/// Sends one command of our own (open, close) with the next transaction number.
bool SyslogSink::State::send_relp_command(std::string_view command, std::string_view data) noexcept {
    char frame[detail::kRelpHeaderCapacity + 128];
    char* end = detail::append_relp_header(frame, next_txnr, command);
    end = std::to_chars(end, frame + sizeof frame, data.size()).ptr;
    if (!data.empty()) {  // close has no data, and an empty view's data() may be null
        *end++ = ' ';
        std::memcpy(end, data.data(), data.size());
        end += data.size();
    }
    *end++ = '\n';
    next_txnr = detail::next_relp_txnr(next_txnr);
    return send_all(frame, static_cast<std::size_t>(end - frame));
}

/// Sends the frames from `sent` on as `TXNR syslog LEN MSG LF` while the window has room,
/// copied together into `staging`; a frame larger than `staging` goes in pieces.
bool SyslogSink::State::send_relp(std::uint64_t until) noexcept {
    std::size_t staged = 0;
    while (sent < until && in_flight_count < kRelpWindow) {
        const std::uint64_t end = frame_end(sent);
        const auto frame_size = static_cast<std::size_t>(end - sent);
        char header[detail::kRelpHeaderCapacity];
        const auto header_size =
            static_cast<std::size_t>(detail::append_relp_header(header, next_txnr, "syslog") - header);
        const std::size_t whole = header_size + frame_size + 1;
        const std::size_t offset = static_cast<std::size_t>(sent % capacity);
        const std::size_t first = std::min(frame_size, capacity - offset);
        if (staged + whole > staging.size()) {
            if (staged > 0) break;  // send what is staged; the next step goes on from here
            if (!send_all(header, header_size) || !send_all(ring.get() + offset, first) ||
                !send_all(ring.get(), frame_size - first) || !send_all("\n", 1)) {
                return false;
            }
        } else {
            char* out = staging.data() + staged;
            std::memcpy(out, header, header_size);
            std::memcpy(out + header_size, ring.get() + offset, first);
            std::memcpy(out + header_size + first, ring.get(), frame_size - first);
            out[whole - 1] = '\n';
            staged += whole;
        }
        in_flight[(first_in_flight + in_flight_count) % kRelpWindow] = InFlight{next_txnr, end};
        ++in_flight_count;
        next_txnr = detail::next_relp_txnr(next_txnr);
        sent = end;
    }
    unanswered.store(in_flight_count, std::memory_order_relaxed);
    return staged == 0 || send_all(staging.data(), staged);
}

/// Sends all of `data`; while the receiver is slow, takes its answers meanwhile (so a window
/// of them cannot stall both sides). False when the connection is gone or the drain deadline
/// passed.
bool SyslogSink::State::send_all(const char* data, std::size_t size) noexcept {
    if (session) return send_tls_piece(data, size);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && !past_deadline()) {
            if (!receive_relp()) return false;
            continue;
        }
        owner.count_error();
        report("send", n < 0 ? errno : EIO);
        return false;
    }
    return true;
}

/// Reads what the receiver sent and takes every whole frame of it; false when it closed the
/// connection or the session (serverclose), or sent what is not RELP.
bool SyslogSink::State::receive_relp() noexcept {
    for (;;) {
        if (received_size == received.size()) {
            report("receive", "a RELP answer longer than the receive buffer");
            return false;
        }
        std::size_t got = 0;
        if (!receive_some(received.data() + received_size, received.size() - received_size, got)) return false;
        if (got == 0) return true;
        received_size += got;
        std::size_t at = 0;
        for (;;) {
            detail::RelpFrame frame;
            const detail::RelpParse parsed =
                detail::parse_relp_frame(std::string_view(received.data() + at, received_size - at), frame);
            if (parsed.malformed) {
                owner.count_error();
                report("receive", "the receiver's answer is not a RELP frame");
                return false;
            }
            if (parsed.size == 0) break;
            if (!take_relp_frame(frame)) return false;
            at += parsed.size;
        }
        std::memmove(received.data(), received.data() + at, received_size - at);
        received_size -= at;
    }
}

/// Reads into `data` what the receiver sent, without waiting (`got` 0: nothing yet); false,
/// reported, when it closed the connection or the TLS session failed.
bool SyslogSink::State::receive_some(char* data, std::size_t size, std::size_t& got) noexcept {
    got = 0;
    if (session) {
        const ssize_t n = session->receive(data, size);
        if (n < 0) {
            report_session_failure("receive");
            return false;
        }
        got = static_cast<std::size_t>(n);
        return true;
    }
    for (;;) {
        const ssize_t n = ::recv(fd, data, size, MSG_DONTWAIT);
        if (n > 0) {
            got = static_cast<std::size_t>(n);
            return true;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n == 0) {
            report("receive", "the receiver closed the connection");
        } else {
            report("receive", errno);
        }
        return false;
    }
}

/// One frame from the receiver: the rsp to our oldest command, or the serverclose hint.
bool SyslogSink::State::take_relp_frame(const detail::RelpFrame& frame) noexcept {
    if (frame.txnr == 0 && frame.command == "serverclose") {
        report("receive", "the receiver closed the RELP session (serverclose)");
        return false;
    }
    const int status = frame.command == "rsp" ? detail::relp_status(frame.data) : -1;
    if (!relp_session_open) {
        // The one answer awaited before the session is open: the rsp to open, transaction 1.
        if (frame.txnr != 1 || status == -1) {
            report("RELP open", "the receiver's answer is not a rsp to open");
            return false;
        }
        if (status != 200) {
            report("RELP open refused", detail::relp_status_text(frame.data));
            return false;
        }
        if (!detail::relp_offers_command(frame.data, "syslog")) {
            report("RELP open", "the receiver does not offer the syslog command");
            return false;
        }
        relp_session_open = true;
        return true;
    }
    if (in_flight_count == 0 && drain_deadline != Clock::time_point::max()) return true;  // the rsp to close
    const InFlight oldest = in_flight[first_in_flight];
    if (status == -1 || in_flight_count == 0 || frame.txnr != oldest.txnr) {
        owner.count_error();
        report("receive", "a RELP answer out of order or not a rsp");
        return false;
    }
    if (status != 200) {
        owner.count_dropped();
        owner.count_error();
        refused.fetch_add(1, std::memory_order_relaxed);
        report("syslog command refused", detail::relp_status_text(frame.data));
    }
    first_in_flight = (first_in_flight + 1) % kRelpWindow;
    --in_flight_count;
    unanswered.store(in_flight_count, std::memory_order_relaxed);
    released.store(oldest.ring_end, std::memory_order_release);
    backoff = kFirstBackoff;  // the receiver takes records: a later break starts over quickly
    return true;
}

/// Every frame answered: sends close and waits (until the drain deadline) for its rsp or for
/// the receiver to close the connection, so it ends the session as one it finished.
void SyslogSink::State::close_relp_session() noexcept {
    if (!send_relp_command("close", {})) return;
    while (!past_deadline()) {
        pollfd readable{fd, POLLIN | POLLRDHUP, 0};
        if (::poll(&readable, 1, time_left_ms()) <= 0) return;
        const std::size_t before = received_size;
        if (!receive_relp() || received_size == before) return;
    }
}

int SyslogSink::State::time_left_ms() const noexcept {
    if (drain_deadline == Clock::time_point::max()) return -1;
    const auto left = std::chrono::duration_cast<milliseconds>(drain_deadline - Clock::now()).count();
    return static_cast<int>(std::max<std::int64_t>(left, 0));
}

/// Waits up to `timeout_ms` (-1: no limit) for a wake-up or for the receiver to say something;
/// false when the connection (if any) is gone.
bool SyslogSink::State::wait(int timeout_ms) noexcept {
    pollfd watched[2] = {{wake_fd, POLLIN, 0}, {fd, POLLIN | POLLRDHUP, 0}};
    const int ready = ::poll(watched, fd >= 0 ? 2 : 1, timeout_ms);
    if (ready <= 0) return true;
    if ((watched[0].revents & POLLIN) != 0) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t rc = ::read(wake_fd, &count, sizeof count);
    }
    if (fd >= 0 && watched[1].revents != 0) return input_ok();
    return true;
}

/// Reads what the receiver sent; false when it closed the connection.
bool SyslogSink::State::input_ok() noexcept {
    if (relp) return receive_relp();
    if (session) {
        if (session->drain_input()) return true;
        report("receive", session->error_text());
        return false;
    }
    char scratch_in[512];
    for (;;) {
        const ssize_t got = ::recv(fd, scratch_in, sizeof scratch_in, MSG_DONTWAIT);
        if (got > 0) continue;  // a syslog receiver has nothing to say; ignore it
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (got < 0 && errno == EINTR) continue;
        if (got == 0) {
            report("receive", "the receiver closed the connection");
        } else {
            report("receive", errno);
        }
        return false;
    }
}

void SyslogSink::State::update_acked() noexcept {
    if (relp) return;  // freed by the receiver's rsp instead
    int unacknowledged = 0;
    if (::ioctl(fd, SIOCOUTQ, &unacknowledged) != 0) return;
    const std::uint64_t acked = pushed - static_cast<std::uint64_t>(unacknowledged);
    std::uint64_t free_to = released.load(std::memory_order_relaxed);
    if (credentials) {
        while (mark_count > 0 && marks[first_mark].stream_end <= acked) {
            free_to = marks[first_mark].ring_end;
            first_mark = (first_mark + 1) % kMarks;
            --mark_count;
        }
    } else {
        // Plain TCP: the stream is the ring's bytes from ring_base on.
        const std::uint64_t acked_in_ring = ring_base + acked;
        while (free_to < acked_in_ring) {
            const std::uint64_t end = frame_end(free_to);
            if (end > acked_in_ring) break;
            free_to = end;
        }
    }
    if (free_to != released.load(std::memory_order_relaxed)) {
        released.store(free_to, std::memory_order_release);
        backoff = kFirstBackoff;  // the receiver takes records: a later break starts over quickly
    }
}

void SyslogSink::State::disconnect() noexcept {
    update_acked();  // the kernel's last word on what the receiver had
    const std::uint64_t from = released.load(std::memory_order_relaxed);
    resent.fetch_add(frames_between(from, sent), std::memory_order_relaxed);
    sent = from;
    mark_count = 0;
    in_flight_count = 0;
    first_in_flight = 0;
    unanswered.store(0, std::memory_order_relaxed);
    session.reset();
    ::close(fd);
    fd = -1;
}

// --- the Sink ---------------------------------------------------------------------------------

SyslogSink::SyslogSink(SyslogSinkOptions options) : state_(std::make_unique<State>(*this, std::move(options))) {}

SyslogSink::~SyslogSink() = default;

void SyslogSink::write(const RecordView& record) { state_->write(record); }

void SyslogSink::flush() { state_->wake(); }

SinkInfo SyslogSink::info() const { return {.kind = "syslog", .target = state_->options.address}; }

SyslogSinkStats SyslogSink::stats() const noexcept {
    const State& s = *state_;
    const std::uint64_t released = s.released.load(std::memory_order_acquire);  // first: it never passes head
    return {.connects = s.connects.load(std::memory_order_relaxed),
            .resent_records = s.resent.load(std::memory_order_relaxed),
            .buffered_bytes = s.head.load(std::memory_order_acquire) - released,
            .unacknowledged_records = s.unanswered.load(std::memory_order_relaxed),
            .refused_records = s.refused.load(std::memory_order_relaxed)};
}

const SyslogSinkOptions& SyslogSink::options() const noexcept { return state_->options; }

}  // namespace fieldlog

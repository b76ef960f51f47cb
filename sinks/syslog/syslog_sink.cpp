// SPDX-License-Identifier: MIT
// The syslog sink, wiring its parts: the caller's write() copies one octet-counted RFC 5424
// frame into the frame ring (frame_ring.hpp) and wakes the sink's thread if it sleeps
// (syslog_wakeup.hpp); that thread opens the byte stream (byte_stream.hpp), reopening it with a
// backoff after a break, and runs a session on it that sends the ring's frames and frees them
// once the receiver has them: octet counting over TCP or TLS (octet_counted_session.hpp), or
// RELP (relp_session.hpp). After a break it sends again from the first frame not acknowledged.
// Closing the sink gives the receiver until the drain deadline (drain_deadline.hpp).
#include "fieldlog/sinks/syslog_sink.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "base/thread_id.hpp"
#include "byte_stream.hpp"
#include "drain_deadline.hpp"
#include "frame_ring.hpp"
#include "octet_counted_session.hpp"
#include "relp_session.hpp"
#include "sinks/common/address.hpp"
#include "sinks/common/sink_io.hpp"
#include "sinks/common/syslog_header.hpp"
#include "syslog_events.hpp"
#include "syslog_session.hpp"
#include "syslog_wakeup.hpp"
#include "tls_stream.hpp"

namespace fieldlog {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kOpenTimeout{5000};  // for opening a connection: connect(), TLS handshake, RELP open
constexpr std::size_t kSmallestBuffer = 4096;
/// How long a flush after the drain deadline waits for the sink's thread to count what it
/// dropped (every wait of that thread ends at the deadline).
constexpr milliseconds kCountingGrace{1000};

bool over_tls(SyslogTransport transport) { return transport == SyslogTransport::tls || transport == SyslogTransport::relp_tls; }

bool over_relp(SyslogTransport transport) {
    return transport == SyslogTransport::relp || transport == SyslogTransport::relp_tls;
}

detail::TlsSettings tls_settings_of(const SyslogSinkOptions& options, const detail::HostPort& where) {
    return {.ca_file = options.ca_file,
            .cert_file = options.cert_file,
            .key_file = options.key_file,
            .verify = options.verify,
            .server_name = options.server_name.empty() ? where.host : options.server_name};
}

/// The byte stream to the receiver `options` name; throws for TLS files that cannot be used.
detail::ByteStream make_stream(const SyslogSinkOptions& options, const detail::DrainDeadline& deadline,
                               detail::SyslogEvents& events) {
    detail::HostPort where = detail::split_address(options.address);
    detail::TlsSettings settings = tls_settings_of(options, where);
    std::unique_ptr<detail::TlsCredentials> credentials =
        over_tls(options.transport) ? detail::load_tls_credentials(settings) : nullptr;
    return {std::move(where), std::move(settings), std::move(credentials), options.reconnect_max, deadline, events};
}

void check_options(const SyslogSinkOptions& options) {
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
    if (const int rc = detail::resolve(detail::split_address(options.address), SOCK_STREAM, 0, probe); rc != 0) {
        throw std::invalid_argument("cannot resolve '" + options.address + "': " + ::gai_strerror(rc));
    }
}

}  // namespace

struct SyslogSink::State final : detail::SyslogEvents {
    State(SyslogSink& sink, SyslogSinkOptions opts);
    ~State();
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    SyslogSink& owner;
    const SyslogSinkOptions options;
    detail::ErrorReporter errors;
    detail::DrainDeadline deadline{options.drain_timeout};
    detail::ByteStream stream;
    detail::SyslogTail tail;
    const std::uint64_t fork_at_start = detail::fork_generation();
    detail::FrameRing ring;
    detail::SyslogWakeup wakeup;
    const std::unique_ptr<detail::SyslogSession> session;
    std::atomic<std::uint64_t> connects{0};
    std::atomic<std::uint64_t> resent{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<bool> stopping{false};  ///< the destructor: the thread ends once all is acknowledged
    std::atomic<bool> finished{false};  ///< the thread ended: nothing sends any more
    std::mutex progress_mutex;          ///< with `progress`: a closing flush() waits for the thread
    std::condition_variable progress;
    std::thread thread;  // last: started when everything above is ready

    void write(const RecordView& record) noexcept;
    milliseconds begin_close() noexcept;
    void flush() noexcept;

    void run() noexcept;
    void tell_progress() noexcept;
    void sleep_until_deadline() noexcept;
    bool connect_once() noexcept;
    void wait_before_reconnect() noexcept;
    void disconnect() noexcept;
    /// Counts what the ring still holds as dropped and says so: `last_word`, whatever was
    /// reported just before (the thread's end); else at most once a second.
    void drop_undelivered(bool last_word) noexcept;

    void count_error() noexcept override { owner.count_error(); }
    void count_refused() noexcept override;
    void released() noexcept override {
        if (deadline.began()) tell_progress();
    }
    using SyslogEvents::report;
    void report(std::string_view operation, std::string_view reason) noexcept override {
        errors.report("syslog", options.address, operation, reason);
    }

private:
    std::unique_ptr<detail::SyslogSession> make_session();
};

SyslogSink::State::State(SyslogSink& sink, SyslogSinkOptions opts)
    : owner(sink),
      options(std::move(opts)),
      stream(make_stream(options, deadline, *this)),
      tail(options.hostname, options.app_name),
      ring(options.buffer_bytes),
      wakeup(deadline, options.address),
      session(make_session()) {
    check_options(options);
    thread = std::thread([this] { run(); });
}

std::unique_ptr<detail::SyslogSession> SyslogSink::State::make_session() {
    const detail::SessionParts parts{.ring = ring, .stream = stream, .wakeup = wakeup, .deadline = deadline, .events = *this};
    if (over_relp(options.transport)) return std::make_unique<detail::RelpSession>(parts);
    return std::make_unique<detail::OctetCountedSession>(parts);
}

SyslogSink::State::~State() {
    begin_close();
    stopping.store(true, std::memory_order_seq_cst);
    wakeup.wake_for_close();
    thread.join();
    drop_undelivered(false);  // records written after the thread ended
}

milliseconds SyslogSink::State::begin_close() noexcept {
    deadline.begin();
    wakeup.wake_for_close();
    return options.drain_timeout;
}

/// Before the close: wakes the thread. Once closing: waits until the receiver acknowledged
/// everything written before the call, or the deadline passed and the thread counted the rest.
void SyslogSink::State::flush() noexcept {
    wakeup.wake();
    if (!deadline.began()) return;
    const std::uint64_t target = ring.head();
    {
        std::unique_lock lock(progress_mutex);
        progress.wait_until(lock, deadline.due() + kCountingGrace, [&] {
            return ring.released() >= target || finished.load(std::memory_order_acquire);
        });
    }
    // Written after the thread ended (the caller holds mutex(): no write runs meanwhile).
    if (finished.load(std::memory_order_acquire)) drop_undelivered(false);
}

void SyslogSink::State::count_refused() noexcept {
    owner.count_dropped();
    owner.count_error();
    refused.fetch_add(1, std::memory_order_relaxed);
}

// --- the caller's side: copy, publish, wake ------------------------------------------------

void SyslogSink::State::write(const RecordView& record) noexcept {
    if (detail::fork_generation() != fork_at_start) {  // the sink thread stayed in the parent
        owner.count_dropped();
        return;
    }
    std::string_view line(record.bytes.data(), record.bytes.size());
    if (line.ends_with('\n')) line.remove_suffix(1);
    char syslog_head[detail::kSyslogHeadCapacity];
    const char* const head_end = detail::append_syslog_head(syslog_head, options.facility, record.level, record.time);
    const std::string_view head(syslog_head, static_cast<std::size_t>(head_end - syslog_head));
    if (finished.load(std::memory_order_acquire) || !ring.append_frame({head, tail.last(), line})) {
        owner.count_dropped();
        return;
    }
    wakeup.wake();
}

// --- the sink thread -------------------------------------------------------------------------

void SyslogSink::State::run() noexcept {
    detail::name_this_thread("fieldlog-syslog");
    for (;;) {
        deadline.notice();
        if (deadline.is_set() && ring.released(std::memory_order_relaxed) == ring.head()) {
            tell_progress();
            if (stopping.load(std::memory_order_acquire) || deadline.passed()) break;
            sleep_until_deadline();  // all acknowledged: until a record comes or the deadline
            continue;
        }
        if (deadline.passed()) break;
        if (!stream.is_open()) {
            if (!connect_once()) wait_before_reconnect();
            continue;
        }
        if (!session->step()) disconnect();
    }
    if (stream.is_open()) {
        session->finish();
        if (ring.released(std::memory_order_relaxed) != ring.head()) stream.discard_unsent();
        disconnect();
    }
    drop_undelivered(true);
    finished.store(true, std::memory_order_release);
    tell_progress();
}

void SyslogSink::State::tell_progress() noexcept {
    { const std::lock_guard lock(progress_mutex); }  // a flush() between its check and its wait hears it
    progress.notify_all();
}

/// Closing, everything acknowledged: sleeps until a record comes, the destructor, or the deadline.
void SyslogSink::State::sleep_until_deadline() noexcept {
    wakeup.announce_sleep();
    if (ring.head(std::memory_order_seq_cst) == ring.released(std::memory_order_relaxed)) wakeup.wait(-1, deadline.ms_left());
    wakeup.end_sleep();
}

bool SyslogSink::State::connect_once() noexcept {
    const Clock::time_point give_up = Clock::now() + kOpenTimeout;
    if (!stream.open(wakeup, give_up, !session->answers_first_exchange())) return false;
    if (!session->start(give_up)) {
        count_error();
        stream.close();
        return false;
    }
    connects.fetch_add(1, std::memory_order_relaxed);
    return true;
}

void SyslogSink::State::wait_before_reconnect() noexcept {
    // The attempt may have outlasted the drain deadline: wait 0 then, not poll()'s forever.
    const auto left = std::chrono::duration_cast<milliseconds>(deadline.at() - Clock::now());
    wakeup.wait(-1, static_cast<int>(std::clamp(left, milliseconds(0), stream.backoff()).count()));
    stream.back_off();
}

void SyslogSink::State::disconnect() noexcept {
    session->acknowledge();  // the kernel's last word on what the receiver had
    resent.fetch_add(session->rewind(), std::memory_order_relaxed);
    stream.close();
}

/// What the receiver did not acknowledge by the end is counted dropped and said on stderr.
void SyslogSink::State::drop_undelivered(bool last_word) noexcept {
    const std::uint64_t lost = ring.frames_between(ring.released(std::memory_order_relaxed), ring.head());
    if (lost > 0) {
        owner.count_dropped(lost);
        char text[96];
        std::snprintf(text, sizeof text, "%llu records not delivered within drain_timeout, counted dropped",
                      static_cast<unsigned long long>(lost));
        if (last_word) {
            errors.report_final("syslog", options.address, "close", text);
        } else {
            errors.report("syslog", options.address, "close", text);
        }
    }
    ring.release(ring.head(std::memory_order_relaxed));
}

// --- the Sink ---------------------------------------------------------------------------------

SyslogSink::SyslogSink(SyslogSinkOptions options) : state_(std::make_unique<State>(*this, std::move(options))) {}

SyslogSink::~SyslogSink() = default;

void SyslogSink::write(const RecordView& record) { state_->write(record); }

void SyslogSink::flush() { state_->flush(); }

std::chrono::milliseconds SyslogSink::begin_close() { return state_->begin_close(); }

SinkInfo SyslogSink::info() const { return {.kind = "syslog", .target = state_->options.address}; }

SyslogSinkStats SyslogSink::stats() const noexcept {
    const State& s = *state_;
    return {.connects = s.connects.load(std::memory_order_relaxed),
            .resent_records = s.resent.load(std::memory_order_relaxed),
            .buffered_bytes = s.ring.buffered(),
            .unacknowledged_records = s.session->unanswered(),
            .refused_records = s.refused.load(std::memory_order_relaxed)};
}

const SyslogSinkOptions& SyslogSink::options() const noexcept { return state_->options; }

}  // namespace fieldlog

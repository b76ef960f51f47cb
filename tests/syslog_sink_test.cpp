// SPDX-License-Identifier: MIT
// The syslog sink against a TCP receiver in this process: RFC 6587 octet-counted frames of
// RFC 5424 messages around the JSON line; records kept while no receiver listens, dropped and
// counted exactly when the buffer is full; after the receiver comes back every record it had
// not acknowledged arrives, and none it had arrives again. The same against real rsyslog, TCP
// and TLS, restarted under load: tests/sinks/syslog_stream_test.py.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fieldlog/fieldlog.hpp"
#include "support/deliver.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;

namespace {

/// Listens on 127.0.0.1 (on `port`, or any free one), takes one connection at a time and
/// splits what arrives into octet-counted frames. A length field that is not digits and a
/// space, or a connection that ends inside a frame, is recorded as a broken frame.
class FrameReceiver {
public:
    explicit FrameReceiver(int port = 0) : listener_(std::in_place, port), port_(listener_->port()) {
        thread_ = std::thread([this] { serve(); });
    }
    ~FrameReceiver() {
        stop_ = true;
        thread_.join();
    }
    FrameReceiver(const FrameReceiver&) = delete;
    FrameReceiver& operator=(const FrameReceiver&) = delete;

    [[nodiscard]] int port() const noexcept { return port_; }
    [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

    /// Waits until `count` frames arrived (at most 10 s); returns them all.
    std::vector<std::string> wait_for(std::size_t count) {
        std::unique_lock lock(mutex_);
        arrived_.wait_for(lock, 10s, [&] { return frames_.size() >= count; });
        return frames_;
    }
    [[nodiscard]] int broken() {
        const std::lock_guard lock(mutex_);
        return broken_;
    }
    [[nodiscard]] int connections() {
        const std::lock_guard lock(mutex_);
        return connections_;
    }

private:
    void serve() {
        int connection = -1;
        while (!stop_) {
            pollfd waiting{listener_->fd(), POLLIN, 0};
            if (::poll(&waiting, 1, 10) <= 0) continue;
            connection = ::accept4(listener_->fd(), nullptr, nullptr, SOCK_CLOEXEC);
            if (connection < 0) continue;
            {
                const std::lock_guard lock(mutex_);
                ++connections_;
            }
            read_frames(connection);
            if (stop_) break;
            ::close(connection);
            connection = -1;
        }
        // The listener goes first, so the sink cannot connect again in between (the kernel
        // would take that connection into the backlog, for nobody).
        listener_.reset();
        if (connection >= 0) ::close(connection);
    }

    void read_frames(int connection) {
        std::string pending;
        char chunk[65536];
        while (!stop_) {
            pollfd readable{connection, POLLIN, 0};
            if (::poll(&readable, 1, 10) <= 0) continue;
            const ssize_t got = ::recv(connection, chunk, sizeof chunk, 0);
            if (got <= 0) break;
            pending.append(chunk, static_cast<std::size_t>(got));
            std::size_t at = 0;
            std::vector<std::string> complete;
            for (;;) {
                const std::size_t space = pending.find(' ', at);
                if (space == std::string::npos) break;
                const std::string digits = pending.substr(at, space - at);
                if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
                    const std::lock_guard lock(mutex_);
                    ++broken_;
                    return;
                }
                const std::size_t size = std::stoul(digits);
                if (pending.size() < space + 1 + size) break;
                complete.push_back(pending.substr(space + 1, size));
                at = space + 1 + size;
            }
            pending.erase(0, at);
            const std::lock_guard lock(mutex_);
            frames_.insert(frames_.end(), complete.begin(), complete.end());
            arrived_.notify_all();
        }
        if (!pending.empty()) {
            const std::lock_guard lock(mutex_);
            ++broken_;
        }
    }

    std::optional<fieldlog_test::TcpListener> listener_;
    int port_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::condition_variable arrived_;
    std::vector<std::string> frames_;
    int broken_ = 0;
    int connections_ = 0;
    std::thread thread_;
};

/// A loopback port nothing listens on (bound for a moment, then let go).
int free_port() {
    const int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ::bind(probe, reinterpret_cast<sockaddr*>(&address), length);
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(probe);
    return ntohs(address.sin_port);
}

/// Waits until the sink's receiver acknowledged everything it was given (at most 10 s).
bool wait_until_acknowledged(const fieldlog::SyslogSink& sink) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (sink.stats().buffered_bytes > 0) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

/// The JSON line `{"seq":N}` as a record at a fixed time.
struct NumberedRecord {
    std::string line;
    fieldlog::RecordView view;
    explicit NumberedRecord(int seq, fieldlog::Level level = fieldlog::Level::info)
        : line("{\"seq\":" + std::to_string(seq) + "}\n"), view{{line.data(), line.size()}, level, fieldlog_test::fixed_clock()} {}
};

std::string body_of(const std::string& message) {
    const std::size_t dashes = message.find(" - - ");
    return dashes == std::string::npos ? std::string{} : message.substr(dashes + 5);
}

/// True when `frame` is `<PRI>1 <UTC time to the microsecond> web_1 checkout <pid> - - <body>`.
/// (Not std::regex: GCC 12's <regex> trips -Wmaybe-uninitialized in the sanitizer build.)
bool has_header(std::string_view frame) {
    const auto digits_at = [](std::string_view text, std::size_t from) {
        std::size_t end = from;
        while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
        return end - from;
    };
    if (frame.empty() || frame[0] != '<') return false;
    const std::size_t pri = digits_at(frame, 1);
    if (pri == 0 || frame.size() <= pri + 1 || frame[pri + 1] != '>') return false;
    std::string_view rest = frame.substr(pri + 2);
    constexpr std::string_view shape = "1 ####-##-##T##:##:##.######Z web_1 checkout ";  // '#': a digit
    if (rest.size() < shape.size()) return false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == '#' ? digits_at(rest, i) == 0 : rest[i] != shape[i]) return false;
    }
    rest.remove_prefix(shape.size());
    const std::size_t pid = digits_at(rest, 0);
    return pid > 0 && rest.substr(pid).starts_with(" - - ");
}

constexpr auto kUnansweredDrain = 200ms;

/// A TLS sink to `listener`, which takes the connection and never answers: the ClientHello
/// waits there, and the handshake's own timeout (5 s) would outlast kUnansweredDrain by far.
fieldlog::SyslogSinkOptions unanswered_tls(const fieldlog_test::TcpListener& listener) {
    return {.address = "127.0.0.1:" + std::to_string(listener.port()),
            .transport = fieldlog::SyslogTransport::tls,
            .verify = false,
            .drain_timeout = kUnansweredDrain};
}

/// The first connection to `listener` (waited for up to 10 s; fd() -1 if none came), accepted and
/// never read; closed with the object.
class Accepted {
public:
    explicit Accepted(const fieldlog_test::TcpListener& listener) {
        pollfd waiting{listener.fd(), POLLIN, 0};
        if (::poll(&waiting, 1, 10'000) == 1) fd_ = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    }
    ~Accepted() {
        if (fd_ >= 0) ::close(fd_);
    }
    Accepted(const Accepted&) = delete;
    Accepted& operator=(const Accepted&) = delete;
    [[nodiscard]] int fd() const noexcept { return fd_; }

private:
    int fd_ = -1;
};

}  // namespace

TEST_CASE("syslog over TCP: each record is one octet-counted RFC 5424 message around its JSON line", "[syslog][concurrent]") {
    FrameReceiver receiver;
    fieldlog::SyslogSink sink({.address = receiver.address(), .facility = 3, .app_name = "checkout", .hostname = "web 1"});
    const fieldlog::Level levels[] = {fieldlog::Level::debug, fieldlog::Level::info, fieldlog::Level::warn,
                                      fieldlog::Level::error, fieldlog::Level::fatal};
    for (int i = 0; i < 5; ++i) {
        const NumberedRecord record(i, levels[i]);
        fieldlog_test::deliver(sink, record.view);
    }
    const std::vector<std::string> frames = receiver.wait_for(5);
    REQUIRE(frames.size() == 5);
    const char* const pri[] = {"<31>", "<30>", "<28>", "<27>", "<26>"};  // facility 3 × 8 + severity
    for (int i = 0; i < 5; ++i) {
        CAPTURE(frames[static_cast<std::size_t>(i)]);
        CHECK(frames[static_cast<std::size_t>(i)].starts_with(pri[i]));
        CHECK(has_header(frames[static_cast<std::size_t>(i)]));
        CHECK(body_of(frames[static_cast<std::size_t>(i)]) == "{\"seq\":" + std::to_string(i) + "}");
    }
    CHECK(wait_until_acknowledged(sink));
    CHECK(receiver.broken() == 0);
    CHECK(sink.counters().dropped == 0);
    CHECK(sink.stats().connects == 1);
}

TEST_CASE("syslog: without a receiver the buffer keeps what fits, drops the rest counted, and sends it when one comes",
          "[syslog][concurrent]") {
    const int port = free_port();
    constexpr std::size_t kBuffer = 4096;
    fieldlog::SyslogSink sink({.address = "127.0.0.1:" + std::to_string(port),
                               .buffer_bytes = kBuffer,
                               .reconnect_max = 20ms,
                               .app_name = "a",
                               .hostname = "h"});
    // Every frame has the same size: seq 100..999 have 3 digits.
    const NumberedRecord first(100);
    fieldlog_test::deliver(sink, first.view);
    const std::uint64_t frame = sink.stats().buffered_bytes;
    REQUIRE(frame > 0);
    const std::uint64_t fits = kBuffer / frame;
    for (int seq = 101; seq < 600; ++seq) {
        const NumberedRecord record(seq);
        fieldlog_test::deliver(sink, record.view);
    }
    CHECK(sink.counters().records == 500);
    CHECK(sink.counters().dropped == 500 - fits);
    CHECK(sink.stats().buffered_bytes == fits * frame);

    FrameReceiver receiver(port);
    const std::vector<std::string> frames = receiver.wait_for(fits);
    CHECK(wait_until_acknowledged(sink));
    REQUIRE(frames.size() == fits);
    for (std::size_t i = 0; i < fits; ++i) CHECK(body_of(frames[i]) == "{\"seq\":" + std::to_string(100 + i) + "}");
    CHECK(receiver.broken() == 0);
}

TEST_CASE("syslog: after the receiver restarts, what it acknowledged is not sent again and the rest arrives once",
          "[syslog][concurrent]") {
    const int port = free_port();
    fieldlog::SyslogSink sink({.address = "127.0.0.1:" + std::to_string(port), .reconnect_max = 20ms});
    std::vector<std::string> before;
    {
        FrameReceiver receiver(port);
        for (int seq = 0; seq < 200; ++seq) {
            const NumberedRecord record(seq);
            fieldlog_test::deliver(sink, record.view);
        }
        before = receiver.wait_for(200);
        REQUIRE(wait_until_acknowledged(sink));
    }  // the receiver closes its connection and stops listening
    for (int seq = 200; seq < 400; ++seq) {
        const NumberedRecord record(seq);
        fieldlog_test::deliver(sink, record.view);
    }
    FrameReceiver restarted(port);
    const std::vector<std::string> after = restarted.wait_for(200);
    CHECK(wait_until_acknowledged(sink));
    REQUIRE(before.size() == 200);
    REQUIRE(after.size() == 200);
    for (int i = 0; i < 200; ++i) {
        CHECK(body_of(before[static_cast<std::size_t>(i)]) == "{\"seq\":" + std::to_string(i) + "}");
        CHECK(body_of(after[static_cast<std::size_t>(i)]) == "{\"seq\":" + std::to_string(200 + i) + "}");
    }
    CHECK(sink.counters().dropped == 0);
    CHECK(sink.stats().connects == 2);
    CHECK(sink.stats().resent_records == 0);  // all of the first connection's records were acknowledged
}

TEST_CASE("syslog: closing a sink whose receiver is gone waits drain_timeout, no longer, and says what it dropped",
          "[syslog][concurrent]") {
    const fieldlog_test::TempDir dir;
    const std::string errors = dir.file("stderr");
    std::chrono::steady_clock::duration waited{};
    {
        const fieldlog_test::StderrTo to(errors);
        auto sink = std::make_unique<fieldlog::SyslogSink>(fieldlog::SyslogSinkOptions{
            .address = "127.0.0.1:" + std::to_string(free_port()), .reconnect_max = 20ms, .drain_timeout = 100ms});
        for (int seq = 0; seq < 10; ++seq) {
            const NumberedRecord record(seq);
            fieldlog_test::deliver(*sink, record.view);
        }
        CHECK(sink->stats().buffered_bytes > 0);
        const auto refused_by = std::chrono::steady_clock::now() + 10s;
        while (sink->counters().errors == 0 && std::chrono::steady_clock::now() < refused_by) std::this_thread::sleep_for(1ms);
        CHECK(sink->counters().errors > 0);  // connection refused, at least once: reported just before the close
        const auto started = std::chrono::steady_clock::now();
        sink.reset();
        waited = std::chrono::steady_clock::now() - started;
    }
    CHECK(waited >= 100ms);
    CHECK(waited < 2s);
    CHECK_THAT(fieldlog_test::read_file(errors),
               Catch::Contains("close: 10 records not delivered within drain_timeout, counted dropped"));
}

TEST_CASE("syslog: closing a TLS sink in a handshake its receiver never answers ends at drain_timeout, its records counted dropped",
          "[syslog][concurrent]") {
    const fieldlog_test::TcpListener listener;
    const fieldlog_test::TempDir dir;
    const std::string errors = dir.file("stderr");
    std::chrono::steady_clock::duration waited{};
    {
        const fieldlog_test::StderrTo to(errors);
        auto sink = std::make_unique<fieldlog::SyslogSink>(unanswered_tls(listener));
        for (int seq = 0; seq < 3; ++seq) {
            const NumberedRecord record(seq);
            fieldlog_test::deliver(*sink, record.view);
        }
        const Accepted connection(listener);
        REQUIRE(connection.fd() >= 0);
        const auto started = std::chrono::steady_clock::now();
        sink.reset();  // the handshake's own timeout is 5 s
        waited = std::chrono::steady_clock::now() - started;
    }
    CHECK(waited >= kUnansweredDrain);
    CHECK(waited < 2s);
    CHECK_THAT(fieldlog_test::read_file(errors),
               Catch::Contains("close: 3 records not delivered within drain_timeout, counted dropped"));
}

TEST_CASE("syslog: a configuration without a TLS sink stuck in its handshake is in force at drain_timeout",
          "[syslog][concurrent]") {
    const fieldlog_test::TcpListener listener;
    const fieldlog_test::TempDir dir;
    const std::string errors = dir.file("stderr");
    std::chrono::steady_clock::duration waited{};
    {
        const fieldlog_test::StderrTo to(errors);
        fieldlog::configure({.sinks = {{.target = unanswered_tls(listener)}}});
        const fieldlog::Logger log = fieldlog::get("close");
        for (int seq = 0; seq < 4; ++seq) log.info("record", {{"seq", seq}});
        const Accepted connection(listener);
        REQUIRE(connection.fd() >= 0);
        const auto started = std::chrono::steady_clock::now();
        fieldlog_test::release_sinks();
        waited = std::chrono::steady_clock::now() - started;
    }
    CHECK(waited >= kUnansweredDrain);
    CHECK(waited < 2s);
    CHECK_THAT(fieldlog_test::read_file(errors),
               Catch::Contains("close: 4 records not delivered within drain_timeout, counted dropped"));
}

TEST_CASE("syslog: bad options are refused when the sink is made", "[syslog]") {
    CHECK_THROWS_WITH(fieldlog::SyslogSink({.address = "127.0.0.1"}), Catch::Contains("has no :port"));
    CHECK_THROWS_WITH(fieldlog::SyslogSink({.address = "127.0.0.1:1", .buffer_bytes = 100}),
                      Catch::Contains("buffer_bytes 100 is under 4096"));
    CHECK_THROWS_WITH(fieldlog::SyslogSink({.address = "127.0.0.1:1", .facility = 24}), Catch::Contains("facility 24"));
    CHECK_THROWS_WITH(fieldlog::SyslogSink({.address = "127.0.0.1:1", .transport = fieldlog::SyslogTransport::tls,
                                            .ca_file = "/nonexistent/ca.pem"}),
                      Catch::Contains("ca_file '/nonexistent/ca.pem'"));
    CHECK_THROWS_WITH(fieldlog::configure({.sinks = {{.target = fieldlog::SyslogSinkOptions{.address = "[::1"}}}}),
                      Catch::StartsWith("sinks[0]: "));
}

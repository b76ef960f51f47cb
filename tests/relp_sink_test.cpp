// SPDX-License-Identifier: MIT
// The syslog sink over RELP against a RELP receiver in this process: each record is one
// `syslog` command, numbered from 2 after `open`, freed by its `rsp 200`; a receiver that
// refuses `open` gets nothing and the ring keeps the records; a `rsp 500` drops that record,
// counted; a `serverclose` in the middle of the window has every unanswered record sent again,
// once, and none that was answered; closing the sink sends `close`, and waits no longer than
// drain_timeout for an `open` never answered. The same against real
// rsyslog imrelp, restarted under load: tests/sinks/relp_stream_test.py.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fieldlog/fieldlog.hpp"
#include "support/deliver.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;

namespace {

/// How the receiver answers.
struct RelpPolicy {
    bool refuse_open = false;      ///< answer open with "500" until accept_opens()
    bool ignore_open = false;      ///< never answer open
    int refuse_seq = -1;           ///< answer the syslog command of this record with "500"
    std::size_t close_after = 0;   ///< first connection: once this many syslog commands arrived,
    std::size_t answer_first = 0;  ///< answer only this many of them, then serverclose and close
};

/// Listens on 127.0.0.1, takes one connection at a time and speaks RELP as imrelp does:
/// `rsp` to open (offering the syslog command), to each syslog command, to close. Records the
/// body of every syslog command and whether each transaction number was the one expected.
class RelpReceiver {
public:
    explicit RelpReceiver(RelpPolicy policy) : policy_(policy) {
        thread_ = std::thread([this] { serve(); });
    }
    ~RelpReceiver() {
        stop_ = true;
        thread_.join();
    }
    RelpReceiver(const RelpReceiver&) = delete;
    RelpReceiver& operator=(const RelpReceiver&) = delete;

    [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(listener_.port()); }
    void accept_opens() { refuse_open_ = false; }

    /// Waits (at most 10 s) until `condition()` holds, under the receiver's lock.
    template <class Condition>
    bool wait_until(Condition condition) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, 10s, [&] { return condition(*this); });
    }

    // Read under the lock (in wait_until) or after the sink is gone.
    std::vector<std::vector<std::string>> bodies;  ///< per connection, the syslog bodies in order
    int opens = 0;
    int closes = 0;
    int bad_txnrs = 0;
    int bad_frames = 0;

private:
    void serve() {
        while (!stop_) {
            pollfd waiting{listener_.fd(), POLLIN, 0};
            if (::poll(&waiting, 1, 10) <= 0) continue;
            const int connection = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
            if (connection < 0) continue;
            {
                const std::lock_guard lock(mutex_);
                bodies.emplace_back();
            }
            converse(connection, bodies.size() == 1);
            ::close(connection);
        }
    }

    void answer(int connection, long txnr, std::string_view data) {
        std::string frame = std::to_string(txnr);
        frame.append(" rsp ").append(std::to_string(data.size()));
        if (!data.empty()) frame.append(" ").append(data);
        frame.append("\n");
        [[maybe_unused]] const ssize_t sent = ::send(connection, frame.data(), frame.size(), MSG_NOSIGNAL);
    }

    /// One connection: parse frames, answer by the policy. Returns when the peer or we close.
    void converse(int connection, bool first) {
        std::string pending;
        std::vector<long> unanswered;  // txnrs held back for a serverclose
        long expected = 1;
        char chunk[65536];
        while (!stop_) {
            pollfd readable{connection, POLLIN, 0};
            if (::poll(&readable, 1, 10) <= 0) continue;
            const ssize_t got = ::recv(connection, chunk, sizeof chunk, 0);
            if (got <= 0) return;
            pending.append(chunk, static_cast<std::size_t>(got));
            for (;;) {
                // TXNR SP COMMAND SP DATALEN [SP DATA] LF
                const std::size_t first_space = pending.find(' ');
                const std::size_t second_space =
                    first_space == std::string::npos ? first_space : pending.find(' ', first_space + 1);
                if (second_space == std::string::npos) break;
                std::size_t length_end = second_space + 1;
                while (length_end < pending.size() && pending[length_end] >= '0' && pending[length_end] <= '9') ++length_end;
                if (length_end == pending.size()) break;
                const long txnr = std::stol(pending.substr(0, first_space));
                const std::string command = pending.substr(first_space + 1, second_space - first_space - 1);
                const std::size_t size = std::stoul(pending.substr(second_space + 1, length_end - second_space - 1));
                const std::size_t data_at = size > 0 ? length_end + 1 : length_end;
                if (pending.size() < data_at + size + 1) break;
                const std::string data = pending.substr(data_at, size);
                const bool framed = pending[data_at + size] == '\n' && (size == 0 || pending[length_end] == ' ');
                pending.erase(0, data_at + size + 1);

                const std::unique_lock lock(mutex_);
                if (!framed) ++bad_frames;
                if (txnr != expected) ++bad_txnrs;
                expected = txnr + 1;
                if (command == "open") {
                    ++opens;
                    if (!policy_.ignore_open) answer(connection, txnr,
                           refuse_open_ ? "500 not today" : "200 OK\nrelp_version=0\nrelp_software=test\ncommands=syslog");
                } else if (command == "syslog") {
                    const std::size_t dashes = data.find(" - - ");
                    const std::string body = dashes == std::string::npos ? data : data.substr(dashes + 5);
                    bodies.back().push_back(body);
                    if (first && policy_.close_after > 0) {
                        unanswered.push_back(txnr);
                        if (unanswered.size() == policy_.close_after) {
                            for (std::size_t i = 0; i < policy_.answer_first; ++i) answer(connection, unanswered[i], "200 OK");
                            const std::string hint = "0 serverclose 0\n";
                            [[maybe_unused]] const ssize_t sent = ::send(connection, hint.data(), hint.size(), MSG_NOSIGNAL);
                            changed_.notify_all();
                            return;
                        }
                    } else {
                        const bool refuse = body == "{\"seq\":" + std::to_string(policy_.refuse_seq) + "}";
                        answer(connection, txnr, refuse ? "500 refused" : "200 OK");
                    }
                } else if (command == "close") {
                    ++closes;
                    answer(connection, txnr, "");
                    changed_.notify_all();
                    return;
                } else {
                    ++bad_frames;
                }
                changed_.notify_all();
            }
        }
    }

    const RelpPolicy policy_;
    std::atomic<bool> refuse_open_{policy_.refuse_open};
    const fieldlog_test::TcpListener listener_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::condition_variable changed_;
    std::thread thread_;
};

/// The JSON line `{"seq":N}` as a record at a fixed time.
struct NumberedRecord {
    std::string line;
    fieldlog::RecordView view;
    explicit NumberedRecord(int seq)
        : line("{\"seq\":" + std::to_string(seq) + "}\n"),
          view{{line.data(), line.size()}, fieldlog::Level::info, fieldlog_test::fixed_clock()} {}
};

void deliver_numbered(fieldlog::SyslogSink& sink, int from, int to) {
    for (int seq = from; seq < to; ++seq) {
        const NumberedRecord record(seq);
        fieldlog_test::deliver(sink, record.view);
    }
}

std::vector<std::string> numbered(int from, int to) {
    std::vector<std::string> bodies;
    for (int seq = from; seq < to; ++seq) bodies.push_back("{\"seq\":" + std::to_string(seq) + "}");
    return bodies;
}

/// Waits until the sink's receiver answered everything it was given (at most 10 s).
bool wait_until_answered(const fieldlog::SyslogSink& sink) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (sink.stats().buffered_bytes > 0) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

fieldlog::SyslogSinkOptions relp_to(const RelpReceiver& receiver) {
    return {.address = receiver.address(), .transport = fieldlog::SyslogTransport::relp, .reconnect_max = 20ms};
}

}  // namespace

TEST_CASE("relp: each record one syslog command, answered and sent once, more than a window of them, closing sends close",
          "[syslog][relp][concurrent]") {
    RelpReceiver receiver({});
    auto sink = std::make_unique<fieldlog::SyslogSink>(relp_to(receiver));
    deliver_numbered(*sink, 0, 300);  // the window is 128
    REQUIRE(wait_until_answered(*sink));
    const fieldlog::SyslogSinkStats stats = sink->stats();
    CHECK(stats.connects == 1);
    CHECK(stats.unacknowledged_records == 0);
    CHECK(stats.resent_records == 0);
    CHECK(stats.refused_records == 0);
    CHECK(sink->counters().dropped == 0);
    sink.reset();
    REQUIRE(receiver.wait_until([](const RelpReceiver& r) { return r.closes == 1; }));
    REQUIRE(receiver.bodies.size() == 1);
    CHECK(receiver.bodies[0] == numbered(0, 300));
    CHECK(receiver.opens == 1);
    CHECK(receiver.bad_txnrs == 0);  // 1 for open, then 2, 3, … per command
    CHECK(receiver.bad_frames == 0);
}

TEST_CASE("relp: a receiver that refuses open gets no record, the ring keeps them until one accepts",
          "[syslog][relp][concurrent]") {
    RelpReceiver receiver({.refuse_open = true});
    fieldlog::SyslogSink sink(relp_to(receiver));
    deliver_numbered(sink, 0, 10);
    REQUIRE(receiver.wait_until([](const RelpReceiver& r) { return r.opens >= 2; }));  // refused, then tried again
    CHECK(sink.stats().connects == 0);
    CHECK(sink.stats().buffered_bytes > 0);
    CHECK(sink.counters().errors >= 1);
    receiver.accept_opens();
    REQUIRE(wait_until_answered(sink));
    CHECK(sink.stats().connects == 1);
    CHECK(sink.counters().dropped == 0);
    REQUIRE(receiver.wait_until([](const RelpReceiver& r) { return !r.bodies.empty() && r.bodies.back().size() == 10; }));
    CHECK(receiver.bodies.back() == numbered(0, 10));
    for (std::size_t i = 0; i + 1 < receiver.bodies.size(); ++i) CHECK(receiver.bodies[i].empty());
}

TEST_CASE("relp: a record answered rsp 500 is dropped, counted and refused, the others arrive once",
          "[syslog][relp][concurrent]") {
    RelpReceiver receiver({.refuse_seq = 5});
    fieldlog::SyslogSink sink(relp_to(receiver));
    deliver_numbered(sink, 0, 10);
    REQUIRE(wait_until_answered(sink));
    CHECK(sink.counters().dropped == 1);
    CHECK(sink.counters().errors >= 1);
    CHECK(sink.stats().refused_records == 1);
    CHECK(sink.stats().resent_records == 0);
    CHECK(sink.stats().connects == 1);
    REQUIRE(receiver.wait_until([](const RelpReceiver& r) { return r.bodies.size() == 1 && r.bodies[0].size() == 10; }));
    CHECK(receiver.bodies[0] == numbered(0, 10));  // the refused one arrived, once, and was not sent again
}

TEST_CASE("relp: a serverclose in the middle of the window: what was answered is not sent again, the rest is, once",
          "[syslog][relp][concurrent]") {
    RelpReceiver receiver({.close_after = 100, .answer_first = 40});
    fieldlog::SyslogSink sink(relp_to(receiver));
    deliver_numbered(sink, 0, 100);  // all in one window: sent before any answer
    REQUIRE(wait_until_answered(sink));
    CHECK(sink.stats().connects == 2);
    CHECK(sink.stats().resent_records == 60);
    CHECK(sink.counters().dropped == 0);
    REQUIRE(receiver.wait_until([](const RelpReceiver& r) { return r.bodies.size() == 2 && r.bodies[1].size() == 60; }));
    CHECK(receiver.bodies[0] == numbered(0, 100));
    CHECK(receiver.bodies[1] == numbered(40, 100));
    CHECK(receiver.bad_txnrs == 0);  // the new session numbers from 1 again
}

TEST_CASE("relp: closing a sink whose receiver never answers open waits drain_timeout, no longer",
          "[syslog][relp][concurrent]") {
    RelpReceiver receiver({.ignore_open = true});
    fieldlog::SyslogSinkOptions options = relp_to(receiver);
    options.drain_timeout = 100ms;
    auto sink = std::make_unique<fieldlog::SyslogSink>(options);
    deliver_numbered(*sink, 0, 10);
    REQUIRE(receiver.wait_until([](const RelpReceiver& r) { return r.opens >= 1; }));
    const auto started = std::chrono::steady_clock::now();
    sink.reset();  // the open's own timeout is 5 s
    const auto waited = std::chrono::steady_clock::now() - started;
    CHECK(waited >= 100ms);
    CHECK(waited < 2s);
}

TEST_CASE("relp: bad options are refused when the sink is made", "[syslog][relp]") {
    const auto relp = [](std::string address) {
        return fieldlog::SyslogSinkOptions{.address = std::move(address), .transport = fieldlog::SyslogTransport::relp};
    };
    CHECK_THROWS_WITH(fieldlog::SyslogSink(relp("127.0.0.1")), Catch::Contains("has no :port"));
    CHECK_THROWS_WITH(fieldlog::SyslogSink(relp("127.0.0.1:99999")), Catch::Contains("port 99999 is not in 1-65535"));
    CHECK_THROWS_WITH(fieldlog::SyslogSink(relp("127.0.0.1:no-such-service")), Catch::Contains("cannot resolve"));
    fieldlog::SyslogSinkOptions with_ca = relp("127.0.0.1:2514");
    with_ca.ca_file = "ca.pem";
    CHECK_THROWS_WITH(fieldlog::SyslogSink(with_ca), Catch::Contains("for transports tls and relp-tls"));
    with_ca.transport = fieldlog::SyslogTransport::relp_tls;  // its TLS files are read when the sink is made
    CHECK_THROWS_WITH(fieldlog::SyslogSink(with_ca), Catch::Contains("ca_file 'ca.pem'"));
}

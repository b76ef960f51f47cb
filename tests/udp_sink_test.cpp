// SPDX-License-Identifier: MIT
// The UDP sink against an in-test receiver on loopback: framing (JSON, RFC 5424 headers),
// batches, the oversize rule, a missing receiver, a receiver that never reads, a full send
// buffer and other send errors, re-resolving a host name that moves, and 200,000 records from
// 4 threads over IPv4 and IPv6 with every datagram byte-exact and every record accounted for.
//
// NOTE: this file defines getaddrinfo(3) for the whole test binary, so that one made-up name
// (kMovingHost) resolves to whatever the test says; every other name goes to the real resolver.
// It defines sendmmsg(2) too (and sendmsg(2) in the portable core, which sends with that), so
// that a test can make sends fail (SendFault); unarmed, every call goes to the real one.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/platform.hpp"
#include "support/deliver.hpp"
#include "support/test_support.hpp"

using fieldlog_test::deliver;
using fieldlog_test::jsonl_errors;
using fieldlog_test::read_file;
using fieldlog_test::StderrTo;
using fieldlog_test::TempDir;
using fieldlog_test::wait_until;
using namespace std::chrono_literals;

namespace {

/// A UDP socket on a loopback address (IPv4: `ipv4`, any of 127.0.0.0/8) with a thread that keeps
/// every datagram it receives.
class Receiver {
public:
    explicit Receiver(int family, int port = 0, const char* ipv4 = "127.0.0.1") : family_(family), ipv4_(ipv4) {
        fd_ = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) return;
        const int big = 64 * 1024 * 1024;  // hold a burst while the thread drains (root may exceed rmem_max)
        if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0) {
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        }
        sockaddr_storage address{};
        socklen_t length = 0;
        if (family == AF_INET) {
            auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
            v4->sin_family = AF_INET;
            v4->sin_port = htons(static_cast<std::uint16_t>(port));
            ::inet_pton(AF_INET, ipv4_.c_str(), &v4->sin_addr);
            length = sizeof *v4;
        } else {
            auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(static_cast<std::uint16_t>(port));
            v6->sin6_addr = in6addr_loopback;
            length = sizeof *v6;
        }
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0) {
            ::close(fd_);
            fd_ = -1;
            return;
        }
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&address)->sin_port
                                        : reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
        const timeval poll{0, 20000};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &poll, sizeof poll);
        thread_ = std::thread([this] { drain(); });
    }
    ~Receiver() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        if (fd_ >= 0) ::close(fd_);
    }
    Receiver(const Receiver&) = delete;
    Receiver& operator=(const Receiver&) = delete;

    [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }
    [[nodiscard]] int port() const noexcept { return port_; }
    [[nodiscard]] std::string address() const {
        return (family_ == AF_INET ? ipv4_ + ":" : "[::1]:") + std::to_string(port_);
    }
    /// How many datagrams arrived so far.
    [[nodiscard]] std::size_t count() {
        const std::lock_guard lock(mutex_);
        return received_.size();
    }
    /// Waits until `count` datagrams arrived (or a quiet second passed) and returns them all.
    std::vector<std::string> wait_for(std::size_t count) {
        std::unique_lock lock(mutex_);
        std::size_t seen = received_.size();
        while (received_.size() < count) {
            if (!arrived_.wait_for(lock, 1s, [&] { return received_.size() >= count; }) && received_.size() == seen) break;
            seen = received_.size();
        }
        return received_;
    }

private:
    void drain() {
        constexpr std::size_t kBatch = 64, kSize = 65536;
        std::vector<char> storage(kBatch * kSize);
        std::vector<mmsghdr> messages(kBatch);
        std::vector<iovec> iov(kBatch);
        while (!stop_) {
            for (std::size_t i = 0; i < kBatch; ++i) {
                iov[i] = iovec{storage.data() + i * kSize, kSize};
                messages[i] = mmsghdr{};
                messages[i].msg_hdr.msg_iov = &iov[i];
                messages[i].msg_hdr.msg_iovlen = 1;
            }
            const int n = ::recvmmsg(fd_, messages.data(), kBatch, MSG_WAITFORONE, nullptr);
            if (n <= 0) continue;
            const std::lock_guard lock(mutex_);
            for (int i = 0; i < n; ++i) received_.emplace_back(storage.data() + static_cast<std::size_t>(i) * kSize, messages[static_cast<std::size_t>(i)].msg_len);
            arrived_.notify_all();
        }
    }

    int family_;
    std::string ipv4_;
    int fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable arrived_;
    std::vector<std::string> received_;
};

fieldlog::RecordView view(const std::string& line, fieldlog::Level level = fieldlog::Level::info,
                          fieldlog::Timestamp time = fieldlog_test::fixed_clock()) {
    return fieldlog::RecordView{{line.data(), line.size()}, level, time};
}

std::string json_line(const std::string& msg) {
    return "{\"ts\":\"2026-11-30T08:38:11.123456789Z\",\"level\":\"info\",\"logger\":\"udp\",\"msg\":\"" + msg +
           "\",\"status\":200,\"user\":{\"name\":\"bob\",\"tags\":[\"a\",\"b\"]}}\n";
}

/// The made-up host name the getaddrinfo below answers for, and the IPv4 literal it stands for
/// right now (nullptr: the name does not resolve).
constexpr const char* kMovingHost = "fieldlog-moving-host.test";
std::atomic<const char*> moving_host_address{nullptr};
std::atomic<int> moving_host_lookups{0};
std::atomic<int> moving_host_failures{0};  ///< lookups answered "no such name"

/// Points kMovingHost at an address for one scope; it stops resolving at scope exit.
class MovingHost {
public:
    explicit MovingHost(const char* address) {
        moving_host_failures.store(0);
        point_at(address);
    }
    ~MovingHost() { point_at(nullptr); }
    MovingHost(const MovingHost&) = delete;
    MovingHost& operator=(const MovingHost&) = delete;
    void point_at(const char* address) noexcept { moving_host_address.store(address); }
};

// A full socket buffer (EAGAIN) or device queue (ENOBUFS) never happens on loopback (see the
// never-reading receiver test), so the sendmmsg below fails the calls a test arms instead.
std::atomic<int> send_calls{0};            ///< sendmmsg calls so far, failed ones included
std::atomic<unsigned> send_partial{0};     ///< when armed: messages the next call sends before the failures
std::atomic<int> send_failures_left{0};    ///< calls still to fail
std::atomic<int> send_failure_errno{0};

/// Makes sendmmsg fail `calls` times with `error` for one scope, after a first call that sends
/// only its first `sent_first` messages (0: the first call fails already). That is what the
/// kernel does when the buffer fills midway through a batch: it returns how many went out, and
/// the next call meets the full buffer.
class SendFault {
public:
    SendFault(int error, int calls, unsigned sent_first = 0) {
        send_failure_errno.store(error);
        send_partial.store(sent_first);
        send_failures_left.store(calls);
    }
    ~SendFault() {
        send_failures_left.store(0);
        send_partial.store(0);
    }
    SendFault(const SendFault&) = delete;
    SendFault& operator=(const SendFault&) = delete;
    /// Armed failures no call has used.
    [[nodiscard]] static int unused() noexcept { return send_failures_left.load(); }
};

/// An errno a test makes sendmmsg fail with, and its name for the section.
struct SendError {
    const char* name;
    int error;
};

}  // namespace

// kMovingHost resolves to moving_host_address (through the real resolver given the literal, so
// freeaddrinfo(3) frees what it gets); anything else is the real getaddrinfo's business.
extern "C" int getaddrinfo(const char* __restrict name, const char* __restrict service,
                           const addrinfo* __restrict hints, addrinfo** __restrict result) {
    using Resolver = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
    static const auto real = reinterpret_cast<Resolver>(::dlsym(RTLD_NEXT, "getaddrinfo"));
    if (name == nullptr || std::strcmp(name, kMovingHost) != 0) return real(name, service, hints, result);
    if (hints != nullptr && (hints->ai_flags & AI_NUMERICHOST) != 0) return EAI_NONAME;  // a name, not a literal
    moving_host_lookups.fetch_add(1);
    const char* address = moving_host_address.load();
    if (address == nullptr) {
        moving_host_failures.fetch_add(1);
        return EAI_NONAME;
    }
    addrinfo numeric = hints != nullptr ? *hints : addrinfo{};
    numeric.ai_flags |= AI_NUMERICHOST;
    return real(address, service, &numeric, result);
}

// Fails the calls a SendFault armed (see there); every other call is the real sendmmsg's.
extern "C" int sendmmsg(int fd, mmsghdr* messages, unsigned int count, int flags) {
    using Sender = int (*)(int, mmsghdr*, unsigned int, int);
    static const auto real = reinterpret_cast<Sender>(::dlsym(RTLD_NEXT, "sendmmsg"));
    send_calls.fetch_add(1);
    if (const unsigned partial = send_partial.exchange(0); partial > 0) return real(fd, messages, std::min(count, partial), flags);
    for (int left = send_failures_left.load(); left > 0;) {
        if (send_failures_left.compare_exchange_weak(left, left - 1)) {
            errno = send_failure_errno.load();
            return -1;
        }
    }
    return real(fd, messages, count, flags);
}

#if !FIELDLOG_LINUX_FACILITIES
// The portable core sends a batch with one sendmsg(2) per message: the same faults, a call per
// message (an armed partial call is that many calls that succeed).
extern "C" ssize_t sendmsg(int fd, const msghdr* message, int flags) {
    using Sender = ssize_t (*)(int, const msghdr*, int);
    static const auto real = reinterpret_cast<Sender>(::dlsym(RTLD_NEXT, "sendmsg"));
    send_calls.fetch_add(1);
    for (unsigned partial = send_partial.load(); partial > 0;) {
        if (send_partial.compare_exchange_weak(partial, partial - 1)) return real(fd, message, flags);
    }
    for (int left = send_failures_left.load(); left > 0;) {
        if (send_failures_left.compare_exchange_weak(left, left - 1)) {
            errno = send_failure_errno.load();
            return -1;
        }
    }
    return real(fd, message, flags);
}
#endif

namespace {

/// The calls that send `messages` datagrams of one batch, none failing: one sendmmsg, or
/// (the portable core) a sendmsg each.
int calls_to_send(int messages) { return FIELDLOG_LINUX_FACILITIES ? 1 : messages; }

}  // namespace

TEST_CASE("json framing sends each record as one datagram without its newline", "[udp_sink]") {
    Receiver receiver(AF_INET);
    REQUIRE(receiver.ok());
    fieldlog::UdpSink sink({.address = receiver.address()});
    const std::string a = json_line("one"), b = json_line("two");
    deliver(sink, view(a));
    deliver(sink, view(b));
    const std::vector<std::string> got = receiver.wait_for(2);
    REQUIRE(got.size() == 2);
    CHECK(got[0] + "\n" == a);
    CHECK(got[1] + "\n" == b);
    CHECK(sink.counters().records == 2);
    CHECK(sink.counters().bytes == a.size() + b.size());
    CHECK(sink.counters().dropped == 0);
}

TEST_CASE("a batch goes out through sendmmsg and arrives whole and in order", "[udp_sink]") {
    Receiver receiver(AF_INET);
    REQUIRE(receiver.ok());
    fieldlog::UdpSink sink({.address = receiver.address()});
    std::vector<std::string> lines;
    for (int i = 0; i < 150; ++i) lines.push_back(json_line("batch " + std::to_string(i)));  // more than one sendmmsg
    std::vector<fieldlog::RecordView> views;
    for (const std::string& line : lines) views.push_back(view(line));
    deliver(sink, views);
    const std::vector<std::string> got = receiver.wait_for(lines.size());
    REQUIRE(got.size() == lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) CHECK(got[i] + "\n" == lines[i]);
    CHECK(sink.counters().records == lines.size());
}

TEST_CASE("rfc5424 framing writes PRI by level, a floored 6-digit UTC time and clean header fields", "[udp_sink]") {
    Receiver receiver(AF_INET);
    REQUIRE(receiver.ok());
    fieldlog::UdpSink sink({.address = receiver.address(),
                            .framing = fieldlog::UdpFraming::rfc5424,
                            .facility = 16,
                            .app_name = std::string(60, 'a'),
                            .hostname = "web 01\x7f\xc3\xa4"});
    const std::string header_tail = " web_01___ " + std::string(48, 'a') + " " + std::to_string(::getpid()) + " - - ";
    const std::string line = json_line("syslog");
    const std::string body = line.substr(0, line.size() - 1);
    const struct {
        fieldlog::Level level;
        const char* pri;
    } cases[] = {{fieldlog::Level::trace, "<135>"}, {fieldlog::Level::debug, "<135>"}, {fieldlog::Level::info, "<134>"},
                 {fieldlog::Level::warn, "<132>"},  {fieldlog::Level::error, "<131>"}, {fieldlog::Level::fatal, "<130>"}};
    for (const auto& c : cases) deliver(sink, view(line, c.level));
    deliver(sink, view(line, fieldlog::Level::info, fieldlog::Timestamp(1796027891, 999999999)));
    const std::vector<std::string> got = receiver.wait_for(7);
    REQUIRE(got.size() == 7);
    for (std::size_t i = 0; i < 6; ++i) {
        CHECK(got[i] == std::string(cases[i].pri) + "1 2026-11-30T08:38:11.123456Z" + header_tail + body);
    }
    CHECK(got[6] == "<134>1 2026-11-30T08:38:11.999999Z" + header_tail + body);  // floored, never rounded up
}

TEST_CASE("an oversized record is cut inside its longest string value and stays valid, marked JSON", "[udp_sink]") {
    Receiver receiver(AF_INET);
    REQUIRE(receiver.ok());
    std::string msg;
    for (int i = 0; i < 40; ++i) msg += "ä✓😀 \\\"q\\\" \\\\ \\u0001 \\ud83d\\ude00 ";  // UTF-8 and escapes to cut between
    const std::string line = json_line(msg);
    const std::string marker = ",\"_truncated\":" + std::to_string(line.size() - 1) + "}";
    for (const fieldlog::UdpFraming framing : {fieldlog::UdpFraming::json, fieldlog::UdpFraming::rfc5424}) {
        for (std::size_t limit = 300; limit <= 1200; limit += 37) {
            DYNAMIC_SECTION((framing == fieldlog::UdpFraming::json ? "json" : "rfc5424") << " max_datagram " << limit) {
                fieldlog::UdpSink sink({.address = receiver.address(), .framing = framing, .max_datagram = limit});
                const std::size_t before = receiver.wait_for(0).size();
                deliver(sink, view(line));
                const std::vector<std::string> got = receiver.wait_for(before + 1);
                REQUIRE(got.size() == before + 1);
                std::string datagram = got.back();
                CHECK(datagram.size() <= limit);
                CHECK(datagram.size() + 12 > limit);  // it used the room it had (the largest unit is 12 bytes)
                if (framing == fieldlog::UdpFraming::rfc5424) datagram = datagram.substr(datagram.find(" - - ") + 5);
                CHECK(jsonl_errors(std::vector<std::string>{datagram}).empty());
                CHECK(datagram.ends_with(marker));
                CHECK(datagram.find("…\",\"status\":200,\"user\":{\"name\":\"bob\"") != std::string::npos);
                CHECK(datagram.starts_with(line.substr(0, line.find("\"msg\":\"") + 7)));
                CHECK(sink.truncated() == 1);
                CHECK(sink.counters().records == 1);
            }
        }
    }
}

TEST_CASE("an oversized record that cannot be cut by the rule is dropped and counted", "[udp_sink]") {
    Receiver receiver(AF_INET);
    REQUIRE(receiver.ok());
    std::string many_short = "{\"ts\":\"2026-11-30T08:38:11.123456789Z\"";
    for (int i = 0; i < 40; ++i) many_short += ",\"k" + std::to_string(i) + "\":\"v\"";
    many_short += "}\n";
    const struct {
        const char* name;
        std::string line;
        fieldlog::OversizePolicy policy;
    } cases[] = {{"no string long enough to free the room", many_short, fieldlog::OversizePolicy::truncate},
                 {"not a JSON object (logfmt)", "level=info msg=" + std::string(300, 'x') + "\n", fieldlog::OversizePolicy::truncate},
                 {"policy drop", json_line(std::string(300, 'x')), fieldlog::OversizePolicy::drop}};
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            fieldlog::UdpSink sink({.address = receiver.address(), .max_datagram = 200, .oversize = c.policy});
            deliver(sink, view(c.line));
            const std::string fits = json_line("fits");
            deliver(sink, view(fits));
            CHECK(receiver.wait_for(1).back() + "\n" == fits);
            CHECK(sink.counters().dropped == 1);
            CHECK(sink.counters().records == 2);
            CHECK(sink.truncated() == 0);
        }
    }
}

TEST_CASE("a missing receiver costs counted drops, never an exception or a block", "[udp_sink]") {
    int port = 0;
    {
        const Receiver gone(AF_INET);  // a port that was free a moment ago and has no reader now
        REQUIRE(gone.ok());
        port = gone.port();
    }
    fieldlog::UdpSink sink({.address = "127.0.0.1:" + std::to_string(port)});
    const std::string line = json_line("nobody listens");
    for (int i = 0; i < 200; ++i) {
        deliver(sink, view(line));
        std::this_thread::sleep_for(100us);  // give the ICMP answer time to come back
    }
    const fieldlog::SinkCounters counters = sink.counters();
    CHECK(counters.records == 200);
    CHECK(counters.dropped > 0);  // ECONNREFUSED was seen and counted
    CHECK(counters.errors == counters.dropped);
}

TEST_CASE("a receiver that never reads costs the caller nothing: each record is written or counted dropped", "[udp_sink]") {
    // Linux loopback hands a datagram to the receiving socket within send(2) and drops it there
    // when that buffer is full, so the sender sees neither EAGAIN nor ENOBUFS (tried on 6.x: a
    // 4.6 KB SO_SNDBUF, 60 KB datagrams, two threads sending on one socket). This pins the
    // accounting and that no call blocks; the EAGAIN branch is reached through a SendFault in
    // the next test.
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_fd{fd};
    const int smallest = 1;  // the kernel rounds it up to its minimum (a few KB)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &smallest, sizeof smallest);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);

    fieldlog::UdpSink sink({.address = "127.0.0.1:" + std::to_string(ntohs(address.sin_port))});
    const std::string line = json_line(std::string(1000, 'x'));
    const std::vector<fieldlog::RecordView> batch(64, view(line));
    constexpr int kBatches = 200;
    for (int i = 0; i < kBatches; ++i) deliver(sink, batch);

    std::size_t queued = 0;  // what the receiver holds: far fewer than were sent
    char buffer[2048];
    while (::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT) > 0) ++queued;
    const fieldlog::SinkCounters counters = sink.counters();
    CHECK(queued < batch.size() * kBatches);  // the receiver was full: the kernel dropped the rest
    CHECK(counters.records == batch.size() * kBatches);
    CHECK(counters.errors <= counters.dropped);  // a failed sendmmsg drops at least its own record
    CHECK(counters.bytes == counters.records * line.size());
}

TEST_CASE("a full send buffer (EAGAIN, ENOBUFS) drops the rest of the batch at once and counts it, and later records arrive", "[udp_sink]") {
    Receiver receiver(AF_INET);
    REQUIRE(receiver.ok());
    const TempDir dir;
    const std::string report = dir.file("stderr.txt");
    const SendError cases[] = {{"EAGAIN", EAGAIN}, {"ENOBUFS", ENOBUFS}};
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            fieldlog::UdpSink sink({.address = receiver.address()});
            std::vector<std::string> lines;
            for (int i = 0; i < 30; ++i) lines.push_back(json_line(std::string(c.name) + " " + std::to_string(i)));
            const auto batch = [&](std::size_t first) {  // lines[first, first + 10)
                std::vector<fieldlog::RecordView> views;
                for (std::size_t i = first; i < first + 10; ++i) views.push_back(view(lines[i]));
                return views;
            };
            // Far more failures than calls the sink should make: a sink that retried would use
            // them up (and, retrying forever, still end), instead of hanging the test.
            constexpr int kArmed = 1000;
            {
                const StderrTo capture(report);
                const SendFault fault(c.error, kArmed, 4);  // the buffer fills after 4 of 10
                const int calls_before = send_calls.load();
                // The portable core's loop meets the full buffer twice: the failure that ends its
                // partial batch, then again when it tries the rest.
                const int failed_calls = FIELDLOG_LINUX_FACILITIES ? 1 : 2;
                deliver(sink, batch(0));
                CHECK(send_calls.load() - calls_before == calls_to_send(4) + failed_calls);  // the 4 that went out, the failure
                deliver(sink, batch(10));  // full from the first message on
                CHECK(send_calls.load() - calls_before == calls_to_send(4) + failed_calls + 1);
                CHECK(SendFault::unused() == kArmed - failed_calls - 1);  // nothing retried
            }
            fieldlog::SinkCounters counters = sink.counters();
            CHECK(counters.records == 20);
            CHECK(counters.dropped == 6 + 10);
            CHECK(counters.errors == 2);  // one per failed sendmmsg (sink.hpp: failed system calls)
            // Two failures within a second: one line, with the errno text.
            CHECK(read_file(report) == "fieldlog: udp sink " + receiver.address() + ": send: " + std::strerror(c.error) + "\n");

            deliver(sink, batch(20));  // the buffer has room again
            const std::vector<std::string> got = receiver.wait_for(4 + 10);
            REQUIRE(got.size() == 4 + 10);
            for (std::size_t i = 0; i < 4; ++i) CHECK(got[i] + "\n" == lines[i]);
            for (std::size_t i = 0; i < 10; ++i) CHECK(got[4 + i] + "\n" == lines[20 + i]);
            counters = sink.counters();
            CHECK(counters.records == lines.size());
            CHECK(lines.size() == got.size() + counters.dropped);  // handed == received + dropped
            CHECK(counters.errors == 2);
        }
    }
}

TEST_CASE("another send error (ECONNREFUSED, EPERM) loses only the record it was for: the rest of the batch goes out", "[udp_sink]") {
    // ECONNREFUSED is a receiver's ICMP answer to an earlier datagram, EPERM a firewall rule:
    // neither says the next datagram would fail too.
    Receiver receiver(AF_INET);
    REQUIRE(receiver.ok());
    const SendError cases[] = {{"ECONNREFUSED", ECONNREFUSED}, {"EPERM", EPERM}};
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            fieldlog::UdpSink sink({.address = receiver.address()});
            std::vector<std::string> lines;
            std::vector<fieldlog::RecordView> views;
            for (int i = 0; i < 10; ++i) lines.push_back(json_line(std::string(c.name) + " " + std::to_string(i)));
            for (const std::string& line : lines) views.push_back(view(line));
            {
                const StderrTo quiet;  // the sink reports the failure there
                const SendFault fault(c.error, 2);
                const int calls_before = send_calls.load();
                deliver(sink, views);
                CHECK(send_calls.load() - calls_before == 2 + calls_to_send(8));  // two failed, then the other 8 went
                CHECK(SendFault::unused() == 0);
            }
            const std::vector<std::string> got = receiver.wait_for(8);
            REQUIRE(got.size() == 8);
            for (std::size_t i = 0; i < 8; ++i) CHECK(got[i] + "\n" == lines[2 + i]);
            const fieldlog::SinkCounters counters = sink.counters();
            CHECK(counters.records == 10);
            CHECK(counters.dropped == 2);
            CHECK(counters.errors == 2);
            CHECK(lines.size() == got.size() + counters.dropped);
        }
    }
}

TEST_CASE("bad UDP addresses and options are rejected at construction", "[udp_sink]") {
    const struct {
        const char* name;
        fieldlog::UdpSinkOptions options;
    } cases[] = {{"no port", {.address = "127.0.0.1"}},
                 {"IPv6 without brackets", {.address = "::1:5140"}},
                 {"brackets without port", {.address = "[::1]"}},
                 {"empty host", {.address = ":5140"}},
                 {"datagram over 65507", {.address = "127.0.0.1:5140", .max_datagram = 70000}},
                 {"datagram too small for the header", {.address = "127.0.0.1:5140", .framing = fieldlog::UdpFraming::rfc5424, .max_datagram = 80}},
                 {"facility over 23", {.address = "127.0.0.1:5140", .facility = 24}}};
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) { CHECK_THROWS_AS(fieldlog::UdpSink(c.options), std::invalid_argument); }
    }
}

TEST_CASE("a host name is resolved to an address the receiver listens on", "[udp_sink]") {
    Receiver v4(AF_INET);
    REQUIRE(v4.ok());
    Receiver v6(AF_INET6, v4.port());  // wherever "localhost" points, someone listens
    fieldlog::UdpSink sink({.address = "localhost:" + std::to_string(v4.port())});
    const std::string line = json_line("by name");
    deliver(sink, view(line));
    const std::size_t got = v4.wait_for(1).size() + (v6.ok() ? v6.wait_for(0).size() : 0);
    CHECK(got == 1);
    CHECK(sink.counters().records == 1);
}

TEST_CASE("a host name is resolved again every resolve_interval: records follow it, a failed lookup keeps the old address", "[udp_sink][concurrent]") {
    Receiver first(AF_INET);
    REQUIRE(first.ok());
    Receiver second(AF_INET, first.port(), "127.0.0.2");  // the same port on another loopback address
    REQUIRE(second.ok());
    MovingHost host("127.0.0.1");
    fieldlog::UdpSink sink({.address = std::string(kMovingHost) + ":" + std::to_string(first.port()),
                            .resolve_interval = 1s});
    int sent = 0;
    const auto send_one = [&] { deliver(sink, view(json_line(std::to_string(sent++)))); };
    const auto arrived = [&] { return first.count() + second.count(); };
    const auto all_arrived = [&] { return wait_until([&] { return arrived() == static_cast<std::size_t>(sent); }); };
    const auto numbers = [](Receiver& receiver) {  // the msg of each datagram, in arrival order
        std::vector<int> found;
        for (const std::string& datagram : receiver.wait_for(0)) found.push_back(std::stoi(datagram.substr(datagram.find("\"msg\":\"") + 7)));
        return found;
    };

    send_one();
    REQUIRE(all_arrived());
    CHECK(first.count() == 1);

    // The name moves: the background tick notices within about a second; until then records
    // keep going to the old address, afterwards all go to the new one.
    host.point_at("127.0.0.2");
    const int lookups_before_move = moving_host_lookups.load();
    REQUIRE(wait_until([&] {
        send_one();
        return second.count() > 0;
    }));
    REQUIRE(all_arrived());
    const std::vector<int> at_first = numbers(first), at_second = numbers(second);
    CHECK(at_first.back() < at_second.front());  // one switch, no record went back
    CHECK(moving_host_lookups.load() > lookups_before_move);

    // The name stops resolving: the lookup failure is counted, records stay on the last address.
    host.point_at(nullptr);
    REQUIRE(wait_until([&] { return sink.counters().errors > 0; }));
    const std::size_t second_before = second.count();
    send_one();
    send_one();
    REQUIRE(all_arrived());
    CHECK(second.count() == second_before + 2);

    // It resolves again (to the first address): a failed lookup did not stop the re-resolving.
    host.point_at("127.0.0.1");
    const std::size_t first_before = first.count();
    REQUIRE(wait_until([&] {
        send_one();
        return first.count() > first_before;
    }));
    REQUIRE(all_arrived());

    const fieldlog::SinkCounters counters = sink.counters();
    CHECK(counters.records == static_cast<std::uint64_t>(sent));
    CHECK(counters.dropped == 0);
    CHECK(counters.errors == static_cast<std::uint64_t>(moving_host_failures.load()));  // each failed lookup, nothing else
}

TEST_CASE("200,000 records from 4 threads arrive byte-exact: sent == received + counted drops", "[udp_sink][concurrent]") {
    for (const int family : {AF_INET, AF_INET6}) {
        DYNAMIC_SECTION((family == AF_INET ? "IPv4 127.0.0.1" : "IPv6 ::1")) {
            Receiver receiver(family);
            if (!receiver.ok()) {
                WARN("skipped: no loopback for this address family here");
                continue;
            }
            auto sink = std::make_shared<fieldlog::UdpSink>(fieldlog::UdpSinkOptions{.address = receiver.address()});
            fieldlog::configure({.level = fieldlog::Level::info,
                                 .sinks = {{.target = std::shared_ptr<fieldlog::Sink>(sink)}},
                                 .clock = &fieldlog_test::fixed_clock});
            constexpr int kThreads = 4, kPerThread = 50000;
            std::vector<std::thread> threads;
            for (int t = 0; t < kThreads; ++t) {
                threads.emplace_back([t] {
                    const auto log = fieldlog::get("udp");
                    for (int i = 0; i < kPerThread; ++i) log.info("record", {{"thread", t}, {"seq", i}});
                });
            }
            for (std::thread& thread : threads) thread.join();
            fieldlog::shutdown();

            const fieldlog::SinkCounters counters = sink->counters();
            const std::vector<std::string> got = receiver.wait_for(counters.records - counters.dropped);
            CHECK(counters.records == kThreads * kPerThread);
            CHECK(got.size() == counters.records - counters.dropped);  // nothing vanished between socket and receiver
            const std::string prefix = "{\"ts\":\"2026-11-30T08:38:11.123456789Z\",\"level\":\"info\",\"logger\":\"udp\",\"msg\":\"record\",\"thread\":";
            std::set<std::pair<int, int>> seen;
            std::size_t malformed = 0;
            for (const std::string& datagram : got) {
                const std::size_t seq_at = datagram.find(",\"seq\":");
                if (!datagram.starts_with(prefix) || seq_at == std::string::npos) {
                    ++malformed;
                    continue;
                }
                const int thread = std::stoi(datagram.substr(prefix.size()));
                const int seq = std::stoi(datagram.substr(seq_at + 7));
                const std::string expected = prefix + std::to_string(thread) + ",\"seq\":" + std::to_string(seq) + "}";
                if (datagram != expected || !seen.insert({thread, seq}).second) ++malformed;
            }
            CHECK(malformed == 0);
            CHECK(seen.size() == got.size());
            INFO("dropped " << counters.dropped);
        }
    }
}

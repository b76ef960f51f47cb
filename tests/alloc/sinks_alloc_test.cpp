// SPDX-License-Identifier: MIT
// Every sink writes records without touching the heap once warm: the file sink (buffered,
// write-through, rotating by size, and compressing and retaining its rotated files), UDP (JSON,
// RFC 5424, cut to fit, no receiver at all), journald (a reader, no socket at all), syslog over
// TCP (a reader; a 4 KiB buffer), stdout, stderr and the callback sink, each behind a logger and
// through write_batch.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "alloc/alloc_counter.hpp"
#include "support/deliver.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;

namespace {

/// Points descriptors 1 and 2 at /dev/null while alive.
class QuietStdStreams {
public:
    QuietStdStreams() : out_(::dup(STDOUT_FILENO)), err_(::dup(STDERR_FILENO)) {
        const int null_fd = ::open("/dev/null", O_WRONLY);
        ::dup2(null_fd, STDOUT_FILENO);
        ::dup2(null_fd, STDERR_FILENO);
        ::close(null_fd);
    }
    ~QuietStdStreams() {
        ::dup2(out_, STDOUT_FILENO);
        ::dup2(err_, STDERR_FILENO);
        ::close(out_);
        ::close(err_);
    }
    QuietStdStreams(const QuietStdStreams&) = delete;
    QuietStdStreams& operator=(const QuietStdStreams&) = delete;

private:
    int out_;
    int err_;
};

/// A bound UDP socket nobody reads (the kernel drops what does not fit) and its port.
struct SilentReceiver {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int port = 0;
    SilentReceiver() {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        ::bind(fd, reinterpret_cast<sockaddr*>(&address), length);
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
        port = ntohs(address.sin_port);
    }
    ~SilentReceiver() { ::close(fd); }
    SilentReceiver(const SilentReceiver&) = delete;
    SilentReceiver& operator=(const SilentReceiver&) = delete;
};

/// An AF_UNIX datagram socket at `path` (where the journald sink sends) whose thread reads and
/// discards everything, as journald would.
class DrainingUnixReceiver {
public:
    explicit DrainingUnixReceiver(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
        ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
        const timeval poll{0, 20000};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &poll, sizeof poll);
        thread_ = std::thread([this] {
            char datagram[65536];
            while (!stop_) static_cast<void>(::recv(fd_, datagram, sizeof datagram, 0));
        });
    }
    ~DrainingUnixReceiver() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
    }
    DrainingUnixReceiver(const DrainingUnixReceiver&) = delete;
    DrainingUnixReceiver& operator=(const DrainingUnixReceiver&) = delete;

private:
    int fd_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

/// A loopback TCP listener whose thread takes connections and reads and discards everything,
/// as a syslog daemon would.
class DrainingTcpReceiver {
public:
    DrainingTcpReceiver() : listener_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        ::bind(listener_, reinterpret_cast<sockaddr*>(&address), length);
        ::listen(listener_, 4);
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
        port = ntohs(address.sin_port);
        const timeval poll{0, 20000};
        ::setsockopt(listener_, SOL_SOCKET, SO_RCVTIMEO, &poll, sizeof poll);
        thread_ = std::thread([this, poll] {
            char chunk[65536];
            while (!stop_) {
                const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
                if (connection < 0) continue;
                ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &poll, sizeof poll);
                while (!stop_) {
                    const ssize_t got = ::recv(connection, chunk, sizeof chunk, 0);
                    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) break;
                }
                ::close(connection);
            }
        });
    }
    ~DrainingTcpReceiver() {
        stop_ = true;
        thread_.join();
        ::close(listener_);
    }
    DrainingTcpReceiver(const DrainingTcpReceiver&) = delete;
    DrainingTcpReceiver& operator=(const DrainingTcpReceiver&) = delete;

    int port = 0;

private:
    int listener_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

int free_udp_port() {
    const SilentReceiver probe;
    return probe.port;
}

void log_records(const fieldlog::Logger& log, int count, const std::string& payload) {
    for (int i = 0; i < count; ++i) {
        log.info("request done", {{"status", 200}, {"path", "/api/v1/items"}, {"i", i}, {"payload", payload}});
        if (i % 100 == 0) log.error("an error flushes the file sink", {{"i", i}});
    }
}

}  // namespace

TEST_CASE("no sink allocates per record once warm", "[alloc][sinks]") {
    const fieldlog_test::TempDir dir;
    const SilentReceiver receiver;
    const std::string udp_address = "127.0.0.1:" + std::to_string(receiver.port);
    const std::string nobody = "127.0.0.1:" + std::to_string(free_udp_port());
    const std::string small_payload(40, 'p');
    const std::string large_payload(3000, 'q');  // over UDP's 2048: cut by the oversize rule
    const DrainingUnixReceiver journald(dir.file("journald.sock"));
    const DrainingTcpReceiver syslog_receiver;
    const std::string syslog_address = "127.0.0.1:" + std::to_string(syslog_receiver.port);

    const struct {
        const char* name;
        std::function<fieldlog::SinkTarget()> make;
        const std::string* payload;
    } cases[] = {
        {"file, buffered", [&] { return fieldlog::FileSinkOptions{.path = dir.file("buffered.log")}; }, &small_payload},
        {"file, write-through", [&] { return fieldlog::FileSinkOptions{.path = dir.file("through.log"), .buffer_size = 0}; }, &small_payload},
        {"file, rotating by size",
         [&] { return fieldlog::FileSinkOptions{.path = dir.file("rotating.log"), .buffer_size = 4096, .max_size = 16 * 1024, .keep = 3}; },
         &small_payload},
        {"file, rotating and compressed",  // the retention worker's thread counts too
         [&] {
             return fieldlog::FileSinkOptions{.path = dir.file("compressed.log"), .buffer_size = 4096, .max_size = 16 * 1024,
                                              .keep = 3, .max_age = std::chrono::hours(1), .max_total_bytes = 1 << 20,
                                              .compress = fieldlog::FileCompression::gzip, .compression_level = 1};
         },
         &small_payload},
        {"udp json", [&] { return fieldlog::UdpSinkOptions{.address = udp_address}; }, &small_payload},
        {"udp rfc5424", [&] { return fieldlog::UdpSinkOptions{.address = udp_address, .framing = fieldlog::UdpFraming::rfc5424}; }, &small_payload},
        {"udp cut to fit", [&] { return fieldlog::UdpSinkOptions{.address = udp_address, .framing = fieldlog::UdpFraming::rfc5424}; }, &large_payload},
        {"udp without a receiver", [&] { return fieldlog::UdpSinkOptions{.address = nobody}; }, &small_payload},
        {"syslog over TCP", [&] { return fieldlog::SyslogSinkOptions{.address = syslog_address}; }, &small_payload},
        {"syslog over TCP, a 4 KiB buffer",
         [&] { return fieldlog::SyslogSinkOptions{.address = syslog_address, .buffer_bytes = 4096}; }, &large_payload},
        {"journald", [&] { return fieldlog::JournaldSinkOptions{.socket = dir.file("journald.sock")}; }, &large_payload},
        {"journald without a socket", [&] { return fieldlog::JournaldSinkOptions{.socket = dir.file("none.sock")}; }, &small_payload},
        {"stdout", [] { return fieldlog::StdoutSinkOptions{}; }, &small_payload},
        {"stderr", [] { return fieldlog::StdoutSinkOptions{.stream = fieldlog::StdStream::err}; }, &small_payload},
        {"callback", [] {
             return std::shared_ptr<fieldlog::Sink>(std::make_shared<fieldlog::CallbackSink>([](std::string_view line) {
                 volatile std::size_t seen = line.size();
                 (void)seen;
             }));
         }, &small_payload},
    };
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const QuietStdStreams quiet;
            fieldlog::configure({.level = fieldlog::Level::info, .sinks = {{.target = c.make()}}});
            const auto log = fieldlog::get("alloc");
            log_records(log, 2000, *c.payload);  // warm-up: thread buffers, first rotation, first error report
            const std::uint64_t before = fieldlog_test::allocations();
            log_records(log, 20000, *c.payload);
            const std::uint64_t allocated = fieldlog_test::allocations() - before;
            fieldlog::shutdown();
            CHECK(allocated == 0);
        }
    }
}

TEST_CASE("write_batch allocates nothing on the batching sinks", "[alloc][sinks]") {
    const fieldlog_test::TempDir dir;
    const SilentReceiver receiver;
    std::vector<std::string> lines;
    for (int i = 0; i < 256; ++i) lines.push_back("{\"msg\":\"batched\",\"i\":" + std::to_string(i) + "}\n");
    std::vector<fieldlog::RecordView> batch;
    for (const std::string& line : lines) batch.push_back({{line.data(), line.size()}, fieldlog::Level::info, fieldlog_test::fixed_clock()});

    const QuietStdStreams quiet;
    fieldlog::FileSink file({.path = dir.file("batch.log"), .max_size = 64 * 1024, .keep = 2});
    fieldlog::UdpSink udp({.address = "127.0.0.1:" + std::to_string(receiver.port), .framing = fieldlog::UdpFraming::rfc5424});
    fieldlog::StdoutSink out(fieldlog::StdStream::out);
    for (fieldlog::Sink* sink : std::initializer_list<fieldlog::Sink*>{&file, &udp, &out}) fieldlog_test::deliver(*sink, batch);
    const std::uint64_t before = fieldlog_test::allocations();
    for (int round = 0; round < 200; ++round) {
        for (fieldlog::Sink* sink : std::initializer_list<fieldlog::Sink*>{&file, &udp, &out}) fieldlog_test::deliver(*sink, batch);
    }
    const std::uint64_t allocated = fieldlog_test::allocations() - before;
    file.flush();
    CHECK(allocated == 0);
    CHECK(file.counters().records == 201 * 256);
    CHECK(file.counters().dropped == 0);
}

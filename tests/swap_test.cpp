// SPDX-License-Identifier: MIT
// configure() while other threads log: the swap under load (4 threads, 1,000 swaps through two
// files, a UDP receiver, a memory sink and a sink that takes nothing — every accepted record
// lands exactly once, each thread's records in order in every destination), and what a swap
// does to the sinks themselves: kept ones are not reopened, dropped ones get no write after
// configure() returns, and the ones configure() made are closed. Run under ASan and TSan too.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <filesystem>
#include <cstring>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "support/test_support.hpp"

using fieldlog::Config;
using fieldlog::Level;
using fieldlog_test::read_lines;
using fieldlog_test::TempDir;

namespace {

/// A loopback UDP socket read by its own thread; keeps every datagram and the kernel's count
/// of datagrams dropped because the socket buffer was full (SO_RXQ_OVFL).
class UdpReceiver {
public:
    UdpReceiver() {
        fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int buffer = 64 << 20;  // beyond rmem_max needs root (SO_RCVBUFFORCE); else take what we get
        if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0) {
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
        }
        int on = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address);
        socklen_t length = sizeof address;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        reader_ = std::thread([this] { run(); });
    }
    ~UdpReceiver() {
        finish();
        ::close(fd_);
    }
    UdpReceiver(const UdpReceiver&) = delete;
    UdpReceiver& operator=(const UdpReceiver&) = delete;

    [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

    /// Reads until the socket has been quiet for a while, then stops; call after the last send.
    void finish() {
        stopping_.store(true);
        if (reader_.joinable()) reader_.join();
    }
    /// After finish(): every datagram, in arrival order.
    [[nodiscard]] const std::vector<std::string>& datagrams() const { return datagrams_; }
    /// After finish(): datagrams the kernel dropped for lack of buffer space.
    [[nodiscard]] std::uint32_t kernel_drops() const { return drops_; }

private:
    void run() {
        std::vector<char> data(65536);
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint32_t))];
        for (;;) {
            pollfd ready{fd_, POLLIN, 0};
            if (::poll(&ready, 1, 100) == 0) {
                if (stopping_.load()) return;  // quiet for 100 ms after the last send
                continue;
            }
            iovec iov{data.data(), data.size()};
            msghdr message{};
            message.msg_iov = &iov;
            message.msg_iovlen = 1;
            message.msg_control = control;
            message.msg_controllen = sizeof control;
            const ssize_t n = ::recvmsg(fd_, &message, MSG_DONTWAIT);
            if (n < 0) continue;
            for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
                    std::memcpy(&drops_, CMSG_DATA(c), sizeof drops_);
                }
            }
            datagrams_.emplace_back(data.data(), static_cast<std::size_t>(n));
        }
    }

    int fd_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread reader_;
    std::vector<std::string> datagrams_;
    std::uint32_t drops_ = 0;
};

/// The integer value of field `key` in a JSON (`"key":7`) or logfmt (` key=7`) line.
std::optional<std::uint64_t> field_value(std::string_view line, std::string_view key) {
    for (const std::string& marker : {fmt::format("\"{}\":", key), fmt::format(" {}=", key)}) {
        const std::size_t at = line.find(marker);
        if (at == std::string_view::npos) continue;
        std::uint64_t value = 0;
        const char* first = line.data() + at + marker.size();
        const auto [end, error] = std::from_chars(first, line.data() + line.size(), value);
        if (error == std::errc{} && end != first) return value;
    }
    return std::nullopt;
}

struct Destination {
    std::string name;
    std::vector<std::string> lines;
};

std::uint64_t info_records() { return fieldlog::metrics().records_by_level[static_cast<std::size_t>(Level::info)]; }

/// A sink that notices writes after the test declared it dropped (configure() returned).
class WatchedSink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView&) override {
        writes.fetch_add(1, std::memory_order_relaxed);
        if (dropped.load(std::memory_order_relaxed)) late_writes.fetch_add(1, std::memory_order_relaxed);
    }
    void flush() override { flushes.fetch_add(1, std::memory_order_relaxed); }

    std::atomic<bool> dropped{false};
    std::atomic<int> writes{0};
    std::atomic<int> late_writes{0};
    std::atomic<int> flushes{0};
};

}  // namespace

TEST_CASE("records logged during 1,000 swaps land exactly once, in order, in the set that took them", "[swap][concurrent]") {
    constexpr int thread_count = 4;
    constexpr int swap_count = 1000;
    const TempDir dir;
    UdpReceiver receiver;
    auto memory = std::make_shared<fieldlog::MemorySink>();

    const Config file_a{.sinks = {{.target = fieldlog::FileSinkOptions{.path = dir.file("a.log")}}}};
    const Config file_b{.sinks = {{.target = fieldlog::FileSinkOptions{.path = dir.file("b.log")},
                                   .format = fieldlog::Format::logfmt}}};
    const Config udp{.sinks = {{.target = fieldlog::UdpSinkOptions{.address = receiver.address()}}}};
    const Config in_memory{.sinks = {{.target = memory}}};
    const Config no_output = fieldlog_test::no_output();  // no record is accepted
    // A → A again (the same sink, kept) → B → UDP → memory → no output, and back: memory → UDP →
    // B → A …
    const Config* const cycle[] = {&file_a, &file_a,    &file_b, &udp,   &in_memory,
                                   &no_output, &in_memory, &udp,    &file_b};

    fieldlog::configure(no_output);
    const std::uint64_t accepted_before = info_records();
    std::atomic<bool> stop{false};
    std::vector<std::atomic<std::uint64_t>> progress(thread_count);  // records logged so far
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t) {
        threads.emplace_back([&, t] {
            const fieldlog::Logger log = fieldlog::get("swap");
            auto& logged = progress[static_cast<std::size_t>(t)];
            for (std::uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
                log.info("numbered", {{"t", t}, {"n", n}});
                logged.store(n + 1, std::memory_order_relaxed);
                // On 2 cores, 4 busy loggers would starve configure() (each swap waits for every
                // thread to finish its record) and pile up millions of records.
                std::this_thread::yield();
            }
        });
    }
    // Every thread logs at least this many records between two swaps, and keeps logging during
    // them: every swap happens with records in flight.
    constexpr std::uint64_t records_per_phase = 10;
    std::vector<std::uint64_t> mark(thread_count, 0);
    const auto wait_for_progress = [&] {
        for (int t = 0; t < thread_count; ++t) {
            const auto i = static_cast<std::size_t>(t);
            while (progress[i].load(std::memory_order_relaxed) < mark[i] + records_per_phase) std::this_thread::yield();
            mark[i] = progress[i].load(std::memory_order_relaxed);
        }
    };
    for (int i = 0; i < swap_count; ++i) {
        wait_for_progress();
        fieldlog::configure(*cycle[i % std::size(cycle)]);
    }
    stop.store(true);
    for (std::thread& thread : threads) thread.join();
    fieldlog::configure(no_output);  // closes whatever the last swap left open
    const std::uint64_t accepted = info_records() - accepted_before;
    receiver.finish();

    const std::vector<Destination> destinations = {
        {"file A", read_lines(dir.file("a.log"))},
        {"file B", read_lines(dir.file("b.log"))},
        {"udp", receiver.datagrams()},
        {"memory", memory->lines()},
    };
    CHECK(receiver.kernel_drops() == 0);  // else UDP itself lost records, not the swap

    std::vector<std::uint64_t> logged(thread_count);
    std::uint64_t total_logged = 0;
    for (int t = 0; t < thread_count; ++t) {
        logged[static_cast<std::size_t>(t)] = progress[static_cast<std::size_t>(t)].load();
        total_logged += logged[static_cast<std::size_t>(t)];
    }
    std::vector<std::vector<bool>> seen(thread_count);
    for (int t = 0; t < thread_count; ++t) seen[static_cast<std::size_t>(t)].resize(logged[static_cast<std::size_t>(t)]);
    std::uint64_t landed = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t malformed = 0;
    for (const Destination& destination : destinations) {
        std::vector<std::optional<std::uint64_t>> last(thread_count);
        std::uint64_t out_of_order = 0;
        for (const std::string& line : destination.lines) {
            const auto t = field_value(line, "t");
            const auto n = field_value(line, "n");
            if (!t || !n || *t >= thread_count || *n >= logged[*t]) {
                ++malformed;
                continue;
            }
            if (last[*t] && *n <= *last[*t]) ++out_of_order;
            last[*t] = *n;
            if (seen[*t][*n]) ++duplicates;
            seen[*t][*n] = true;
            ++landed;
        }
        INFO(destination.name << ": " << destination.lines.size() << " records");
        CHECK(out_of_order == 0);
        CHECK_FALSE(destination.lines.empty());  // every kind of destination took part
    }
    INFO(total_logged << " logged, " << accepted << " accepted, " << landed << " landed");
    CHECK(malformed == 0);
    CHECK(duplicates == 0);
    CHECK(landed == accepted);
    CHECK(accepted < total_logged);  // some were logged while no sink took any
}

TEST_CASE("swapping to an equal configuration keeps the sinks it had", "[swap]") {
    const TempDir dir;
    const Config config{.sinks = {{.target = fieldlog::FileSinkOptions{
                                       .path = dir.file("kept.log"), .reopen_check = std::chrono::milliseconds{0}}}}};
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get("swap.kept");
    log.info("one");
    // Move the file away: a kept sink writes on into the moved file, a new one would make a new.
    std::filesystem::rename(dir.file("kept.log"), dir.file("moved.log"));
    fieldlog::configure(config);
    log.info("two");
    fieldlog_test::release_sinks();
    CHECK(read_lines(dir.file("moved.log")).size() == 2);
    CHECK_FALSE(std::filesystem::exists(dir.file("kept.log")));
}

TEST_CASE("a sink the program made is flushed, and stays usable, when a swap drops it", "[swap]") {
    auto sink = std::make_shared<WatchedSink>();
    const Config with_sink{.sinks = {{.target = sink}}};
    fieldlog::configure(with_sink);
    const fieldlog::Logger log = fieldlog::get("swap.program_sink");
    log.info("one");
    fieldlog_test::release_sinks();
    CHECK(sink->flushes.load() >= 1);
    fieldlog::configure(with_sink);  // still usable: it is the program's to reuse
    log.info("two");
    fieldlog_test::release_sinks();
    CHECK(sink->writes.load() == 2);
    CHECK(sink->counters().records == 2);
}

TEST_CASE("no thread writes to a sink after the configure() that dropped it returned", "[swap][concurrent]") {
    constexpr int thread_count = 4;
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    fieldlog::configure({.sinks = {{.target = std::make_shared<WatchedSink>()}}});
    for (int t = 0; t < thread_count; ++t) {
        threads.emplace_back([&] {
            const fieldlog::Logger log = fieldlog::get("swap.late");
            while (!stop.load(std::memory_order_relaxed)) {
                log.info("x", {{"k", 1}});
                std::this_thread::yield();  // leave configure() some of the 2 cores
            }
        });
    }
    std::vector<std::shared_ptr<WatchedSink>> dropped;
    auto current = std::make_shared<WatchedSink>();
    fieldlog::configure({.sinks = {{.target = current}}});
    for (int i = 0; i < 300; ++i) {
        while (current->writes.load() == 0) std::this_thread::yield();  // swap with writers busy
        auto next = std::make_shared<WatchedSink>();
        fieldlog::configure({.sinks = {{.target = next}}});
        current->dropped.store(true);
        dropped.push_back(std::move(current));
        current = std::move(next);
    }
    stop.store(true);
    for (std::thread& thread : threads) thread.join();
    fieldlog_test::release_sinks();
    int late = 0;
    int written = 0;
    for (const auto& sink : dropped) {
        late += sink->late_writes.load();
        written += sink->writes.load();
    }
    CHECK(late == 0);
    CHECK(written > 0);
}

namespace {

/// The running sinks' names and record counts, in configuration order.
std::vector<std::pair<std::string, std::uint64_t>> records_by_sink() {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (const fieldlog::SinkMetrics& sink : fieldlog::metrics().sinks) out.emplace_back(sink.name, sink.counters.records);
    return out;
}

std::string configure_error(const Config& config) {
    try {
        fieldlog::configure(config);
    } catch (const fieldlog::ConfigError& e) {
        return e.what();
    }
    return "(no ConfigError)";
}

}  // namespace

TEST_CASE("a sink keeps its name and its counters across the configure() calls that keep it", "[swap][metrics]") {
    const TempDir dir;
    UdpReceiver receiver;
    const std::string udp = "udp:" + receiver.address();
    auto audit = std::make_shared<fieldlog::MemorySink>();
    const fieldlog::SinkConfig file_a{.target = fieldlog::FileSinkOptions{.path = dir.file("a.log")}};
    const fieldlog::SinkConfig udp_json{.target = fieldlog::UdpSinkOptions{.address = receiver.address()}};
    const fieldlog::SinkConfig udp_logfmt{.target = fieldlog::UdpSinkOptions{.address = receiver.address()},
                                          .format = fieldlog::Format::logfmt};
    const fieldlog::SinkConfig audit_sink{.target = audit, .name = "audit"};
    const fieldlog::Logger log = fieldlog::get("swap.names");

    fieldlog::configure({.sinks = {file_a, udp_json, udp_logfmt, audit_sink}});
    log.info("one");
    log.info("two");
    // Two UDP sinks to one address in two formats are two sinks, each with its own name.
    CHECK(records_by_sink() == std::vector<std::pair<std::string, std::uint64_t>>{
                                   {"file:" + dir.file("a.log"), 2}, {udp, 2}, {udp + "/logfmt", 2}, {"audit", 2}});

    // Kept (same name, same options): counting on, wherever it now stands in the list. Replaced
    // (file B for file A) or new: from zero.
    const fieldlog::SinkConfig file_b{.target = fieldlog::FileSinkOptions{.path = dir.file("b.log")}};
    fieldlog::configure({.sinks = {audit_sink, udp_json, udp_logfmt, file_b}});
    log.info("three");
    CHECK(records_by_sink() == std::vector<std::pair<std::string, std::uint64_t>>{
                                   {"audit", 3}, {udp, 3}, {udp + "/logfmt", 3}, {"file:" + dir.file("b.log"), 1}});
    const std::string text = fieldlog::metrics_text();
    CHECK(text.find("fieldlog_sink_records_total{sink=\"audit\",kind=\"memory\",target=\"\"} 3\n") != std::string::npos);
    CHECK(text.find("fieldlog_sink_records_total{sink=\"" + udp + "/logfmt\",kind=\"udp\",target=\"" +
                    receiver.address() + "\"} 3\n") != std::string::npos);

    // The same sink object under another name is another sink: its count starts again.
    fieldlog::configure({.sinks = {{.target = audit, .name = "audit.v2"}}});
    log.info("four");
    CHECK(records_by_sink() == std::vector<std::pair<std::string, std::uint64_t>>{{"audit.v2", 1}});
    CHECK(audit->lines().size() == 4);
    fieldlog_test::release_sinks();
}

TEST_CASE("made-up sink names never collide, and a name given twice or one file twice is a ConfigError", "[swap][metrics]") {
    const TempDir dir;
    const auto memory = [] { return std::make_shared<fieldlog::MemorySink>(); };
    fieldlog::configure({.sinks = {{.target = memory(), .name = "memory"},
                                   {.target = memory()},
                                   {.target = memory(), .format = fieldlog::Format::logfmt},
                                   {.target = fieldlog::StdoutSinkOptions{.stream = fieldlog::StdStream::err}, .level = Level::off}}});
    CHECK(records_by_sink() == std::vector<std::pair<std::string, std::uint64_t>>{
                                   {"memory", 0}, {"memory#2", 0}, {"memory/logfmt", 0}, {"stderr", 0}});

    const Config same_name{.sinks = {{.target = memory(), .name = "audit"}, {.target = memory(), .name = "audit"}}};
    CHECK(configure_error(same_name) == "sinks[1]: the name \"audit\" is taken by sinks[0]");
    const Config same_name_in_file =
        Config::parse("[[sinks]]\ntype = \"null\"\nname = \"audit\"\n\n[[sinks]]\ntype = \"null\"\nname = \"audit\"\n", "app.toml");
    CHECK(configure_error(same_name_in_file) == "app.toml:5: sinks[1]: the name \"audit\" is taken by app.toml:1: sinks[0]");
    const std::string path = dir.file("one.log");
    const Config same_file{.sinks = {{.target = fieldlog::FileSinkOptions{.path = path}},
                                     {.target = fieldlog::FileSinkOptions{.path = path, .max_size = 1024},
                                      .format = fieldlog::Format::logfmt}}};
    CHECK(configure_error(same_file) == "sinks[1]: writes where sinks[0] does (\"file:" + path +
                                            "\"): a stream, a file or a Sink object takes one place in the list");
    // Rejected: the running set stays.
    CHECK(records_by_sink().size() == 4);
    // Every kind of target has a made-up name (the sinks are made, not connected: nobody listens).
    fieldlog::configure({.sinks = {{.target = fieldlog::SyslogSinkOptions{.address = "127.0.0.1:9"}, .level = Level::off},
                                   {.target = fieldlog::UdpSinkOptions{.address = "127.0.0.1:9"}, .level = Level::off}}});
    CHECK(records_by_sink() ==
          std::vector<std::pair<std::string, std::uint64_t>>{{"syslog:127.0.0.1:9", 0}, {"udp:127.0.0.1:9", 0}});
    fieldlog_test::release_sinks();
}

TEST_CASE("a sink's name is escaped in the Prometheus label", "[metrics]") {
    fieldlog::configure({.sinks = {{.target = std::make_shared<fieldlog::NullSink>(), .name = "a\"b\\c\nd"}}});
    fieldlog::get("swap.label").info("x");
    CHECK(fieldlog::metrics_text().find("fieldlog_sink_records_total{sink=\"a\\\"b\\\\c\\nd\",kind=\"null\",target=\"\"} 1\n") !=
          std::string::npos);
    fieldlog_test::release_sinks();
}

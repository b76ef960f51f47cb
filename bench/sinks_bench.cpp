// SPDX-License-Identifier: MIT
// The UDP sink against spdlog's udp_sink: fields_10 over loopback to a receiver thread that
// drains its socket with recvmmsg, both systems sending the same JSON bytes per datagram
// (spdlog's line ending is set to "", as fieldlog sends the line without its '\n'). Counters:
// allocs_per_op, and delivered (datagrams the receiver got / records logged) to show loss.
#include <benchmark/benchmark.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/details/synchronous_factory.h>  // spdlog 1.10's udp_sink.h uses these without including them
#include <spdlog/logger.h>
#include <spdlog/sinks/udp_sink.h>

#include "alloc_counter.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fixed_iterations.hpp"
#include "workloads.hpp"

namespace {

using namespace fieldlog_bench;

/// A loopback UDP socket drained by its own thread; counts what arrives.
class DrainingReceiver {
public:
    DrainingReceiver() {
        fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const int big = 16 * 1024 * 1024;
        if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0) {
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        }
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0) {
            throw std::runtime_error("cannot bind a loopback UDP socket");
        }
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        const timeval poll{0, 20000};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &poll, sizeof poll);
        thread_ = std::thread([this] { drain(); });
    }
    ~DrainingReceiver() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
    }
    DrainingReceiver(const DrainingReceiver&) = delete;
    DrainingReceiver& operator=(const DrainingReceiver&) = delete;

    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// Datagrams so far, once the socket has been quiet for a moment.
    [[nodiscard]] std::uint64_t settled_count() const {
        std::uint64_t last = received_.load();
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            const std::uint64_t now = received_.load();
            if (now == last) return now;
            last = now;
        }
    }

private:
    void drain() {
        constexpr std::size_t kBatch = 64, kSize = 8192;
        std::vector<char> storage(kBatch * kSize);
        std::vector<mmsghdr> messages(kBatch);
        std::vector<iovec> iov(kBatch);
        for (std::size_t i = 0; i < kBatch; ++i) {
            iov[i] = iovec{storage.data() + i * kSize, kSize};
            messages[i].msg_hdr.msg_iov = &iov[i];
            messages[i].msg_hdr.msg_iovlen = 1;
        }
        while (!stop_.load(std::memory_order_relaxed)) {
            const int n = ::recvmmsg(fd_, messages.data(), kBatch, MSG_WAITFORONE, nullptr);
            if (n > 0) received_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
        }
    }

    int fd_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> received_{0};
    std::thread thread_;
};

enum class Sender { fieldlog_json, fieldlog_rfc5424, spdlog };

struct UdpFixture {
    std::optional<DrainingReceiver> receiver;
    std::optional<fieldlog::Logger> fieldlog_logger;
    std::shared_ptr<spdlog::logger> spdlog_logger;
    std::uint64_t received_before = 0;
};
UdpFixture g_udp;

template <Sender S>
void setup_udp(const benchmark::State& /*state*/) {
    UdpFixture& f = g_udp;
    f.receiver.emplace();
    f.received_before = 0;
    if constexpr (S == Sender::spdlog) {
        auto sink = std::make_shared<spdlog::sinks::udp_sink_mt>(spdlog::sinks::udp_sink_config("127.0.0.1", f.receiver->port()));
        f.spdlog_logger = std::make_shared<spdlog::logger>(kLoggerName, sink);
        f.spdlog_logger->set_formatter(
            std::make_unique<spdlog::pattern_formatter>(spdlog_pattern(), spdlog::pattern_time_type::utc, ""));
        f.spdlog_logger->set_level(spdlog::level::info);
    } else {
        fieldlog::UdpSinkOptions udp;
        udp.address = "127.0.0.1:" + std::to_string(f.receiver->port());
        udp.framing = S == Sender::fieldlog_json ? fieldlog::UdpFraming::json : fieldlog::UdpFraming::rfc5424;
        udp.max_datagram = 8192;  // fields_10 is ~1.2 KB; nothing is cut in either framing
        fieldlog::SinkConfig sink;
        sink.target = udp;
        fieldlog::Config config;
        config.sinks = {sink};
        fieldlog::configure(config);
        f.fieldlog_logger = fieldlog::get(kLoggerName);
    }
}

void teardown_udp(const benchmark::State& /*state*/) {
    UdpFixture& f = g_udp;
    f.fieldlog_logger.reset();
    f.spdlog_logger.reset();
    const fieldlog::Config all_off{.level = fieldlog::Level::off};  // the default stdout sink, writing nothing
    fieldlog::configure(all_off);
    f.receiver.reset();
}

template <Sender S>
void run_udp(benchmark::State& state) {
    UdpFixture& f = g_udp;
    const auto call = [&] {
        if constexpr (S == Sender::spdlog) {
            log_fields_10(*f.spdlog_logger);
        } else {
            log_fields_10(*f.fieldlog_logger);
        }
    };
    call();  // warm-up: thread buffers, first datagram
    const std::uint64_t received_before = f.receiver->settled_count();
    const std::uint64_t allocations_before = allocations();
    for (auto _ : state) call();
    const double calls = static_cast<double>(state.iterations());
    state.counters["allocs_per_op"] = static_cast<double>(allocations() - allocations_before) / calls;
    state.counters["delivered"] = static_cast<double>(f.receiver->settled_count() - received_before) / calls;
}

const bool registered = [] {
    benchmark::RegisterBenchmark("fieldlog/fields_10/udp", &run_udp<Sender::fieldlog_json>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_udp<Sender::fieldlog_json>)
        ->Teardown(&teardown_udp);
    benchmark::RegisterBenchmark("spdlog/fields_10/udp", &run_udp<Sender::spdlog>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_udp<Sender::spdlog>)
        ->Teardown(&teardown_udp);
    benchmark::RegisterBenchmark("fieldlog/fields_10/udp_rfc5424", &run_udp<Sender::fieldlog_rfc5424>)
        ->Apply(fieldlog_bench::fixed_iterations)
        ->Setup(&setup_udp<Sender::fieldlog_rfc5424>)
        ->Teardown(&teardown_udp);
    return true;
}();

}  // namespace

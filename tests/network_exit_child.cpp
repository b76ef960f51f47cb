// SPDX-License-Identifier: MIT
// A child process for tests/network_exit_test.cpp: configures one network sink (OTLP, syslog
// over TCP, or UDP) with a short close bound, logs a fixed number of records and then ends one
// way. Before the end begins it prints `end_ns=<CLOCK_MONOTONIC>` so the parent can time the end
// alone; where the sink's counters outlive the end it prints them as `dropped=<n>`.
//
//   fieldlog_network_exit_child <otlp|syslog|udp> <address> <how> <records>
//   how: return | exit | shutdown | replace | destroy | sigterm | crash | crash_async
//     replace: a configure() without the sink; destroy: the program's own sink, left out by a
//     configure() and then released; sigterm: install_signal_handlers(), then wait for SIGTERM;
//     crash: SIGSEGV (fieldlog's crash handler, installed by configure()); crash_async: the same
//     in async mode.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "fieldlog/fieldlog.hpp"
#include "fieldlog/sinks/otlp_sink.hpp"

namespace {

using namespace std::chrono_literals;

constexpr auto kBound = 1s;  // the sinks' close bound: shutdown_timeout, drain_timeout

std::int64_t monotonic_ns() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void say_end_begins() {
    std::printf("end_ns=%lld\n", static_cast<long long>(monotonic_ns()));
    std::fflush(stdout);
}

/// The sink's dropped count as metrics() sees it, if it still lists the sink.
void print_dropped() {
    for (const fieldlog::SinkMetrics& sink : fieldlog::metrics().sinks) {
        if (sink.kind == "otlp" || sink.kind == "syslog" || sink.kind == "udp") {
            std::printf("dropped=%llu\n", static_cast<unsigned long long>(sink.counters.dropped));
        }
    }
    std::fflush(stdout);
}

fieldlog::SinkTarget options_for(std::string_view kind, const std::string& address, std::string_view how) {
    if (kind == "otlp") {
        // Before a crash the sink's thread sends nothing on its own: what arrives, the crash path sent.
        return fieldlog::OtlpSinkOptions{.endpoint = "http://" + address + "/v1/logs",
                                         .linger = how.starts_with("crash") ? std::chrono::milliseconds(60s) : 20ms,
                                         .flush_timeout = kBound,
                                         .shutdown_timeout = kBound,
                                         .retry_initial = 50ms,
                                         .retry_max = 200ms};
    }
    if (kind == "syslog") return fieldlog::SyslogSinkOptions{.address = address, .reconnect_max = 100ms, .drain_timeout = kBound};
    return fieldlog::UdpSinkOptions{.address = address};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s otlp|syslog|udp address how records\n", argv[0]);
        return 2;
    }
    const std::string_view kind = argv[1];
    const std::string address = argv[2];
    const std::string_view how = argv[3];
    const int records = std::atoi(argv[4]);

    // Registered before configure(): runs after fieldlog's exit handler.
    std::atexit(print_dropped);
    fieldlog::SinkTarget target = options_for(kind, address, how);
    if (how == "destroy") target = target.make();  // the program's own sink object
    fieldlog::configure({.async = {.enabled = how == "crash_async"}, .sinks = {{.target = target}}});
    if (how == "sigterm") fieldlog::install_signal_handlers();

    const fieldlog::Logger log = fieldlog::get("exit");
    for (int n = 0; n < records; ++n) log.info("exit-record", {{"n", n}});
    if (kind == "udp") print_dropped();  // nothing is held: the count is final now

    if (how == "sigterm") {
        std::printf("ready\n");
        std::fflush(stdout);
        for (;;) ::pause();
    }
    if (how == "destroy") {
        fieldlog::configure({.sinks = {{.target = std::make_shared<fieldlog::NullSink>()}}});
        say_end_begins();
        target = fieldlog::SinkTarget{};  // the last reference: the sink's destructor closes it
        return 0;
    }
    say_end_begins();
    if (how.starts_with("crash")) ::raise(SIGSEGV);
    if (how == "exit") std::exit(0);
    if (how == "shutdown") fieldlog::shutdown();
    if (how == "replace") fieldlog::configure({.sinks = {{.target = std::make_shared<fieldlog::NullSink>()}}});
    return 0;
}

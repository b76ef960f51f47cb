// SPDX-License-Identifier: MIT
// Every way a program ends, for every network sink and every kind of receiver: a child
// (tests/network_exit_child.cpp) logs a fixed number of records to an OTLP, syslog (TCP) or UDP
// sink whose receiver is down, slow or answering, then ends by returning from main, exit(),
// shutdown(), a configure() without the sink, the release of its own sink object, or SIGTERM.
// Each record is delivered or counted dropped, the drop is said on stderr once, and the end
// takes at most the sink's close bound (docs/reliability.md), with slack. UDP has no slow
// receiver: a datagram is sent or refused at once. All children run at once. A crash, for the
// OTLP sink: what it held and the `fatal` record arrive (docs/otlp.md#crashes).
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fieldlog/sinks/otlp_sink.hpp"
#include "support/loopback_receiver.hpp"
#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;
using Kind = fieldlog_test::LoopbackReceiver::Kind;

constexpr int kRecords = 50;
constexpr auto kBound = 1s;   // the child's shutdown_timeout and drain_timeout
constexpr auto kSlack = 2s;   // process start-up and a loaded machine

enum class Peer { down, slow, answering };

struct Case {
    std::string sink;  // otlp, syslog, udp
    Peer peer;
    std::string how;
};

/// Why this build can make no OTLP sink (the minimal variant), or nothing if it can.
std::optional<std::string> otlp_refusal() {
    try {
        fieldlog::make_otlp_sink({.endpoint = "http://127.0.0.1:9/v1/logs", .shutdown_timeout = 0s});
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return std::nullopt;
}

std::vector<Case> all_cases(bool with_otlp) {
    std::vector<Case> cases;
    for (const char* sink : {"otlp", "syslog", "udp"}) {
        if (std::string_view(sink) == "otlp" && !with_otlp) continue;
        for (const Peer peer : {Peer::down, Peer::slow, Peer::answering}) {
            if (std::string_view(sink) == "udp" && peer == Peer::slow) continue;  // UDP cannot be slow
            for (const char* how : {"return", "exit", "shutdown", "replace", "destroy", "sigterm"}) {
                cases.push_back({sink, peer, how});
            }
        }
    }
    return cases;
}

const char* name_of(Peer peer) {
    switch (peer) {
        case Peer::down: return "down";
        case Peer::slow: return "slow";
        case Peer::answering: return "answering";
    }
    return "";
}

std::optional<Kind> receiver_kind(const Case& c) {
    if (c.peer == Peer::down) return std::nullopt;
    if (c.sink == "otlp") return c.peer == Peer::slow ? Kind::http_silent : Kind::http_answering;
    if (c.sink == "syslog") return c.peer == Peer::slow ? Kind::frames_unread : Kind::frames;
    return Kind::datagrams;
}

std::int64_t monotonic_ns() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

/// The number after `key=` on a line of `text`, if there is one.
std::optional<long long> value_of(const std::string& text, const std::string& key) {
    const std::size_t at = text.find(key + "=");
    if (at == std::string::npos) return std::nullopt;
    return std::stoll(text.substr(at + key.size() + 1));
}

struct Outcome {
    int status = 0;
    std::chrono::nanoseconds ended_in{};  ///< from the end's beginning to the process's end
    std::size_t delivered = 0;
    std::optional<long long> dropped_in_metrics;
    long long dropped_said = 0;  ///< the counts the close lines on stderr give
    int close_lines = 0;
    std::string stderr_text;
    bool stack_delivered = false;  ///< an answered request held the `fatal` record's stack
};

/// One child and its receiver, from start to end.
struct Run {
    Case c;
    std::unique_ptr<fieldlog_test::LoopbackReceiver> receiver;
    std::string out;
    std::string err;
    int pid = 0;
    std::int64_t signalled_ns = 0;
    std::int64_t exited_ns = 0;
    int status = 0;
};

std::vector<Outcome> run_all(const std::vector<Case>& cases, const fieldlog_test::TempDir& dir) {
    std::vector<Run> runs(cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        Run& run = runs[i];
        run.c = cases[i];
        std::string address;
        if (const std::optional<Kind> kind = receiver_kind(run.c)) {
            run.receiver = std::make_unique<fieldlog_test::LoopbackReceiver>(*kind, "exit-record");
            address = run.receiver->address();
        } else {
            address = "127.0.0.1:" + std::to_string(fieldlog_test::unused_port(run.c.sink == "udp" ? SOCK_DGRAM : SOCK_STREAM));
        }
        run.out = dir.file("out" + std::to_string(i));
        run.err = dir.file("err" + std::to_string(i));
        run.pid = fieldlog_test::spawn_process(
            {FIELDLOG_NETWORK_EXIT_CHILD, run.c.sink, address, run.c.how, std::to_string(kRecords)}, run.out, run.err);
    }
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    for (std::size_t left = runs.size(); left > 0;) {
        for (Run& run : runs) {
            if (run.exited_ns != 0) continue;
            if (run.c.how == "sigterm" && run.signalled_ns == 0 &&
                fieldlog_test::read_file(run.out).find("ready") != std::string::npos) {
                run.signalled_ns = monotonic_ns();
                ::kill(run.pid, SIGTERM);
            }
            if (::waitpid(run.pid, &run.status, WNOHANG) == run.pid) {
                run.exited_ns = monotonic_ns();
                --left;
            } else if (std::chrono::steady_clock::now() > deadline) {
                ::kill(run.pid, SIGKILL);
            }
        }
        std::this_thread::sleep_for(1ms);
    }
    std::vector<Outcome> outcomes;
    for (Run& run : runs) {
        Outcome o;
        o.status = run.status;
        const std::string out = fieldlog_test::read_file(run.out);
        const std::int64_t began = run.c.how == "sigterm" ? run.signalled_ns : value_of(out, "end_ns").value_or(0);
        o.ended_in = std::chrono::nanoseconds(run.exited_ns - began);
        o.dropped_in_metrics = value_of(out, "dropped");
        if (run.receiver) {
            run.receiver->read_rest();
            o.delivered = run.receiver->records();
            o.stack_delivered = run.receiver->answered_with("exception.stacktrace");
        }
        o.stderr_text = fieldlog_test::read_file(run.err);
        // "close: <n> records not delivered within …", once a sink; no std::regex, which GCC's
        // -Wmaybe-uninitialized misreads under AddressSanitizer.
        constexpr std::string_view kClose = "close: ";
        constexpr std::string_view kRest = " records not delivered within ";
        for (std::size_t at = o.stderr_text.find(kClose); at != std::string::npos;
             at = o.stderr_text.find(kClose, at + kClose.size())) {
            const std::size_t digits = at + kClose.size();
            const std::size_t end = o.stderr_text.find_first_not_of("0123456789", digits);
            if (end == digits || end == std::string::npos ||
                o.stderr_text.compare(end, kRest.size(), kRest) != 0) {
                continue;
            }
            ++o.close_lines;
            o.dropped_said += std::stoll(o.stderr_text.substr(digits, end - digits));
        }
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

}  // namespace

TEST_CASE("Every end of a program closes each network sink within its bound, every record delivered or counted dropped",
          "[network_exit]") {
    static const std::optional<std::string> no_otlp = otlp_refusal();
    if (no_otlp) WARN("the OTLP cases are left out: " << *no_otlp);
    static const std::vector<Case> cases = all_cases(!no_otlp);
    static const fieldlog_test::TempDir dir;
    static const std::vector<Outcome> outcomes = run_all(cases, dir);  // once: Catch enters once per section
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        const Outcome& o = outcomes[i];
        DYNAMIC_SECTION(c.sink << ", receiver " << name_of(c.peer) << ", " << c.how) {
            INFO("stderr: " << o.stderr_text);
            if (c.how == "sigterm") {
                REQUIRE(WIFSIGNALED(o.status));
                CHECK(WTERMSIG(o.status) == SIGTERM);
            } else {
                REQUIRE(WIFEXITED(o.status));
                CHECK(WEXITSTATUS(o.status) == 0);
            }
            const auto bound = c.sink == "udp" ? 0s : kBound;
            CHECK(o.ended_in < bound + kSlack);
            if (c.sink == "udp") {
                // A datagram the kernel took is gone from the sink's sight; only a refusal
                // (ICMP's port unreachable, seen at the next send) can be counted.
                REQUIRE(o.dropped_in_metrics.has_value());
                if (c.peer == Peer::answering) {
                    CHECK(o.delivered == kRecords);
                    CHECK(*o.dropped_in_metrics == 0);
                } else {
                    CHECK(o.delivered == 0);
                    CHECK(*o.dropped_in_metrics > 0);
                    CHECK(*o.dropped_in_metrics <= kRecords);
                }
                CHECK(o.close_lines == 0);  // nothing is held to drop at the end
                continue;
            }
            CHECK(static_cast<long long>(o.delivered) + o.dropped_said == kRecords);
            CHECK(o.close_lines == (o.dropped_said > 0 ? 1 : 0));
            if (o.dropped_in_metrics) CHECK(*o.dropped_in_metrics == o.dropped_said);
            if (c.how == "return" || c.how == "exit") CHECK(o.dropped_in_metrics.has_value());
            if (c.peer == Peer::answering) CHECK(o.delivered == kRecords);
            if (c.peer == Peer::down) CHECK(o.dropped_said == kRecords);
        }
    }
}

TEST_CASE("A crash sends what the OTLP sink holds, then the fatal record with its stack, within a second",
          "[network_exit]") {
    if (const std::optional<std::string> no_otlp = otlp_refusal()) {
        WARN("the OTLP cases are left out: " << *no_otlp);
        return;
    }
    std::vector<Case> cases;
    for (const Peer peer : {Peer::down, Peer::slow, Peer::answering}) {
        for (const char* how : {"crash", "crash_async"}) cases.push_back({"otlp", peer, how});
    }
    static const fieldlog_test::TempDir dir;
    static const std::vector<Outcome> outcomes = run_all(cases, dir);
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        const Outcome& o = outcomes[i];
        DYNAMIC_SECTION("receiver " << name_of(c.peer) << ", " << c.how) {
            INFO("stderr: " << o.stderr_text);
            REQUIRE(WIFSIGNALED(o.status));
            CHECK(WTERMSIG(o.status) == SIGSEGV);
            CHECK(o.ended_in < 1s + kSlack);  // the crash path's requests, one second together
            if (c.peer == Peer::answering) {
                // At least: a batch the sink's thread was sending when the crash came may
                // arrive twice.
                CHECK(o.delivered >= kRecords);
                CHECK(o.stack_delivered);
            } else {
                CHECK(o.delivered == 0);
            }
        }
    }
}

// SPDX-License-Identifier: MIT
// One burst of records from one thread to the journald at /run/systemd/journal/socket, through
// fieldlog's journald sink (sync or async with its default when_full = wait; sync with
// when_full = drop) or through libsystemd's sd_journal_send as the reference, with the same
// fields. Prints what the caller waited per
// record; bench/journald_burst.py runs it against a journald of its own and counts what the
// journal took.
//
//   fieldlog_journald_burst sync|async|drop|sd_journal_send COUNT
//
// prints: MODE records N dropped N seconds S p50_ns N p99_ns N max_ns N
// (dropped: as the sink counted them, or the sd_journal_send calls that failed; seconds: until
// the last record was handed to the socket, an async writer's flush included).
#include <systemd/sd-journal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fieldlog/fieldlog.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kPad = "0123456789abcdef0123456789abcdef0123456789abcdef";
constexpr const char* kTimestamp = "2026-11-30T08:38:11.123456789Z";  // as long as the sink's FIELDLOG_TS

fieldlog::Timestamp fixed_clock() noexcept { return fieldlog::Timestamp(1796027891, 123456789); }

/// Calls `log(seq)` for seq 0..count-1 and returns how long each call took, in nanoseconds.
template <typename Log>
std::vector<std::int64_t> timed_calls(long count, Log&& log) {
    std::vector<std::int64_t> waits(static_cast<std::size_t>(count));
    for (long seq = 0; seq < count; ++seq) {
        const Clock::time_point start = Clock::now();
        log(seq);
        waits[static_cast<std::size_t>(seq)] = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    }
    return waits;
}

void print(std::string_view mode, std::vector<std::int64_t> waits, std::uint64_t dropped, double seconds) {
    std::sort(waits.begin(), waits.end());
    const auto at = [&](double quantile) {
        return static_cast<long long>(waits[static_cast<std::size_t>(quantile * static_cast<double>(waits.size() - 1))]);
    };
    std::printf("%.*s records %zu dropped %llu seconds %.3f p50_ns %lld p99_ns %lld max_ns %lld\n",
                static_cast<int>(mode.size()), mode.data(), waits.size(), static_cast<unsigned long long>(dropped),
                seconds, at(0.50), at(0.99), at(1.0));
}

int fieldlog_burst(std::string_view mode, long count) {
    const bool async = mode == "async";
    const std::string identifier = "fieldlog-" + std::string(mode);
    auto sink = std::make_shared<fieldlog::JournaldSink>(fieldlog::JournaldSinkOptions{
        .identifier = identifier,
        .when_full = mode == "drop" ? fieldlog::JournaldWhenFull::drop : fieldlog::JournaldWhenFull::wait});
    fieldlog::configure({.level = fieldlog::Level::info,
                         .async = {.enabled = async},
                         .sinks = {{.target = std::shared_ptr<fieldlog::Sink>(sink)}},
                         .clock = &fixed_clock});
    const fieldlog::Logger log = fieldlog::get("throughput");
    const Clock::time_point start = Clock::now();
    std::vector<std::int64_t> waits = timed_calls(count, [&](long seq) { log.info("record", {{"seq", seq}, {"pad", kPad}}); });
    fieldlog::flush();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    print(identifier, std::move(waits), sink->counters().dropped, seconds);
    fieldlog::shutdown();
    return 0;
}

int sd_journal_burst(long count) {
    std::uint64_t failed = 0;
    const Clock::time_point start = Clock::now();
    std::vector<std::int64_t> waits = timed_calls(count, [&](long seq) {
        const int sent = sd_journal_send("PRIORITY=6", "SYSLOG_IDENTIFIER=sd_journal_send", "FIELDLOG_TS=%s", kTimestamp,
                                         "FIELDLOG_LOGGER=throughput", "MESSAGE=record", "SEQ=%ld", seq, "PAD=%s",
                                         kPad.data(), nullptr);
        if (sent < 0) ++failed;
    });
    print("sd_journal_send", std::move(waits), failed, std::chrono::duration<double>(Clock::now() - start).count());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view mode = argc == 3 ? argv[1] : "";
    const long count = argc == 3 ? std::atol(argv[2]) : 0;
    if (count <= 0 || (mode != "sync" && mode != "async" && mode != "drop" && mode != "sd_journal_send")) {
        std::fprintf(stderr, "usage: fieldlog_journald_burst sync|async|drop|sd_journal_send COUNT\n");
        return 2;
    }
    return mode == "sd_journal_send" ? sd_journal_burst(count) : fieldlog_burst(mode, count);
}

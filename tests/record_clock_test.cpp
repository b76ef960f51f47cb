// SPDX-License-Identifier: MIT
// The record clock: system_clock time read through the CPU's counter between anchors. Each
// reading is bracketed by two system_clock reads; the counter's path must stay inside them
// (give or take the stated error), must actually be taken where the counter can be trusted (on
// x86-64: the kernel keeps time with the TSC or the CPU declares it invariant; on arm64: always),
// must follow a step of the system clock, and must be left once the counter loses
// CLOCK_MONOTONIC's pace. Steps and a stopped counter are made by shifting what clock_gettime
// returns on the test's thread (below).
#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "record/record_clock.hpp"
#include "support/test_support.hpp"

namespace {

/// Added to what clock_gettime returns for each clock on this thread: a step of the system
/// clock (CLOCK_REALTIME), or CLOCK_MONOTONIC running on while the counter stood still.
thread_local std::int64_t t_realtime_shift_nanos = 0;
thread_local std::int64_t t_monotonic_shift_nanos = 0;

}  // namespace

// The library's samples of the system clocks and the test's brackets (system_clock::now())
// both call clock_gettime: shifted here alike.
extern "C" int clock_gettime(clockid_t clock, timespec* time) noexcept {
    using Reader = int (*)(clockid_t, timespec*);
    static const auto real = reinterpret_cast<Reader>(::dlsym(RTLD_NEXT, "clock_gettime"));
    const int result = real(clock, time);
    const std::int64_t shift = clock == CLOCK_REALTIME    ? t_realtime_shift_nanos
                               : clock == CLOCK_MONOTONIC ? t_monotonic_shift_nanos
                                                          : 0;
    if (result == 0 && shift != 0) {
        const std::int64_t nanos = time->tv_sec * 1'000'000'000 + time->tv_nsec + shift;
        time->tv_sec = nanos / 1'000'000'000;
        time->tv_nsec = nanos % 1'000'000'000;
    }
    return result;
}

namespace {

using std::chrono::nanoseconds;
using std::chrono::system_clock;

/// An anchor sample may be off by half a sample (at most ~5 µs); the counter's rate, measured
/// over 50 ms or more, adds well under a microsecond across one anchor span.
constexpr std::int64_t kToleranceNanos = 50'000;

std::int64_t nanos_of(fieldlog::Timestamp t) { return t.seconds * 1'000'000'000 + t.nanos; }
std::int64_t nanos_of(system_clock::time_point t) {
    return std::chrono::duration_cast<nanoseconds>(t.time_since_epoch()).count();
}

/// Whether the record clock should read the counter: on arm64 always; on x86-64 where the kernel
/// keeps time with it, or (as the kernel reports CPUID's invariant-counter bit) it is invariant.
/// Read here rather than asked of the library: the test checks the library's own detection.
bool counter_expected() {
    if (!FIELDLOG_COUNTER_CLOCK) return false;  // this build reads no counter: an architecture without one, or portable
#if defined(__aarch64__)
    return true;
#else
    std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string name;
    if (source >> name && name == "tsc") return true;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.starts_with("flags")) return (line + " ").find(" nonstop_tsc ") != std::string::npos;
    }
    return false;
#endif
}

/// Reads `clock` between two system_clock reads for `duration`; returns how many readings fell
/// outside their bracket by more than the tolerance.
int readings_outside_bracket(fieldlog::detail::RecordClock& clock, std::chrono::milliseconds duration) {
    int outside = 0;
    const auto stop = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < stop) {
        const std::int64_t before = nanos_of(system_clock::now());
        const std::int64_t reading = nanos_of(clock.now());
        const std::int64_t after = nanos_of(system_clock::now());
        if (reading < before - kToleranceNanos || reading > after + kToleranceNanos) {
            UNSCOPED_INFO("reading " << reading << " outside [" << before << ", " << after << "]");
            ++outside;
        }
    }
    return outside;
}

}  // namespace

TEST_CASE("the record clock reads system_clock time, through the counter where the kernel uses it",
          "[record_clock]") {
    fieldlog::detail::RecordClock clock;
    // The counter's rate is trusted after 50 ms of process life; 300 ms covers that and
    // hundreds of re-anchorings.
    CHECK(readings_outside_bracket(clock, std::chrono::milliseconds(300)) == 0);
    if (!counter_expected()) FIELDLOG_TEST_SKIP("the counter is neither the kernel's clock nor invariant: every reading is system_clock's");
    CHECK(clock.interpolating());
}

TEST_CASE("every thread's record clock stays on system_clock time", "[record_clock][concurrent]") {
    constexpr int kThreads = 4;
    std::vector<int> outside(kThreads, -1);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&outside, i] {
            fieldlog::detail::RecordClock clock;
            outside[static_cast<std::size_t>(i)] = readings_outside_bracket(clock, std::chrono::milliseconds(100));
        });
    }
    for (std::thread& t : threads) t.join();
    for (const int n : outside) CHECK(n == 0);
}

TEST_CASE("records carry the record clock's time unless the configuration names a clock", "[record_clock]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.timestamp = {.precision = fieldlog::TimestampPrecision::unix_nanos},
                         .sinks = {{.target = sink}}});
    const auto log = fieldlog::get("clock");
    std::vector<std::pair<std::int64_t, std::int64_t>> brackets;
    const auto stop = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (std::chrono::steady_clock::now() < stop) {
        const std::int64_t before = nanos_of(system_clock::now());
        log.info("tick");
        brackets.emplace_back(before, nanos_of(system_clock::now()));
    }
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == brackets.size());
    int outside = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::int64_t ts = std::stoll(lines[i].substr(std::string_view("{\"ts\":").size()));
        if (ts < brackets[i].first - kToleranceNanos || ts > brackets[i].second + kToleranceNanos) {
            UNSCOPED_INFO(lines[i] << " outside [" << brackets[i].first << ", " << brackets[i].second << "]");
            ++outside;
        }
    }
    CHECK(outside == 0);
    fieldlog_test::release_sinks();
}

TEST_CASE("the counter's pace check allows NTP's slew and sampling error, not another rate", "[record_clock]") {
    constexpr std::uint64_t kNanosPerTick = 1'717'986'918;  // 0.4 ns (2.5 GHz) in 32.32
    constexpr double kHourTicks = 9e12;
    constexpr double kHourNanos = 3.6e12;
    struct Case {
        const char* what;
        std::uint64_t ticks;
        std::int64_t measured;
        bool kept;
    };
    const Case cases[] = {
        {"1 ms, exact", 2'500'000, 1'000'000, true},
        {"1 ms, samples 45 us apart", 2'500'000, 1'045'000, true},
        {"1 ms, 60 us off", 2'500'000, 1'060'000, false},
        {"1 h, NTP slewing by 500 ppm", static_cast<std::uint64_t>(kHourTicks),
         static_cast<std::int64_t>(kHourNanos * 1.0005), true},
        {"1 h, counter 2% fast (another host's rate)", static_cast<std::uint64_t>(kHourTicks),
         static_cast<std::int64_t>(kHourNanos / 1.02), false},
        {"counter stopped for a second", 0, 1'000'000'000, false},
        {"monotonic time went back", 2'500'000, -1, false},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        CHECK(fieldlog::detail::counter_kept_pace(c.ticks, kNanosPerTick, c.measured) == c.kept);
    }
}

TEST_CASE("a step of the system clock shows in the record clock's readings within 1 ms", "[record_clock]") {
    struct Restore {
        ~Restore() { t_realtime_shift_nanos = 0; }
    } restore;
    fieldlog::detail::RecordClock clock;
    CHECK(readings_outside_bracket(clock, std::chrono::milliseconds(100)) == 0);
    for (const std::int64_t step : {std::int64_t{3'600'000'000'000}, std::int64_t{-7'200'000'000'000}}) {
        INFO("stepped by " << step << " ns");
        t_realtime_shift_nanos += step;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the anchor span
        CHECK(readings_outside_bracket(clock, std::chrono::milliseconds(20)) == 0);
        // A step moves the time, not the rate: the counter stays trusted.
        CHECK(clock.interpolating() == counter_expected());
    }
}

TEST_CASE("a counter that stood still for a second is caught at the next anchor, and every record clock leaves it",
          "[record_clock]") {
    struct Restore {
        ~Restore() {
            t_monotonic_shift_nanos = 0;
            fieldlog::detail::g_record_counter_distrusted.store(false);
        }
    } restore;
    fieldlog::detail::RecordClock clock;
    CHECK(readings_outside_bracket(clock, std::chrono::milliseconds(100)) == 0);
    if (!counter_expected()) FIELDLOG_TEST_SKIP("the counter is neither the kernel's clock nor invariant: no counter to leave");
    CHECK(clock.interpolating());
    // Another thread's clock, on the counter too; its clocks are not shifted, so only the first
    // clock's finding can make it leave the counter.
    fieldlog::detail::RecordClock other;
    bool other_interpolating = false;
    std::thread([&] {
        (void)readings_outside_bracket(other, std::chrono::milliseconds(5));
        other_interpolating = other.interpolating();
    }).join();
    CHECK(other_interpolating);
    // CLOCK_MONOTONIC a second ahead of what the counter counted: so the next anchor finds it.
    t_monotonic_shift_nanos = 1'000'000'000;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the anchor span
    CHECK(readings_outside_bracket(clock, std::chrono::milliseconds(20)) == 0);
    CHECK(fieldlog::detail::g_record_counter_distrusted.load());
    CHECK_FALSE(clock.interpolating());
    // The other thread's clock leaves the counter at its own next anchor.
    int other_outside = -1;
    std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        other_outside = readings_outside_bracket(other, std::chrono::milliseconds(5));
        other_interpolating = other.interpolating();
    }).join();
    CHECK(other_outside == 0);
    CHECK_FALSE(other_interpolating);
}

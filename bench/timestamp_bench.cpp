// SPDX-License-Identifier: MIT
// The `timestamp` workload: one RFC 3339 UTC timestamp with 9 fraction digits per call, written
// by fieldlog's append_rfc3339 (the per-thread cached minute: the same second, a new second;
// a new minute or a new day every call; a named zone) and by date::format, fmt's chrono formatting and gmtime_r + strftime.
// Each benchmark counts global operator new calls (counter allocs_per_op).
#include <benchmark/benchmark.h>
#include <date/date.h>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <string>

#include "alloc_counter.hpp"
#include "fieldlog/timestamp.hpp"
#include "fixed_iterations.hpp"

namespace {

constexpr std::int64_t base_second = 1'796'027'891;  // 2026-11-30T08:38:11Z
constexpr std::uint32_t nanos_step = 7'919'111;      // a prime number of ns: every digit varies

/// The next fraction within the same second.
std::uint32_t next_nanos(std::uint32_t nanos) {
    nanos += nanos_step;
    return nanos >= 1'000'000'000 ? nanos - 1'000'000'000 : nanos;
}

/// Runs `write(second, nanos)` once per iteration and sets allocs_per_op; the time moves on by
/// `step` seconds per call: 0 stays in one second and 1 moves within the minute (fieldlog's
/// cached path while the minute lasts), 61 is a new minute every call, one day and a second a
/// new date every call (the whole civil computation).
template <typename Write>
void run(benchmark::State& state, std::int64_t step, Write write, std::int64_t first_second = base_second) {
    std::int64_t second = first_second;
    std::uint32_t nanos = 0;
    write(second, nanos);  // warm-up: zone rules, thread cache, library statics
    const std::uint64_t before = fieldlog_bench::allocations();
    for (auto _ : state) {
        nanos = next_nanos(nanos);
        second += step;
        write(second, nanos);
    }
    state.counters["allocs_per_op"] =
        static_cast<double>(fieldlog_bench::allocations() - before) / static_cast<double>(state.iterations());
}

constexpr std::int64_t same_second = 0;
constexpr std::int64_t new_second = 1;
constexpr std::int64_t new_minute = 61;
constexpr std::int64_t new_day = 86401;

void fieldlog_timestamp(benchmark::State& state, std::int64_t step, fieldlog::TimestampFormat format,
                        std::int64_t first_second = base_second) {
    char buf[fieldlog::max_rfc3339_size];
    run(state, step, [&](std::int64_t second, std::uint32_t nanos) {
        char* end = fieldlog::append_rfc3339(buf, {second, nanos}, format);
        benchmark::DoNotOptimize(end);
        benchmark::ClobberMemory();
    }, first_second);
}

void fieldlog_cached(benchmark::State& state) { fieldlog_timestamp(state, same_second, {}); }
void fieldlog_new_second(benchmark::State& state) { fieldlog_timestamp(state, new_second, {}); }
void fieldlog_uncached(benchmark::State& state) { fieldlog_timestamp(state, new_minute, {}); }
void fieldlog_new_day(benchmark::State& state) { fieldlog_timestamp(state, new_day, {}); }
void fieldlog_berlin(benchmark::State& state) {
    fieldlog_timestamp(state, same_second, {.zone = fieldlog::TimeZone::named("Europe/Berlin")});
}
void fieldlog_berlin_uncached(benchmark::State& state) {
    fieldlog_timestamp(state, new_minute, {.zone = fieldlog::TimeZone::named("Europe/Berlin")});
}
// A new date every call in a year of the zone's listed transitions, and in one its TZif footer
// rule governs (after 2037): the rule in force is looked up, or worked out, on each new date.
void fieldlog_berlin_new_day(benchmark::State& state) {
    fieldlog_timestamp(state, new_day, {.zone = fieldlog::TimeZone::named("Europe/Berlin")});
}
void fieldlog_berlin_2050_new_day(benchmark::State& state) {
    constexpr std::int64_t in_2050 = 2'551'000'000;  // 2050-11-02
    fieldlog_timestamp(state, new_day, {.zone = fieldlog::TimeZone::named("Europe/Berlin")}, in_2050);
}

void date_format(benchmark::State& state) {
    run(state, same_second, [](std::int64_t second, std::uint32_t nanos) {
        const date::sys_time<std::chrono::nanoseconds> t{std::chrono::seconds{second} + std::chrono::nanoseconds{nanos}};
        std::string s = date::format("%FT%TZ", t);
        benchmark::DoNotOptimize(s.data());
    });
}

void fmt_chrono(benchmark::State& state) {
    fmt::memory_buffer buf;
    run(state, same_second, [&](std::int64_t second, std::uint32_t nanos) {
        buf.clear();
        // fmt 9 formats a time point's calendar through std::tm, without the fraction.
        const date::sys_seconds t{std::chrono::seconds{second}};
        fmt::format_to(std::back_inserter(buf), "{:%Y-%m-%dT%H:%M:%S}.{:09}Z", t, nanos);
        benchmark::DoNotOptimize(buf.data());
    });
}

void libc_strftime(benchmark::State& state) {
    char buf[64];
    run(state, same_second, [&](std::int64_t second, std::uint32_t nanos) {
        const auto t = static_cast<std::time_t>(second);
        std::tm tm{};
        gmtime_r(&t, &tm);
        const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
        std::snprintf(buf + n, sizeof buf - n, ".%09uZ", nanos);
        benchmark::DoNotOptimize(buf);
    });
}

}  // namespace

BENCHMARK(fieldlog_cached)->Name("fieldlog/timestamp/cached")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fieldlog_new_second)->Name("fieldlog/timestamp/new_second")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fieldlog_uncached)->Name("fieldlog/timestamp/uncached")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fieldlog_new_day)->Name("fieldlog/timestamp/new_day")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fieldlog_berlin)->Name("fieldlog/timestamp/berlin")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fieldlog_berlin_new_day)->Name("fieldlog/timestamp/berlin_new_day")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fieldlog_berlin_2050_new_day)->Name("fieldlog/timestamp/berlin_2050_new_day")
    ->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fieldlog_berlin_uncached)->Name("fieldlog/timestamp/berlin_uncached")
    ->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(date_format)->Name("date/timestamp/format")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(fmt_chrono)->Name("fmt/timestamp/chrono")->Apply(fieldlog_bench::fixed_iterations);
BENCHMARK(libc_strftime)->Name("libc/timestamp/strftime")->Apply(fieldlog_bench::fixed_iterations);

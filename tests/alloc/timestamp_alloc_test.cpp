// SPDX-License-Identifier: MIT
// The timestamp hot path never touches the heap (src/encode/timestamp.cpp): after one warm-up
// call per zone, a million calls per layout and zone allocate nothing, across repeated seconds,
// new seconds, new days, DST switches, random years and clamped ones. A binary of its own,
// because alloc/alloc_counter.cpp replaces global operator new with a counter.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "alloc/alloc_counter.hpp"
#include "fieldlog/timestamp.hpp"

namespace {

using fieldlog::Timestamp;
using fieldlog::TimestampPrecision;
using fieldlog::TimeZone;

/// Call i's instant: three calls per second (one uncached, two cached), one hour and seven
/// seconds on per second (through days and DST switches, from 2024-03-30 to ~2062), and every
/// 1000th call anywhere in int64 seconds (other years, other zone rules, the clamp).
Timestamp instant(std::uint64_t i, std::uint64_t& random) {
    const auto nanos = static_cast<std::uint32_t>(i * 7919 % 1'000'000'000);
    if (i % 1000 == 999) {
        random = random * 6364136223846793005ULL + 1442695040888963407ULL;
        return {static_cast<std::int64_t>(random), nanos};
    }
    return {1'711'756'800 + static_cast<std::int64_t>(i / 3) * 3607, nanos};
}

}  // namespace

TEST_CASE("Timestamps allocate nothing after warm-up, in every layout and zone", "[timestamp][alloc]") {
    const std::vector<TimeZone> zones = {TimeZone::utc(), TimeZone::named("Europe/Berlin"),
                                         TimeZone::named("Asia/Kolkata"), TimeZone::named("America/St_Johns"),
                                         TimeZone::local()};
    const TimestampPrecision precisions[] = {
        TimestampPrecision::nano,       TimestampPrecision::nano_trimmed, TimestampPrecision::micro,
        TimestampPrecision::milli,      TimestampPrecision::seconds,      TimestampPrecision::unix_nanos,
        TimestampPrecision::unix_seconds_float,
    };
    char buf[fieldlog::max_rfc3339_size];
    for (const TimeZone& zone : zones) fieldlog::append_rfc3339(buf, {0, 0}, {.zone = zone});

    constexpr std::uint64_t calls = 1'000'000;
    for (const TimestampPrecision precision : precisions) {
        for (const TimeZone& zone : zones) {
            std::uint64_t random = 42;
            std::uint64_t written = 0;
            const std::uint64_t before = fieldlog_test::allocations();
            for (std::uint64_t i = 0; i < calls; ++i)
                written += static_cast<std::uint64_t>(fieldlog::append_rfc3339(buf, instant(i, random), {precision, zone}) - buf);
            const std::uint64_t allocations = fieldlog_test::allocations() - before;
            INFO(std::string(zone.name()) << " layout " << static_cast<int>(precision));
            CHECK(allocations == 0);
            CHECK(written > calls);
        }
    }
}

// SPDX-License-Identifier: MIT
// Timestamps (src/encode/timestamp.cpp) against an independent implementation: Howard Hinnant's
// date library formats the same instants (date::format, date's civil calendar and date's own
// zone lookups; after a zone's last listed transition, Hinnant's Posix::time_zone on the footer
// rule of its TZif file), over every leap day and year boundary 0001–9999, every transition of
// the test zones and millions of random instants. Also Go's RFC3339Nano table, the range policy, the
// zone API and the per-thread cache. Zero allocations are proven in alloc/timestamp_alloc_test.cpp.
#include "fieldlog/timestamp.hpp"

#include "encode/text.hpp"
#include "fieldlog/fieldlog.hpp"
#include "support/test_support.hpp"

#include <catch2/catch.hpp>
#include <date/date.h>
#include <date/tz.h>
// ptz.h names hh_mm_ss with both date's and std::chrono's in scope, ambiguous in C++20 but for
// a declaration in its own namespace, which lookup finds first.
namespace Posix {
using date::hh_mm_ss;
}
#include <date/ptz.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifndef FIELDLOG_TIMESTAMP_SAMPLES
#define FIELDLOG_TIMESTAMP_SAMPLES 10000000
#endif

namespace {

using namespace std::chrono_literals;
using fieldlog::append_rfc3339;
using fieldlog::Timestamp;
using fieldlog::TimeZone;
using Precision = fieldlog::TimestampPrecision;
using std::chrono::nanoseconds;
using std::chrono::seconds;

__extension__ using Int128 = __int128;  // exact unix_* references for any Timestamp

constexpr std::array all_precisions = {
    Precision::nano,    Precision::nano_trimmed, Precision::micro,
    Precision::milli,   Precision::seconds,      Precision::unix_nanos,
    Precision::unix_seconds_float,
};
constexpr std::size_t precision_count = all_precisions.size();

constexpr std::int64_t min_wall = -62'167'219'200;  // 0000-01-01T00:00:00
constexpr std::int64_t max_wall = 253'402'300'799;  // 9999-12-31T23:59:59
constexpr std::int64_t day = 86400;

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::nano: return "nano";
        case Precision::nano_trimmed: return "nano_trimmed";
        case Precision::micro: return "micro";
        case Precision::milli: return "milli";
        case Precision::seconds: return "seconds";
        case Precision::unix_nanos: return "unix_nanos";
        case Precision::unix_seconds_float: return "unix_seconds_float";
        case Precision::short_time: return "short_time";
    }
    return "?";
}

std::string text(Timestamp t, Precision p = Precision::nano, TimeZone zone = {}) {
    char buf[fieldlog::max_rfc3339_size];
    return {buf, append_rfc3339(buf, t, {p, zone})};
}

Timestamp at(date::sys_days d, seconds time_of_day = 0s, std::uint32_t nanos = 0) {
    return {static_cast<std::int64_t>((date::sys_seconds{d} + time_of_day).time_since_epoch().count()), nanos};
}

/// A zone as fieldlog sees it and as date sees it (nullptr: UTC).
struct TestZone {
    std::string name;
    TimeZone ours;
    const date::time_zone* theirs;
};

const std::vector<TestZone>& test_zones() {
    static const std::vector<TestZone> zones = [] {
        std::vector<TestZone> z{{"UTC", TimeZone::utc(), nullptr}};
        for (const char* name : {"Europe/Berlin", "Asia/Kolkata", "America/St_Johns"})
            z.push_back({name, TimeZone::named(name), date::locate_zone(name)});
        return z;
    }();
    return zones;
}

std::string int128_text(Int128 v) {
    const bool negative = v < 0;
    std::string digits;
    do {
        const int d = static_cast<int>(v % 10);
        digits += static_cast<char>('0' + (d < 0 ? -d : d));
        v /= 10;
    } while (v != 0);
    if (negative) digits += '-';
    return {digits.rbegin(), digits.rend()};
}

/// The exact unix_* texts, from 128-bit arithmetic.
std::pair<std::string, std::string> unix_reference(Timestamp t) {
    const Int128 total = Int128{t.seconds} * 1'000'000'000 + t.nanos;
    const Int128 magnitude = total < 0 ? -total : total;
    const std::string digits = int128_text(magnitude % 1'000'000'000);
    const std::string fraction = std::string(9 - digits.size(), '0') + digits;
    return {int128_text(total), (total < 0 ? "-" : "") + int128_text(magnitude / 1'000'000'000) + "." + fraction};
}

/// The footer rules of the test zones with DST after their last listed transition: the text
/// between the last two newlines of each TZif file, read here, as a Posix::time_zone.
const std::map<const date::time_zone*, Posix::time_zone>& footer_rules() {
    static const auto rules = [] {
        std::map<const date::time_zone*, Posix::time_zone> m;
        for (const TestZone& zone : test_zones()) {
            if (zone.theirs == nullptr) continue;
            std::ifstream in("/usr/share/zoneinfo/" + zone.name, std::ios::binary);
            const std::string file{std::istreambuf_iterator<char>(in), {}};
            const std::size_t end = file.size() - 1;
            const std::string footer = file.substr(file.rfind('\n', end - 1) + 1, end - file.rfind('\n', end - 1) - 1);
            if (footer.find(',') != std::string::npos) m.emplace(zone.theirs, Posix::time_zone(footer));
        }
        return m;
    }();
    return rules;
}

/// The Posix::time_zone that holds at UTC second `s` of `tz` (within two days of years
/// 0000–9999): its footer rule after its last listed transition, else nullptr.
const Posix::time_zone* footer_at(const date::time_zone* tz, std::int64_t s) {
    const auto it = footer_rules().find(tz);
    if (it == footer_rules().end()) return nullptr;
    const date::sys_info info = tz->get_info(date::sys_seconds{seconds{s}});
    return info.end > date::sys_days{date::year{10002} / 1 / 1} ? &it->second : nullptr;
}

/// The UTC offset in force at second `s`, as date (or the footer rule) reports it (seconds east).
seconds date_offset(const date::time_zone* tz, std::int64_t s) {
    if (tz == nullptr) return 0s;
    // Far outside years 0000–9999 nothing changes any more (and date's year arithmetic overflows).
    s = std::clamp(s, min_wall - 2 * day, max_wall + 2 * day);
    const date::sys_seconds at{seconds{s}};
    if (const Posix::time_zone* footer = footer_at(tz, s)) return footer->get_info(at).offset;
    return tz->get_info(at).offset;
}

/// date::format of `tp` in `tz` with `layout`: a zoned time of date's zone, or of its footer rule.
template <typename Duration>
std::string zoned_format(const char* layout, const date::time_zone* tz, date::sys_time<Duration> tp) {
    if (const Posix::time_zone* footer = footer_at(tz, date::floor<seconds>(tp).time_since_epoch().count()))
        return date::format(layout, date::zoned_time<Duration, const Posix::time_zone*>(footer, tp));
    return date::format(layout, date::make_zoned(tz, tp));
}

/// Every format of `t` in `tz`, built by date::format: the wall clock from date::format of the
/// instant shifted by the offset, the fraction from date::format("%S") of the truncated
/// duration, the offset from date::format("%Ez"). The library's stated policies are restated
/// here: offsets truncate to whole minutes (date would keep the seconds in the wall time and drop
/// them from the offset, naming a different instant) and wall times outside 0000–9999 clamp.
std::array<std::string, precision_count> date_reference(Timestamp t, const date::time_zone* tz) {
    const seconds offset = date_offset(tz, t.seconds);
    std::string zone_text = "Z";
    if (tz != nullptr) {
        const std::int64_t q = std::clamp(t.seconds, min_wall - 2 * day, max_wall + 2 * day);
        zone_text = zoned_format("%Ez", tz, date::sys_seconds{seconds{q}});
    }
    const std::int64_t wall = t.seconds + std::chrono::duration_cast<std::chrono::minutes>(offset).count() * 60;
    std::string date_time;
    nanoseconds fraction{t.nanos};
    if (wall < min_wall) {
        date_time = "0000-01-01T00:00:00";
        fraction = 0ns;
    } else if (wall > max_wall) {
        date_time = "9999-12-31T23:59:59";
        fraction = 999'999'999ns;
    } else {
        date_time = date::format("%FT%T", date::sys_seconds{seconds{wall}});
    }
    const std::string nano = date::format("%S", fraction).substr(2);
    std::string trimmed = nano;
    while (trimmed.back() == '0') trimmed.pop_back();
    if (trimmed == ".") trimmed.clear();

    auto [unix_nanos, unix_float] = unix_reference(t);
    return {date_time + nano + zone_text,
            date_time + trimmed + zone_text,
            date_time + date::format("%S", date::floor<std::chrono::microseconds>(fraction)).substr(2) + zone_text,
            date_time + date::format("%S", date::floor<std::chrono::milliseconds>(fraction)).substr(2) + zone_text,
            date_time + zone_text,
            unix_nanos,
            unix_float};
}

/// Checks every format of `t` in `zone` against date_reference (messages only on a mismatch:
/// hundreds of thousands of instants go through here).
void check_against_date(Timestamp t, const TestZone& zone) {
    const auto expected = date_reference(t, zone.theirs);
    for (std::size_t i = 0; i < precision_count; ++i) {
        const std::string actual = text(t, all_precisions[i], zone.ours);
        if (actual != expected[i]) {
            INFO(zone.name << ' ' << precision_name(all_precisions[i]) << " seconds=" << t.seconds << " nanos=" << t.nanos);
            CHECK(actual == expected[i]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The random sweep: too many instants for date::format (~1 µs a call), so the expected text is
// assembled from pieces built with date's civil calendar (year_month_day, hh_mm_ss), date's zone
// offsets and plain digit loops; every 997th instant also goes through date_reference. Pieces
// that do not depend on the zone (fraction, unix_*) are built once per instant.

/// A short run of expected text.
struct Piece {
    std::array<char, 40> data{};
    std::size_t size = 0;

    void digits(std::uint64_t v, std::size_t width) {
        for (std::size_t i = width; i > 0; --i, v /= 10) data[size + i - 1] = static_cast<char>('0' + v % 10);
        size += width;
    }
    void put(char c) { data[size++] = c; }
    [[nodiscard]] std::string_view view() const { return {data.data(), size}; }
};

/// The fraction as each text layout writes it: nano, nano_trimmed, micro, milli, seconds.
std::array<Piece, 5> fraction_pieces(std::uint32_t nanos) {
    std::array<Piece, 5> f;
    const std::uint32_t divisors[] = {1, 1, 1000, 1'000'000};
    const std::size_t widths[] = {9, 9, 6, 3};
    for (std::size_t i = 0; i < 4; ++i) {
        f[i].put('.');
        f[i].digits(nanos / divisors[i], widths[i]);
    }
    while (f[1].size > 0 && (f[1].data[f[1].size - 1] == '0' || f[1].data[f[1].size - 1] == '.')) --f[1].size;
    return f;
}

/// unix_nanos and unix_seconds_float, from 128-bit arithmetic.
std::array<Piece, 2> unix_pieces(Timestamp t) {
    const Int128 total = Int128{t.seconds} * 1'000'000'000 + t.nanos;
    const Int128 magnitude = total < 0 ? -total : total;
    const auto whole = static_cast<std::uint64_t>(magnitude / 1'000'000'000);
    const auto frac = static_cast<std::uint64_t>(magnitude % 1'000'000'000);
    std::array<Piece, 2> u;
    for (Piece& p : u)
        if (total < 0) p.put('-');
    const auto whole_digits = [&](Piece& p) {
        char* end = std::to_chars(p.data.data() + p.size, p.data.data() + p.data.size(), whole).ptr;
        p.size = static_cast<std::size_t>(end - p.data.data());
    };
    if (whole != 0) {
        whole_digits(u[0]);
        u[0].digits(frac, 9);
    } else {
        const char* end = std::to_chars(u[0].data.data() + u[0].size, u[0].data.data() + u[0].data.size(), frac).ptr;
        u[0].size = static_cast<std::size_t>(end - u[0].data.data());
    }
    whole_digits(u[1]);
    u[1].put('.');
    u[1].digits(frac, 9);
    return u;
}

/// The zone-dependent pieces of one instant: wall clock, offset, and the nanoseconds written
/// (the instant's own, or the clamp bound's).
struct ZonePieces {
    Piece date_time;
    Piece offset;
    bool clamped = false;
    std::uint32_t nanos = 0;
};

ZonePieces zone_pieces(Timestamp t, const date::time_zone* tz) {
    ZonePieces z;
    const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(date_offset(tz, t.seconds)).count();
    const std::int64_t wall = t.seconds + minutes * 60;
    z.nanos = t.nanos;
    if (wall < min_wall || wall > max_wall) {
        z.clamped = true;
        const bool high = wall > max_wall;
        const std::string_view bound = high ? "9999-12-31T23:59:59" : "0000-01-01T00:00:00";
        std::copy(bound.begin(), bound.end(), z.date_time.data.begin());
        z.date_time.size = bound.size();
        z.nanos = high ? 999'999'999 : 0;
    } else {
        const auto days = date::floor<date::days>(date::sys_seconds{seconds{wall}});
        const date::year_month_day ymd{days};
        const date::hh_mm_ss<seconds> hms{date::sys_seconds{seconds{wall}} - days};
        Piece& d = z.date_time;
        d.digits(static_cast<std::uint64_t>(static_cast<int>(ymd.year())), 4);
        d.put('-');
        d.digits(static_cast<unsigned>(ymd.month()), 2);
        d.put('-');
        d.digits(static_cast<unsigned>(ymd.day()), 2);
        d.put('T');
        d.digits(static_cast<std::uint64_t>(hms.hours().count()), 2);
        d.put(':');
        d.digits(static_cast<std::uint64_t>(hms.minutes().count()), 2);
        d.put(':');
        d.digits(static_cast<std::uint64_t>(hms.seconds().count()), 2);
    }
    if (tz == nullptr) {
        z.offset.put('Z');
    } else {
        z.offset.put(minutes < 0 ? '-' : '+');
        const auto m = static_cast<std::uint64_t>(minutes < 0 ? -minutes : minutes);
        z.offset.digits(m / 60, 2);
        z.offset.put(':');
        z.offset.digits(m % 60, 2);
    }
    return z;
}

/// Expected text, assembled from pieces by whole-Piece copies: no zeroing, and the bytes up to
/// 10 past `size` are always written (a Piece holds at most 30 of its 40 chars).
struct Expected {
    std::array<char, 160> data;
    std::size_t size = 0;

    Expected& operator<<(const Piece& p) {
        std::memcpy(data.data() + size, p.data.data(), p.data.size());
        size += p.size;
        return *this;
    }
    /// `actual` (readable for 8 bytes past its end) has exactly this text; compared a word at a
    /// time, inline: the sweep makes 280 million comparisons.
    [[nodiscard]] bool matches(const char* actual, std::size_t n) const {
        if (n != size) return false;
        std::size_t i = 0;
        std::uint64_t x, y;
        for (; i + 8 <= n; i += 8) {
            std::memcpy(&x, actual + i, 8);
            std::memcpy(&y, data.data() + i, 8);
            if (x != y) return false;
        }
        if (i == n) return true;
        std::memcpy(&x, actual + i, 8);
        std::memcpy(&y, data.data() + i, 8);
        return ((x ^ y) & (~std::uint64_t{0} >> (8 * (8 - (n - i))))) == 0;
    }
    [[nodiscard]] std::string str() const { return {data.data(), size}; }
};

struct Mismatch {
    Timestamp t;
    std::string zone;
    Precision precision;
    std::string expected, actual;
};

struct SweepResult {
    std::uint64_t checks = 0;
    std::uint64_t date_format_checks = 0;
    std::vector<Mismatch> mismatches;  // the first few only

    void record(Timestamp t, const TestZone& zone, Precision p, std::string expected, std::string_view actual) {
        if (mismatches.size() < 10) mismatches.push_back({t, zone.name, p, std::move(expected), std::string(actual)});
    }
};

/// Instant number i of the sweep, from four families in turn: any int64 nanosecond count (all of
/// sys_time<nanoseconds>), any second of years 0000–9999 and two days beyond (the clamp edges),
/// 1850–2100 (dense zone transitions), and microsecond time points of years 0001–9999.
Timestamp sweep_instant(std::uint64_t i, std::mt19937_64& rng) {
    switch (i % 4) {
        case 0: return Timestamp(date::sys_time<nanoseconds>{nanoseconds{static_cast<std::int64_t>(rng())}});
        case 1: {
            std::uniform_int_distribution<std::int64_t> s(min_wall - 2 * day, max_wall + 2 * day);
            return {s(rng), static_cast<std::uint32_t>(rng() % 1'000'000'000)};
        }
        case 2: {
            std::uniform_int_distribution<std::int64_t> s(-3'786'825'600, 4'102'444'800);  // 1850–2100
            return {s(rng), static_cast<std::uint32_t>(rng() % 1'000'000'000)};
        }
        default: {
            std::uniform_int_distribution<std::int64_t> us(-62'135'596'800'000'000, 253'402'300'799'999'999);
            return Timestamp(date::sys_time<std::chrono::microseconds>{std::chrono::microseconds{us(rng)}});
        }
    }
}

SweepResult sweep(std::uint64_t first, std::uint64_t count, std::uint64_t seed) {
    SweepResult result;
    std::mt19937_64 rng(seed);
    char buf[fieldlog::max_rfc3339_size + 8] = {};
    const auto check = [&](Timestamp t, const TestZone& zone, std::size_t p, const Expected& expected) {
        const auto n = static_cast<std::size_t>(append_rfc3339(buf, t, {all_precisions[p], zone.ours}) - buf);
        ++result.checks;
        if (!expected.matches(buf, n)) result.record(t, zone, all_precisions[p], expected.str(), {buf, n});
    };
    for (std::uint64_t i = first; i < first + count; ++i) {
        const Timestamp t = sweep_instant(i, rng);
        const std::array<Piece, 5> fractions = fraction_pieces(t.nanos);
        for (const TestZone& zone : test_zones()) {
            const ZonePieces z = zone_pieces(t, zone.theirs);
            const std::array<Piece, 5> clamped_fractions = z.clamped ? fraction_pieces(z.nanos) : fractions;
            for (std::size_t p = 0; p < 5; ++p) {
                Expected expected;
                expected << z.date_time << clamped_fractions[p] << z.offset;
                check(t, zone, p, expected);
            }
        }
        // The unix layouts ignore the zone: once per instant, in each zone in turn.
        const TestZone& zone = test_zones()[i % test_zones().size()];
        const std::array<Piece, 2> unix = unix_pieces(t);
        for (std::size_t p = 5; p < precision_count; ++p) {
            Expected expected;
            expected << unix[p - 5];
            check(t, zone, p, expected);
        }
        if (i % 997 != 0) continue;
        for (const TestZone& z : test_zones()) {
            const auto full = date_reference(t, z.theirs);
            ++result.date_format_checks;
            for (std::size_t p = 0; p < precision_count; ++p) {
                const std::string actual = text(t, all_precisions[p], z.ours);
                if (actual != full[p]) result.record(t, z, all_precisions[p], full[p], actual);
            }
        }
    }
    return result;
}

/// Parses `YYYY-MM-DDTHH:MM:SS.fffffffff` + `Z` or `±hh:mm` back to an instant.
Timestamp read_back(std::string_view s) {
    const auto number = [&](std::size_t at, std::size_t width) {
        std::int64_t v = 0;
        for (std::size_t i = at; i < at + width; ++i) v = v * 10 + (s[i] - '0');
        return v;
    };
    const date::year_month_day ymd{date::year{static_cast<int>(number(0, 4))},
                                   date::month{static_cast<unsigned>(number(5, 2))},
                                   date::day{static_cast<unsigned>(number(8, 2))}};
    std::int64_t secs = date::sys_seconds{date::sys_days{ymd}}.time_since_epoch().count() +
                        number(11, 2) * 3600 + number(14, 2) * 60 + number(17, 2);
    if (s[29] != 'Z') secs -= (s[29] == '-' ? -1 : 1) * (number(30, 2) * 3600 + number(33, 2) * 60);
    return {secs, static_cast<std::uint32_t>(number(20, 9))};
}

std::uint64_t sweep_size() {
    if (const char* env = std::getenv("FIELDLOG_TIMESTAMP_SAMPLES")) return std::strtoull(env, nullptr, 10);
    return FIELDLOG_TIMESTAMP_SAMPLES;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("A timestamp is written in every layout the issue names", "[timestamp]") {
    const Timestamp t = at(date::sys_days{date::year{2026} / 11 / 30}, 8h + 38min + 11s, 120'000'000);
    CHECK(text(t, Precision::nano) == "2026-11-30T08:38:11.120000000Z");
    CHECK(text(t, Precision::nano_trimmed) == "2026-11-30T08:38:11.12Z");
    CHECK(text(t, Precision::micro) == "2026-11-30T08:38:11.120000Z");
    CHECK(text(t, Precision::milli) == "2026-11-30T08:38:11.120Z");
    CHECK(text(t, Precision::seconds) == "2026-11-30T08:38:11Z");
    CHECK(text(t, Precision::unix_nanos) == "1796027891120000000");
    CHECK(text(t, Precision::unix_seconds_float) == "1796027891.120000000");
    CHECK(text({t.seconds, 0}, Precision::nano_trimmed) == "2026-11-30T08:38:11Z");
}

TEST_CASE("Micro and milli truncate toward the past, also before 1970", "[timestamp]") {
    const Timestamp t{0, 999'999'999};
    CHECK(text(t, Precision::micro) == "1970-01-01T00:00:00.999999Z");
    CHECK(text(t, Precision::milli) == "1970-01-01T00:00:00.999Z");
    const Timestamp before(date::sys_time<nanoseconds>{-1ns});
    CHECK(text(before, Precision::nano) == "1969-12-31T23:59:59.999999999Z");
    CHECK(text(before, Precision::micro) == "1969-12-31T23:59:59.999999Z");
    CHECK(text(before, Precision::milli) == "1969-12-31T23:59:59.999Z");
    CHECK(text(before, Precision::seconds) == "1969-12-31T23:59:59Z");
    CHECK(text(before, Precision::unix_nanos) == "-1");
    CHECK(text(before, Precision::unix_seconds_float) == "-0.000000001");
    CHECK(text(Timestamp(date::sys_time<nanoseconds>{-1'500'000'000ns}), Precision::unix_seconds_float) ==
          "-1.500000000");
    CHECK(text({-5, 0}, Precision::unix_nanos) == "-5000000000");
    CHECK(text({0, 0}, Precision::unix_nanos) == "0");
    CHECK(text({0, 7}, Precision::unix_nanos) == "7");
    CHECK(text({0, 0}, Precision::unix_seconds_float) == "0.000000000");
}

TEST_CASE("The ends of sys_time<nanoseconds> are written exactly", "[timestamp]") {
    using limits = std::numeric_limits<std::int64_t>;
    const Timestamp lo(date::sys_time<nanoseconds>{nanoseconds{limits::min()}});
    const Timestamp hi(date::sys_time<nanoseconds>{nanoseconds{limits::max()}});
    CHECK(text(lo) == "1677-09-21T00:12:43.145224192Z");
    CHECK(text(hi) == "2262-04-11T23:47:16.854775807Z");
    CHECK(text(lo, Precision::unix_nanos) == std::to_string(limits::min()));
    CHECK(text(hi, Precision::unix_nanos) == std::to_string(limits::max()));
}

TEST_CASE("Century rules decide the leap days", "[timestamp]") {
    const auto before_march = [](int year) {
        const Timestamp march = at(date::sys_days{date::year{year} / 3 / 1});
        return text(march, Precision::nano_trimmed) + " " + text({march.seconds - 1, 999'999'999}, Precision::nano_trimmed);
    };
    CHECK(before_march(1900) == "1900-03-01T00:00:00Z 1900-02-28T23:59:59.999999999Z");
    CHECK(before_march(2000) == "2000-03-01T00:00:00Z 2000-02-29T23:59:59.999999999Z");
    CHECK(before_march(2100) == "2100-03-01T00:00:00Z 2100-02-28T23:59:59.999999999Z");
    CHECK(before_march(2024) == "2024-03-01T00:00:00Z 2024-02-29T23:59:59.999999999Z");
    CHECK(before_march(0) == "0000-03-01T00:00:00Z 0000-02-29T23:59:59.999999999Z");
}

TEST_CASE("Zones write a numeric offset, UTC writes Z", "[timestamp]") {
    const Timestamp winter = at(date::sys_days{date::year{2024} / 1 / 15}, 12h);
    const Timestamp summer = at(date::sys_days{date::year{2024} / 7 / 15}, 12h);
    const auto zoned = [](Timestamp t, const char* zone) { return text(t, Precision::seconds, TimeZone::named(zone)); };
    CHECK(text(winter, Precision::seconds) == "2024-01-15T12:00:00Z");
    CHECK(zoned(winter, "Europe/Berlin") == "2024-01-15T13:00:00+01:00");
    CHECK(zoned(summer, "Europe/Berlin") == "2024-07-15T14:00:00+02:00");
    CHECK(zoned(winter, "Asia/Kolkata") == "2024-01-15T17:30:00+05:30");
    CHECK(zoned(winter, "America/St_Johns") == "2024-01-15T08:30:00-03:30");
    CHECK(zoned(summer, "America/St_Johns") == "2024-07-15T09:30:00-02:30");
    CHECK(zoned(winter, "Europe/London") == "2024-01-15T12:00:00+00:00");
    CHECK(zoned(winter, "Pacific/Kiritimati") == "2024-01-16T02:00:00+14:00");
}

TEST_CASE("The Berlin DST switches happen on the exact nanosecond, through the cache", "[timestamp]") {
    const TimeZone berlin = TimeZone::named("Europe/Berlin");
    // One thread's clock walking across each switch, as a logger's would.
    const Timestamp spring = at(date::sys_days{date::year{2024} / 3 / 31}, 1h);
    CHECK(text({spring.seconds - 1, 0}, Precision::nano, berlin) == "2024-03-31T01:59:59.000000000+01:00");
    CHECK(text({spring.seconds - 1, 999'999'999}, Precision::nano, berlin) == "2024-03-31T01:59:59.999999999+01:00");
    CHECK(text(spring, Precision::nano, berlin) == "2024-03-31T03:00:00.000000000+02:00");
    CHECK(text({spring.seconds, 1}, Precision::nano, berlin) == "2024-03-31T03:00:00.000000001+02:00");

    const Timestamp autumn = at(date::sys_days{date::year{2024} / 10 / 27}, 1h);
    CHECK(text({autumn.seconds - 1, 999'999'999}, Precision::nano, berlin) == "2024-10-27T02:59:59.999999999+02:00");
    CHECK(text(autumn, Precision::nano, berlin) == "2024-10-27T02:00:00.000000000+01:00");
    CHECK(text({autumn.seconds, 1}, Precision::nano, berlin) == "2024-10-27T02:00:00.000000001+01:00");
    // And back again: the cached rule must not outlive its interval in either direction.
    CHECK(text({autumn.seconds - 1, 999'999'999}, Precision::nano, berlin) == "2024-10-27T02:59:59.999999999+02:00");
    CHECK(text({spring.seconds - 1, 999'999'999}, Precision::nano, berlin) == "2024-03-31T01:59:59.999999999+01:00");
}

TEST_CASE("Every transition of the test zones switches on its first nanosecond", "[timestamp]") {
    std::size_t transitions = 0;
    for (const TestZone& zone : test_zones()) {
        if (zone.theirs == nullptr) continue;
        auto s = date::sys_seconds{date::sys_days{date::year{1800} / 1 / 1}};
        const auto stop = date::sys_seconds{date::sys_days{date::year{2100} / 1 / 1}};
        for (date::sys_info info = zone.theirs->get_info(s); info.end < stop; info = zone.theirs->get_info(s)) {
            s = info.end;
            const std::int64_t edge = s.time_since_epoch().count();
            check_against_date({edge - 1, 999'999'999}, zone);
            check_against_date({edge, 0}, zone);
            ++transitions;
        }
    }
    CHECK(transitions > 300);
}

TEST_CASE("Every second near a transition is right through the minute cache, either way", "[timestamp]") {
    // The cache holds a minute cut short at rule changes, which historical offsets made at any
    // second: walk each second of the minutes around the first transitions of every zone,
    // forwards and backwards, so that each one is a hit or a miss of the cache in turn.
    std::size_t seconds_checked = 0;
    for (const TestZone& zone : test_zones()) {
        if (zone.theirs == nullptr) continue;
        auto s = date::sys_seconds{date::sys_days{date::year{1800} / 1 / 1}};
        for (int n = 0; n < 12; ++n) {
            const date::sys_info info = zone.theirs->get_info(s);
            s = info.end;
            const std::int64_t edge = s.time_since_epoch().count();
            for (std::int64_t t = edge - 90; t <= edge + 90; ++t) check_against_date({t, 5}, zone);
            for (std::int64_t t = edge + 90; t >= edge - 90; --t) check_against_date({t, 5}, zone);
            seconds_checked += 2 * 181;
        }
    }
    CHECK(seconds_checked >= 12 * 2 * 181);
}

TEST_CASE("The trimmed layout matches Go's time.RFC3339Nano", "[timestamp]") {
    // Go's time/format_test.go: Unix(0, 1233810057012345600) in Pacific time, and rfc3339Formats.
    CHECK(text(Timestamp(date::sys_time<nanoseconds>{1233810057012345600ns}), Precision::nano_trimmed,
               TimeZone::named("America/Los_Angeles")) == "2009-02-04T21:00:57.0123456-08:00");
    CHECK(text(at(date::sys_days{date::year{2008} / 9 / 17}, 20h + 4min + 26s), Precision::nano_trimmed) ==
          "2008-09-17T20:04:26Z");
    CHECK(text(at(date::sys_days{date::year{1994} / 9 / 18}, 1h + 4min + 26s), Precision::nano_trimmed,
               TimeZone::named("Etc/GMT+5")) == "1994-09-17T20:04:26-05:00");
    // The layout's reference time, 2006-01-02T15:04:05-07:00 ("MST").
    CHECK(text(at(date::sys_days{date::year{2006} / 1 / 2}, 22h + 4min + 5s), Precision::nano_trimmed,
               TimeZone::named("America/Phoenix")) == "2006-01-02T15:04:05-07:00");
    // ".999999999": trailing zeros go, the dot goes with an all-zero fraction, inner zeros stay.
    struct Case {
        std::uint32_t nanos;
        const char* fraction;
    };
    const Case cases[] = {
        {0, ""},           {1, ".000000001"},       {10, ".00000001"},         {100'000'000, ".1"},
        {120'000'000, ".12"}, {100'000, ".0001"},    {123'456'789, ".123456789"}, {999'999'999, ".999999999"},
        {12'345'600, ".0123456"}, {500'000'001, ".500000001"}, {10'000'000, ".01"},
    };
    const Timestamp base = at(date::sys_days{date::year{2006} / 1 / 2}, 15h + 4min + 5s);
    for (const Case& c : cases) {
        INFO(c.nanos);
        CHECK(text({base.seconds, c.nanos}, Precision::nano_trimmed) == std::string("2006-01-02T15:04:05") + c.fraction + "Z");
    }
}

TEST_CASE("Every leap day and year boundary 0001-9999 agrees with date::format", "[timestamp]") {
    // Instants around local midnight of 1 January and of 29 February (28 February and 1 March in
    // common years) in each zone, each in every format: the last nanosecond before and the first.
    for (int y = 1; y <= 9999; ++y) {
        const date::year year{y};
        date::sys_days edges[] = {date::sys_days{year / 1 / 1},
                                  date::sys_days{year / 3 / 1} - date::days{year.is_leap() ? 1 : 0}};
        for (const date::sys_days& edge : edges) {
            for (const TestZone& zone : test_zones()) {
                const std::int64_t wall = date::sys_seconds{edge}.time_since_epoch().count();
                const std::int64_t minutes = std::chrono::duration_cast<std::chrono::minutes>(date_offset(zone.theirs, wall)).count();
                const std::int64_t s = wall - minutes * 60;
                check_against_date({s - 1, 999'999'999}, zone);
                check_against_date({s, 0}, zone);
            }
        }
    }
}

TEST_CASE("Whole-minute offsets agree with date::format of a zoned time, unchanged", "[timestamp]") {
    // No restated policy here: date formats the zoned instant itself.
    std::mt19937_64 rng(20261130);
    std::uniform_int_distribution<std::int64_t> ns(-2'208'988'800'000'000'000, 4'102'444'800'000'000'000);  // 1900–2100
    for (int i = 0; i < 20000; ++i) {
        const date::sys_time<nanoseconds> tp{nanoseconds{ns(rng)}};
        for (const TestZone& zone : test_zones()) {
            if (zone.theirs == nullptr) {
                REQUIRE(text(tp, Precision::nano) == date::format("%FT%TZ", tp));
                continue;
            }
            if (date_offset(zone.theirs, date::floor<seconds>(tp).time_since_epoch().count()) % 60 != 0s) continue;
            REQUIRE(text(tp, Precision::nano, zone.ours) == zoned_format("%FT%T%Ez", zone.theirs, tp));
            REQUIRE(text(tp, Precision::micro, zone.ours) ==
                    zoned_format("%FT%T%Ez", zone.theirs, date::floor<std::chrono::microseconds>(tp)));
        }
    }
}

TEST_CASE("Local mean time offsets with seconds still name the exact instant", "[timestamp]") {
    // Berlin kept +00:53:28 until 1893: the offset is written as +00:53 and the wall clock is
    // computed with +00:53 too (date::format would print 00:53:28+00:53, 28 s off).
    const Timestamp t = at(date::sys_days{date::year{1800} / 7 / 1});
    CHECK(text(t, Precision::seconds, TimeZone::named("Europe/Berlin")) == "1800-07-01T00:53:00+00:53");
    CHECK(text(t, Precision::seconds, TimeZone::named("America/St_Johns")) == "1800-06-30T20:30:00-03:30");

    // Read back (date's days-from-civil does the calendar), every zone's text names the instant
    // it came from, old eras included.
    std::mt19937_64 rng(1893);
    std::uniform_int_distribution<std::int64_t> ns(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    for (int i = 0; i < 20000; ++i) {
        const date::sys_time<nanoseconds> tp{nanoseconds{ns(rng)}};
        for (const TestZone& zone : test_zones()) {
            const std::string written = text(tp, Precision::nano, zone.ours);
            INFO(zone.name << ' ' << written);
            REQUIRE(read_back(written) == Timestamp(tp));
        }
    }
}

TEST_CASE("Random instants across the whole range agree with date in every format and zone", "[timestamp]") {
    // FIELDLOG_TIMESTAMP_SAMPLES (build definition or environment) sets the count: 10 million in
    // the normal build, fewer under sanitizers. Split over the cores; each thread has its cache.
    const std::uint64_t total = sweep_size();
    test_zones();  // made here, not first in a worker: a build without zones refuses them on this thread
    const unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1U, 8U);
    std::vector<SweepResult> results(workers);
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers; ++w) {
        const std::uint64_t first = total * w / workers;
        const std::uint64_t last = total * (w + 1) / workers;
        threads.emplace_back([&results, w, first, last] { results[w] = sweep(first, last - first, 0x5EED0000 + w); });
    }
    for (std::thread& t : threads) t.join();

    std::uint64_t checks = 0, date_format_checks = 0;
    for (const SweepResult& r : results) {
        checks += r.checks;
        date_format_checks += r.date_format_checks;
        for (const Mismatch& m : r.mismatches) {
            INFO(m.zone << ' ' << precision_name(m.precision) << " seconds=" << m.t.seconds << " nanos=" << m.t.nanos);
            CHECK(m.actual == m.expected);
        }
    }
    CHECK(checks == total * (test_zones().size() * 5 + 2));
    CHECK(date_format_checks >= total / 997 * test_zones().size());
}

TEST_CASE("The unix layouts are the same in every zone", "[timestamp]") {
    const Timestamp t{1'711'846'799, 999'999'999};  // the last nanosecond before Berlin's spring switch
    for (const TestZone& zone : test_zones()) {
        CHECK(text(t, Precision::unix_nanos, zone.ours) == "1711846799999999999");
        CHECK(text(t, Precision::unix_seconds_float, zone.ours) == "1711846799.999999999");
    }
}

TEST_CASE("Wall times outside years 0000-9999 clamp to the nearest bound and keep the offset", "[timestamp]") {
    using limits = std::numeric_limits<std::int64_t>;
    CHECK(text({limits::min(), 0}) == "0000-01-01T00:00:00.000000000Z");
    CHECK(text({limits::max(), 999'999'999}) == "9999-12-31T23:59:59.999999999Z");
    CHECK(text({min_wall, 0}) == "0000-01-01T00:00:00.000000000Z");
    CHECK(text({min_wall - 1, 999'999'999}) == "0000-01-01T00:00:00.000000000Z");
    CHECK(text({max_wall, 5}) == "9999-12-31T23:59:59.000000005Z");
    CHECK(text({max_wall + 1, 0}, Precision::seconds) == "9999-12-31T23:59:59Z");

    const TimeZone berlin = TimeZone::named("Europe/Berlin");
    CHECK(text({max_wall - 1800, 0}, Precision::nano, berlin) == "9999-12-31T23:59:59.999999999+01:00");
    CHECK(text({max_wall - 3600, 0}, Precision::nano, berlin) == "9999-12-31T23:59:59.000000000+01:00");
    const TimeZone st_johns = TimeZone::named("America/St_Johns");
    CHECK(text({min_wall + 3600, 0}, Precision::milli, st_johns) == "0000-01-01T00:00:00.000-03:30");
    // The last second of all, in zones with and without a footer rule of DST (Lord Howe keeps
    // DST over New Year).
    CHECK(text({limits::max(), 0}, Precision::seconds, berlin) == "9999-12-31T23:59:59+01:00");
    CHECK(text({limits::max(), 0}, Precision::seconds, TimeZone::named("Asia/Kolkata")) == "9999-12-31T23:59:59+05:30");
    CHECK(text({limits::max(), 0}, Precision::seconds, TimeZone::named("Australia/Lord_Howe")) == "9999-12-31T23:59:59+11:00");
    CHECK(text({limits::min(), 0}, Precision::seconds, TimeZone::named("Australia/Lord_Howe")) == "0000-01-01T00:00:00+10:36");

    // The numeric layouts have no year to clamp: they stay exact.
    CHECK(text({limits::min(), 0}, Precision::unix_nanos) == "-9223372036854775808000000000");
    CHECK(text({limits::min(), 1}, Precision::unix_seconds_float) == "-9223372036854775807.999999999");
    CHECK(text({limits::max(), 999'999'999}, Precision::unix_nanos) == "9223372036854775807999999999");
}

TEST_CASE("Nanoseconds beyond one second carry into the seconds", "[timestamp]") {
    CHECK(text({0, 1'500'000'000}) == "1970-01-01T00:00:01.500000000Z");
    CHECK(text({-1, 4'294'967'295}, Precision::unix_nanos) == "3294967295");
    CHECK(text({std::numeric_limits<std::int64_t>::max(), 4'000'000'000}) == "9999-12-31T23:59:59.999999999Z");
}

TEST_CASE("No result is longer than max_rfc3339_size or writes past it", "[timestamp]") {
    using limits = std::numeric_limits<std::int64_t>;
    const Timestamp extremes[] = {{limits::min(), 0}, {limits::min(), 1}, {limits::max(), 999'999'999}, {-1, 1}, {0, 0}};
    for (const TestZone& zone : test_zones()) {
        for (Precision p : all_precisions) {
            for (const Timestamp& t : extremes) {
                char buf[fieldlog::max_rfc3339_size + 16];
                std::memset(buf, '#', sizeof buf);
                const char* end = append_rfc3339(buf, t, {p, zone.ours});
                CHECK(static_cast<std::size_t>(end - buf) <= fieldlog::max_rfc3339_size);
                CHECK(std::all_of(buf + fieldlog::max_rfc3339_size, buf + sizeof buf, [](char c) { return c == '#'; }));
            }
        }
    }
}

TEST_CASE("Coarse time points of any year convert exactly", "[timestamp]") {
    CHECK(text(date::sys_days{date::year{1} / 1 / 1}, Precision::seconds) == "0001-01-01T00:00:00Z");
    CHECK(text(std::chrono::sys_days{std::chrono::year{9999} / 12 / 31} + 86399s, Precision::seconds) == "9999-12-31T23:59:59Z");
    CHECK(text(date::sys_time<std::chrono::microseconds>{-62'135'596'800'000'001us}, Precision::micro) ==
          "0000-12-31T23:59:59.999999Z");
    CHECK(text(date::sys_time<std::chrono::milliseconds>{-1ms}, Precision::nano) == "1969-12-31T23:59:59.999000000Z");
}

TEST_CASE("One thread alternating zones and layouts in one second gets each right", "[timestamp]") {
    const Timestamp t = at(date::sys_days{date::year{2024} / 6 / 1}, 12h, 5);
    for (int round = 0; round < 3; ++round) {
        for (const TestZone& zone : test_zones()) {
            const auto expected = date_reference(t, zone.theirs);
            for (std::size_t p = 0; p < precision_count; ++p) REQUIRE(text(t, all_precisions[p], zone.ours) == expected[p]);
        }
        // A clamped instant in between must not leave its state behind.
        CHECK(text({std::numeric_limits<std::int64_t>::max(), 0}, Precision::seconds, test_zones()[1].ours) ==
              "9999-12-31T23:59:59+01:00");
    }
}

TEST_CASE("The record's clock and time values in fields keep separate caches, each right", "[timestamp]") {
    // Interleaved as in a record: its time, then field times on other days, in other zones.
    const Timestamp now = at(date::sys_days{date::year{2026} / 11 / 30}, 8h + 38min + 11s, 123456789);
    const Timestamp values[] = {at(date::sys_days{date::year{1970} / 1 / 1}, 3s), at(date::sys_days{date::year{1970} / 1 / 1}, 4s, 7),
                                at(date::sys_days{date::year{1980} / 1 / 1}, 12h), at(date::sys_days{date::year{2026} / 3 / 29}, 1h)};
    const auto value_text = [](Timestamp t, Precision p, TimeZone zone) {
        char buf[fieldlog::max_rfc3339_size];
        return std::string(buf, fieldlog::detail::append_rfc3339_value(buf, t, {p, zone}));
    };
    for (int round = 0; round < 3; ++round) {
        for (const TestZone& zone : test_zones()) {
            const auto now_expected = date_reference(now, zone.theirs);
            for (const Timestamp& value : values) {
                const auto value_expected = date_reference(value, zone.theirs);
                for (std::size_t p = 0; p < precision_count; ++p) {
                    REQUIRE(text(now, all_precisions[p], zone.ours) == now_expected[p]);
                    REQUIRE(value_text(value, all_precisions[p], zone.ours) == value_expected[p]);
                    REQUIRE(text(now, all_precisions[p], zone.ours) == now_expected[p]);
                }
            }
        }
    }
}

TEST_CASE("Field times of three minutes in any order each get their own text", "[timestamp]") {
    // Field times have two caches, the recent one tried first: this order hits the recent one,
    // the other one, and misses both (a third minute evicts the least recently used).
    const Timestamp values[] = {at(date::sys_days{date::year{1970} / 1 / 1}, 3s, 1),
                                at(date::sys_days{date::year{1980} / 1 / 1}, 12h + 59s, 2),
                                at(date::sys_days{date::year{2026} / 3 / 29}, 1h + 30s, 3)};
    const auto value_text = [](Timestamp t, Precision p, TimeZone zone) {
        char buf[fieldlog::max_rfc3339_size];
        return std::string(buf, fieldlog::detail::append_rfc3339_value(buf, t, {p, zone}));
    };
    std::minstd_rand order(7);
    for (const TestZone& zone : test_zones()) {
        std::vector<std::array<std::string, precision_count>> expected;
        for (const Timestamp& value : values) expected.push_back(date_reference(value, zone.theirs));
        for (int step = 0; step < 300; ++step) {
            const std::size_t v = order() % std::size(values);
            const std::size_t p = order() % precision_count;
            REQUIRE(value_text(values[v], all_precisions[p], zone.ours) == expected[v][p]);
        }
    }
}

TEST_CASE("A JSON time value is the field text, quoted unless numeric", "[timestamp]") {
    const Timestamp values[] = {at(date::sys_days{date::year{1970} / 1 / 1}, 3s),
                                at(date::sys_days{date::year{1980} / 1 / 1}, 12h + 59s, 999999999),
                                at(date::sys_days{date::year{2026} / 3 / 29}, 1h + 30s, 1000),
                                Timestamp{1'700'000'000, 1'500'000'000}};  // a fraction to carry
    std::minstd_rand order(11);
    for (const TestZone& zone : test_zones()) {
        for (int step = 0; step < 200; ++step) {
            const Timestamp t = values[order() % std::size(values)];
            const fieldlog::TimestampFormat format{all_precisions[order() % precision_count], zone.ours};
            char buf[fieldlog::max_rfc3339_size];
            const std::string text(buf, fieldlog::detail::append_rfc3339_value(buf, t, format));
            fieldlog::detail::Buffer out;
            out.append("x");
            fieldlog::detail::append_json_time_value(out, t, format);
            REQUIRE(out.view() == (format.is_numeric() ? "x" + text : "x\"" + text + "\""));
        }
    }
}

TEST_CASE("The short layout is the time of day of rfc3339milli, and a field time keeps its date", "[timestamp]") {
    std::minstd_rand random(29);
    for (const TestZone& zone : test_zones()) {
        for (int step = 0; step < 200; ++step) {
            const Timestamp t{static_cast<std::int64_t>(random() % 4'000'000'000ULL) - 1'000'000'000, static_cast<std::uint32_t>(random() % 1'000'000'000)};
            const std::string milli = text(t, Precision::milli, zone.ours);
            INFO(zone.name << " " << milli);
            REQUIRE(text(t, Precision::short_time, zone.ours) == milli.substr(11, 12));
            char buf[fieldlog::max_rfc3339_size];
            const fieldlog::TimestampFormat short_format{Precision::short_time, zone.ours};
            REQUIRE(std::string(buf, fieldlog::detail::append_rfc3339_value(buf, t, short_format)) == milli);
        }
    }
    CHECK(text({max_wall + day, 0}, Precision::short_time) == "23:59:59.999");  // clamped, as the full text
    CHECK_FALSE(fieldlog::TimestampFormat{Precision::short_time}.is_numeric());
}

TEST_CASE("Threads writing at once each get their own zone's text", "[timestamp][concurrent]") {
    std::vector<std::thread> threads;
    std::vector<int> failures(test_zones().size());
    for (std::size_t z = 0; z < test_zones().size(); ++z) {
        threads.emplace_back([z, &failures] {
            const TestZone& zone = test_zones()[z];
            for (std::int64_t s = 1'700'000'000; s < 1'700'000'000 + 20000; ++s) {
                const Timestamp t{s, static_cast<std::uint32_t>(s % 1000) * 1'000'000};
                const ZonePieces pieces = zone_pieces(t, zone.theirs);
                Expected expected;
                expected << pieces.date_time << fraction_pieces(pieces.nanos)[3] << pieces.offset;
                for (int k = 0; k < 3; ++k)  // the same second again: the cached path
                    if (text(t, Precision::milli, zone.ours) != expected.str()) ++failures[z];
            }
        });
    }
    for (std::thread& t : threads) t.join();
    CHECK(failures == std::vector<int>(test_zones().size(), 0));
}

TEST_CASE("Zones are found by IANA name, interned, and unknown names are rejected", "[timestamp]") {
    const TimeZone berlin = TimeZone::named("Europe/Berlin");
    CHECK(berlin == TimeZone::named("Europe/Berlin"));
    CHECK(berlin.name() == "Europe/Berlin");
    CHECK_FALSE(berlin.is_utc());
    CHECK(TimeZone::utc().is_utc());
    CHECK(TimeZone::utc().name() == "UTC");
    CHECK(TimeZone::parse("UTC").is_utc());
    CHECK(TimeZone::parse("Asia/Kolkata").name() == "Asia/Kolkata");
    CHECK_THROWS_AS(TimeZone::named("Mars/Olympus_Mons"), std::invalid_argument);
    CHECK_THROWS_WITH(TimeZone::named("Mars/Olympus_Mons"), Catch::Matchers::Contains("Mars/Olympus_Mons"));
    CHECK_THROWS_AS(TimeZone::parse("utc+1"), std::invalid_argument);
}

TEST_CASE("The local zone follows TZ when it names a zone", "[timestamp]") {
    const char* saved = std::getenv("TZ");
    const std::string restore = saved == nullptr ? "" : saved;
    const auto local_with = [](const char* tz) {
        ::setenv("TZ", tz, 1);
        return std::string(TimeZone::local().name());
    };
    CHECK(local_with("Asia/Kolkata") == "Asia/Kolkata");
    CHECK(local_with(":Europe/Berlin") == "Europe/Berlin");
    CHECK(local_with("/usr/share/zoneinfo/America/St_Johns") == "America/St_Johns");
    CHECK_FALSE(local_with("not a zone").empty());  // the machine's zone, or UTC without one
    CHECK(TimeZone::parse("local") == TimeZone::local());
    if (saved == nullptr) ::unsetenv("TZ");
    else ::setenv("TZ", restore.c_str(), 1);
}

TEST_CASE("Layout names from config parse to precisions", "[timestamp]") {
    const std::pair<const char*, Precision> names[] = {
        {"rfc3339nano", Precision::nano},         {"rfc3339nano-trimmed", Precision::nano_trimmed},
        {"rfc3339micro", Precision::micro},       {"rfc3339milli", Precision::milli},
        {"rfc3339", Precision::seconds},          {"unix_nanos", Precision::unix_nanos},
        {"unix_seconds_float", Precision::unix_seconds_float}, {"short", Precision::short_time},
    };
    for (const auto& [name, precision] : names) {
        Precision parsed = Precision::nano_trimmed;
        CHECK(fieldlog::parse_timestamp_precision(name, parsed));
        CHECK(parsed == precision);
    }
    Precision untouched = Precision::milli;
    CHECK_FALSE(fieldlog::parse_timestamp_precision("RFC3339", untouched));
    CHECK_FALSE(fieldlog::parse_timestamp_precision("", untouched));
    CHECK(untouched == Precision::milli);
    CHECK(fieldlog::TimestampFormat{Precision::unix_nanos}.is_numeric());
    CHECK_FALSE(fieldlog::TimestampFormat{}.is_numeric());
}

namespace {

fieldlog::Timestamp golden_now;
fieldlog::Timestamp golden_clock() noexcept { return golden_now; }

}  // namespace

TEST_CASE("Records across a DST switch in 2050 carry the zone's offsets, in ts and in field times",
          "[timestamp][tz]") {
    // Expected texts from Python's zoneinfo. All but Casablanca follow their TZif footer rule in
    // 2050 (Lord Howe: 30 minutes of DST; Santiago: switches at 24:00 local); Casablanca's
    // changes around Ramadan are listed in its file up to 2087.
    struct Case {
        const char* zone;
        std::int64_t at;  // the UTC second the offset changes
        const char* before;
        const char* after;
    };
    const Case cases[] = {
        {"Europe/Berlin", 2531955600, "2050-03-27T01:59:59+01:00", "2050-03-27T03:00:00+02:00"},
        {"Europe/Berlin", 2550704400, "2050-10-30T02:59:59+02:00", "2050-10-30T02:00:00+01:00"},
        {"America/New_York", 2530767600, "2050-03-13T01:59:59-05:00", "2050-03-13T03:00:00-04:00"},
        {"America/New_York", 2551327200, "2050-11-06T01:59:59-04:00", "2050-11-06T01:00:00-05:00"},
        {"Australia/Lord_Howe", 2532524400, "2050-04-03T01:59:59+11:00", "2050-04-03T01:30:00+10:30"},
        {"Australia/Lord_Howe", 2548251000, "2050-10-02T01:59:59+10:30", "2050-10-02T02:30:00+11:00"},
        {"America/Santiago", 2532567600, "2050-04-02T23:59:59-03:00", "2050-04-02T23:00:00-04:00"},
        {"America/Santiago", 2545876800, "2050-09-03T23:59:59-04:00", "2050-09-04T01:00:00-03:00"},
        {"Africa/Casablanca", 2536192800, "2050-05-15T02:59:59+01:00", "2050-05-15T02:00:00+00:00"},
        {"Africa/Casablanca", 2539821600, "2050-06-26T01:59:59+00:00", "2050-06-26T03:00:00+01:00"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.zone << " " << c.before) {
            auto sink = std::make_shared<fieldlog::MemorySink>();
            fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::trace,
                                                 .timestamp = {Precision::seconds, TimeZone::named(c.zone)},
                                                 .sinks = {fieldlog::SinkConfig{.target = sink}},
                                                 .clock = &golden_clock});
            const date::sys_seconds switch_at{seconds{c.at}};
            golden_now = Timestamp{c.at - 1, 0};
            fieldlog::get("svc").info("switch", {{"at", switch_at}, {"before", switch_at - 1s}});
            golden_now = Timestamp{c.at, 0};
            fieldlog::get("svc").info("switch", {{"at", switch_at}, {"before", switch_at - 1s}});
            const std::string fields = std::string(R"(","msg":"switch","at":")") + c.after + R"(","before":")" + c.before + R"("})";
            CHECK(sink->lines() == std::vector<std::string>{
                                       std::string(R"({"ts":")") + c.before + R"(","level":"info","logger":"svc)" + fields,
                                       std::string(R"({"ts":")") + c.after + R"(","level":"info","logger":"svc)" + fields});
            fieldlog_test::release_sinks();
        }
    }
    // The cross-checks above follow the footers of these two test zones (the third, Kolkata, has
    // no DST).
    CHECK(footer_rules().size() == 2);
}

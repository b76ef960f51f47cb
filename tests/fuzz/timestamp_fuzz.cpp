// SPDX-License-Identifier: MIT
// libFuzzer target for append_rfc3339 (src/encode/timestamp.cpp): any 64-bit instant, any
// nanosecond field (also ≥ 1e9), any layout, eight zones; the text must equal one built from
// date::format and date's zone offsets (after a zone's last listed transition, those of
// Hinnant's Posix::time_zone on its TZif footer rule), and stay within max_rfc3339_size. Input: 8 bytes
// seconds (or, with bit 0 of byte 14, a sys_time<nanoseconds> count), 4 bytes nanos, 1 byte
// layout, 1 byte zone, 1 byte mode. Seeds: tests/fuzz/corpus/timestamp/.
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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>

#include "fieldlog/timestamp.hpp"

namespace {

using fieldlog::Timestamp;
using fieldlog::TimestampPrecision;
using std::chrono::nanoseconds;
using std::chrono::seconds;

__extension__ using Int128 = __int128;

constexpr std::int64_t min_wall = -62'167'219'200;  // 0000-01-01T00:00:00
constexpr std::int64_t max_wall = 253'402'300'799;  // 9999-12-31T23:59:59
constexpr std::int64_t margin = 2 * 86400;

constexpr const char* zone_names[] = {"UTC",           "Europe/Berlin",       "Asia/Kolkata",   "America/St_Johns",
                                      "Europe/London", "Australia/Lord_Howe", "Pacific/Kiritimati", "America/Los_Angeles"};

struct Zone {
    fieldlog::TimeZone ours;
    const date::time_zone* theirs;  // nullptr: fieldlog's UTC (`Z`)
    std::optional<Posix::time_zone> footer;  // the TZif footer's rule, when it has DST
};

/// The text between the last two newlines of the zone's TZif file.
std::string footer_text(const char* name) {
    std::ifstream in(std::string("/usr/share/zoneinfo/") + name, std::ios::binary);
    const std::string file{std::istreambuf_iterator<char>(in), {}};
    const std::size_t begin = file.rfind('\n', file.size() - 2) + 1;
    return file.substr(begin, file.size() - 1 - begin);
}

std::array<Zone, 8> load_zones() {
    std::array<Zone, 8> zones{};
    for (std::size_t i = 1; i < zones.size(); ++i) {
        zones[i].ours = fieldlog::TimeZone::named(zone_names[i]);
        zones[i].theirs = date::locate_zone(zone_names[i]);
        const std::string footer = footer_text(zone_names[i]);
        if (footer.find(',') != std::string::npos) zones[i].footer.emplace(footer);
    }
    return zones;
}

std::string int128_text(Int128 v) {
    const bool negative = v < 0;
    std::string s;
    do {
        const int d = static_cast<int>(v % 10);
        s.insert(s.begin(), static_cast<char>('0' + (d < 0 ? -d : d)));
        v /= 10;
    } while (v != 0);
    return negative ? "-" + s : s;
}

/// The expected text, from date and 128-bit arithmetic; the stated policies restated: nanos
/// carry (saturating), offsets truncate to minutes, wall times outside 0000–9999 clamp.
std::string reference(Timestamp t, TimestampPrecision p, const Zone& zone) {
    const date::time_zone* tz = zone.theirs;
    if (t.nanos >= 1'000'000'000) {
        const std::int64_t carry = t.nanos / 1'000'000'000;
        t.seconds = t.seconds > std::numeric_limits<std::int64_t>::max() - carry ? std::numeric_limits<std::int64_t>::max()
                                                                                : t.seconds + carry;
        t.nanos %= 1'000'000'000;
    }
    if (p == TimestampPrecision::unix_nanos || p == TimestampPrecision::unix_seconds_float) {
        const Int128 total = Int128{t.seconds} * 1'000'000'000 + t.nanos;
        if (p == TimestampPrecision::unix_nanos) return int128_text(total);
        const Int128 magnitude = total < 0 ? -total : total;
        const std::string frac = int128_text(magnitude % 1'000'000'000);
        return (total < 0 ? "-" : "") + int128_text(magnitude / 1'000'000'000) + "." + std::string(9 - frac.size(), '0') + frac;
    }
    const date::sys_seconds query{seconds{std::clamp(t.seconds, min_wall - margin, max_wall + margin)}};
    seconds offset{0};
    std::string zone_text = "Z";
    if (tz != nullptr) {
        const date::sys_info info = tz->get_info(query);
        if (zone.footer && info.end > date::sys_days{date::year{10002} / 1 / 1}) {  // the last listed stretch
            offset = zone.footer->get_info(query).offset;
            zone_text = date::format("%Ez", date::zoned_time<seconds, const Posix::time_zone*>(&*zone.footer, query));
        } else {
            offset = info.offset;
            zone_text = date::format("%Ez", date::make_zoned(tz, query));
        }
    }
    const std::int64_t wall = std::clamp(t.seconds, min_wall - margin, max_wall + margin) +
                              std::chrono::duration_cast<std::chrono::minutes>(offset).count() * 60;
    std::string date_time;
    nanoseconds fraction{t.nanos};
    if (wall < min_wall) {
        date_time = "0000-01-01T00:00:00";
        fraction = nanoseconds{0};
    } else if (wall > max_wall) {
        date_time = "9999-12-31T23:59:59";
        fraction = nanoseconds{999'999'999};
    } else {
        date_time = date::format("%FT%T", date::sys_seconds{seconds{wall}});
    }
    std::string digits;
    switch (p) {
        case TimestampPrecision::nano: digits = date::format("%S", fraction).substr(2); break;
        case TimestampPrecision::nano_trimmed:
            digits = date::format("%S", fraction).substr(2);
            while (digits.back() == '0') digits.pop_back();
            if (digits == ".") digits.clear();
            break;
        case TimestampPrecision::micro: digits = date::format("%S", date::floor<std::chrono::microseconds>(fraction)).substr(2); break;
        case TimestampPrecision::milli: digits = date::format("%S", date::floor<std::chrono::milliseconds>(fraction)).substr(2); break;
        default: break;
    }
    return date_time + digits + zone_text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::array<Zone, 8> zones = load_zones();
    if (size < 15) return 0;
    std::int64_t raw_seconds;
    std::uint32_t nanos;
    std::memcpy(&raw_seconds, data, 8);
    std::memcpy(&nanos, data + 8, 4);
    const auto precision = static_cast<TimestampPrecision>(data[12] % 7);
    const Zone& zone = zones[data[13] % zones.size()];
    const Timestamp t = (data[14] & 1) != 0 ? Timestamp(date::sys_time<nanoseconds>{nanoseconds{raw_seconds}})
                                            : Timestamp{raw_seconds, nanos};

    char buf[fieldlog::max_rfc3339_size + 16];
    std::memset(buf, '#', sizeof buf);
    const char* end = fieldlog::append_rfc3339(buf, t, {precision, zone.ours});
    const std::string actual(buf, static_cast<std::size_t>(end - buf));
    const std::string expected = reference(t, precision, zone);
    const bool overrun = std::any_of(buf + fieldlog::max_rfc3339_size, buf + sizeof buf, [](char c) { return c != '#'; });
    if (actual != expected || overrun) {
        std::fprintf(stderr, "seconds=%lld nanos=%u layout=%d zone=%s\n  expected %s\n  actual   %s%s\n",
                     static_cast<long long>(t.seconds), t.nanos, static_cast<int>(precision),
                     std::string(zone.ours.name()).c_str(), expected.c_str(), actual.c_str(),
                     overrun ? "\n  wrote past max_rfc3339_size" : "");
        std::abort();
    }
    return 0;
}

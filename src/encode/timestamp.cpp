// SPDX-License-Identifier: MIT
// Timestamps, cold then hot. TimeZone::named reads a zone's offset history from date's tz
// database once into a never-freed registry, with the POSIX TZ rule its TZif file's footer gives
// for instants after the last listed transition (tzif.cpp, tz_rule.cpp); append_rfc3339 then
// writes from a per-thread cache (two: the record's clock and field values) of the current
// minute's `YYYY-MM-DDTHH:MM:` and offset, recomputing a new minute with Hinnant's
// civil-from-days integer arithmetic. The only file that includes date/tz.h; a build without it
// (FIELDLOG_WITH_TZ=OFF) refuses named zones and reads the local one from its TZif file (tzif.cpp).
#include "fieldlog/timestamp.hpp"

#include "encode/text.hpp"
#include "encode/tz_rule.hpp"
#include "encode/tzif.hpp"

#if FIELDLOG_WITH_TZ
// date's templates keep their own visibility (src/base/default_visibility.hpp says why).
#pragma GCC visibility push(default)
#include <date/date.h>
#include <date/tz.h>
#pragma GCC visibility pop
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fieldlog {
namespace detail {

/// A stretch of a zone's history with one UTC offset, from `begin` to the next rule's begin.
struct ZoneRule {
    std::int64_t begin = 0;           ///< first UTC second it applies to
    std::int32_t offset = 0;          ///< seconds east of UTC, truncated to whole minutes
    std::array<char, 8> suffix{};     ///< "+hh:mm", padded so it is stored as one word
};

/// A loaded zone: its IANA name and offset history, shared by every thread for the program.
struct ZoneData {
    std::string name;
    std::vector<ZoneRule> rules;  ///< ascending begin; the first covers everything before it
    /// From footer_from on, DST and standard time follow `footer` (a footer without DST changes
    /// nothing: the last rule above already has its offset).
    std::optional<PosixTzRule> footer;
    std::int64_t footer_from = std::numeric_limits<std::int64_t>::max();
    ZoneRule footer_std;  ///< offset and suffix of the footer's standard time
    ZoneRule footer_dst;
};

}  // namespace detail

namespace {

using detail::rule_span_at;
using detail::TzRuleSpan;
using detail::ZoneData;
using detail::ZoneRule;

constexpr std::uint32_t nanos_per_second = 1'000'000'000;
// 0000-01-01T00:00:00 and 9999-12-31T23:59:59 as seconds since the epoch: the wall-time range.
constexpr std::int64_t min_wall_second = -62'167'219'200;
constexpr std::int64_t max_wall_second = 253'402'300'799;
constexpr std::int64_t no_end = std::numeric_limits<std::int64_t>::max();
// A footer rule is evaluated within two days of the wall-time range; beyond, the offset at the
// nearer edge holds (it only goes with a clamped wall time).
constexpr std::int64_t footer_low = min_wall_second - 2 * 86400;
constexpr std::int64_t footer_high = max_wall_second + 2 * 86400;

// ---------------------------------------------------------------------------------------------
// Digits

constexpr std::array<char, 200> digit_pairs = [] {
    std::array<char, 200> table{};
    for (int i = 0; i < 100; ++i) {
        table[static_cast<std::size_t>(2 * i)] = static_cast<char>('0' + i / 10);
        table[static_cast<std::size_t>(2 * i + 1)] = static_cast<char>('0' + i % 10);
    }
    return table;
}();

void put2(char* p, std::uint32_t v) noexcept { std::memcpy(p, &digit_pairs[2 * v], 2); }

// The SWAR conversion below puts the first digit in the lowest byte.
static_assert(std::endian::native == std::endian::little, "fieldlog timestamps assume little-endian");

/// 0 ≤ v < 1e8 as eight digit values (0–9) in the bytes of a word, most significant first in
/// memory: three multiply-shift rounds split 4+4, 2+2, 1+1 in all lanes at once.
std::uint64_t eight_digit_values(std::uint32_t v) noexcept {
    const std::uint64_t high4 = v / 10000;
    std::uint64_t x = high4 | (static_cast<std::uint64_t>(v - high4 * 10000) << 32);
    const std::uint64_t hundreds = ((x * 10486) >> 20) & 0x0000007F'0000007FULL;  // lane / 100
    x = hundreds | ((x - hundreds * 100) << 16);
    const std::uint64_t tens = ((x * 103) >> 10) & 0x000F000F'000F000FULL;  // lane / 10
    return tens | ((x - tens * 10) << 8);
}

/// Writes exactly 9 digits of n < 1e9; returns the digit values of the last 8 (for trimming).
std::uint64_t write_9_digits(char* p, std::uint32_t n) noexcept {
    const std::uint32_t head = n / 100'000'000;
    const std::uint64_t tail = eight_digit_values(n - head * 100'000'000);
    const std::uint64_t text = tail + 0x30303030'30303030ULL;
    p[0] = static_cast<char>('0' + head);
    std::memcpy(p + 1, &text, 8);
    return tail;
}

/// Writes v without leading zeros; returns the end.
char* write_uint(char* p, std::uint64_t v) noexcept {
    char tmp[20];
    char* t = tmp + sizeof tmp;
    while (v >= 100) {
        t -= 2;
        put2(t, static_cast<std::uint32_t>(v % 100));
        v /= 100;
    }
    if (v >= 10) {
        t -= 2;
        put2(t, static_cast<std::uint32_t>(v));
    } else {
        *--t = static_cast<char>('0' + v);
    }
    const auto n = static_cast<std::size_t>(tmp + sizeof tmp - t);
    std::memcpy(p, t, n);
    return p + n;
}

// ---------------------------------------------------------------------------------------------
// Calendar

/// Writes `YYYY-MM-DD` for a day counted from 0000-01-01 (years 0000–9999). Civil-from-days
/// after Howard Hinnant ("chrono-Compatible Low-Level Date Algorithms"), counted from
/// 0000-03-01 and shifted by one 400-year era so that every operand is unsigned: January and
/// February of year 0 belong to the era before.
void write_date(char* p, std::uint32_t days) noexcept {
    const std::uint32_t z = days - 60 + 146097;  // days since -0400-03-01
    const std::uint32_t era = z / 146097;
    const std::uint32_t doe = z - era * 146097;                                      // [0, 146096]
    const std::uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
    const std::uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
    const std::uint32_t mp = (5 * doy + 2) / 153;                                     // March = 0
    const std::uint32_t day = doy - (153 * mp + 2) / 5 + 1;
    const std::uint32_t month = mp < 10 ? mp + 3 : mp - 9;
    const std::uint32_t year = yoe + era * 400 - 400 + (month <= 2 ? 1 : 0);
    put2(p, year / 100);
    put2(p + 2, year % 100);
    p[4] = '-';
    put2(p + 5, month);
    p[7] = '-';
    put2(p + 8, day);
    p[10] = 'T';
}

/// Writes `HH:MM:SS.` at p + 11 for a second of the day.
void write_time(char* p, std::uint32_t second_of_day) noexcept {
    const std::uint32_t hour = second_of_day / 3600;
    const std::uint32_t minute_second = second_of_day - hour * 3600;
    const std::uint32_t minute = minute_second / 60;
    put2(p + 11, hour);
    p[13] = ':';
    put2(p + 14, minute);
    p[16] = ':';
    put2(p + 17, minute_second - minute * 60);
    p[19] = '.';
}

// ---------------------------------------------------------------------------------------------
// The per-thread cache

/// What one thread last wrote: the prefix of a minute in `zone` and the UTC seconds it holds
/// for ([first, first + span): the minute, cut short where a zone rule begins or ends), so any
/// second of that minute only writes its two second digits; the wall second its date part
/// starts at, so a new minute of the same day rewrites only the time; and the zone rule in
/// force, reused by later minutes until they reach rule_end.
struct ThreadCache {
    std::int64_t first = 0;
    std::uint64_t span = 0;   // 0: nothing cached yet
    std::int64_t minute_start = 0;  ///< UTC second whose wall time is second 00 of the minute
    std::uintptr_t zone = 1;  // no TimeZone has this key, so the first call misses
    std::uint64_t suffix = 0;
    std::uint32_t suffix_len = 0;
    char prefix[20] = {};  // `YYYY-MM-DDTHH:MM:SS.`, the seconds rewritten per call
    std::int64_t day_start = std::numeric_limits<std::int64_t>::min() / 2;  // no wall day yet
    const ZoneData* rule_zone = nullptr;
    ZoneRule rule;  ///< a copy: a footer's rules are made on a miss, not stored
    std::int64_t rule_end = 0;
};

/// Which of a thread's caches a call uses: the record's own time (the clock, the same second
/// for many records in a row) or a time value in a field (often days or years from now:
/// sharing one cache, the clock and the field would evict each other on every record).
enum class Slot { clock, field };

/// Time values in fields get two caches, the one used last tried first: a record that carries
/// times of two minutes (a request's start and a user's creation date) then misses on neither.
struct FieldCaches {
    ThreadCache entries[2];
    unsigned recent = 0;  ///< the entry the last field time used
};

/// A thread's caches: the record's own time and the two for time values in fields.
struct ThreadCaches {
    ThreadCache clock;
    FieldCaches fields;
};

/// This thread's caches, made on its first timestamp. On the heap, so the library's TLS stays a
/// few words. initial-exec: one %fs-relative load, where the default model for position-
/// independent code is a call to __tls_get_addr and the register saves around it. A dlopen()ed
/// module with such variables takes its whole TLS block from the small static reserve glibc
/// keeps for that, which a few words fit.
[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadCaches* t_caches = nullptr;
[[gnu::tls_model("initial-exec")]] constinit thread_local bool t_caches_gone = false;

/// Frees the thread's caches when it exits (the first use of t_owned_caches registers it).
struct CachesOwner {
    ThreadCaches* caches = nullptr;
    ~CachesOwner() {
        t_caches = nullptr;
        t_caches_gone = true;
        delete caches;
    }
};
thread_local CachesOwner t_owned_caches;

constexpr std::uint64_t utc_suffix = 'Z';

std::uintptr_t zone_key(const ZoneData* zone) noexcept { return reinterpret_cast<std::uintptr_t>(zone); }

std::uint64_t suffix_word(const ZoneRule& rule) noexcept {
    std::uint64_t word;
    std::memcpy(&word, rule.suffix.data(), sizeof word);
    return word;
}

/// The first listed rule of `zone` that begins after UTC second s.
std::vector<ZoneRule>::const_iterator next_listed(const ZoneData& zone, std::int64_t s) noexcept {
    return std::upper_bound(zone.rules.begin() + 1, zone.rules.end(), s,
                            [](std::int64_t v, const ZoneRule& r) { return v < r.begin; });
}

/// The stretch of `zone`'s footer rule holding UTC second s ≥ zone.footer_from, into the cache.
void footer_rule_at(ThreadCache& cache, const ZoneData& zone, std::int64_t s) noexcept {
    const TzRuleSpan span = rule_span_at(*zone.footer, std::clamp(s, footer_low, footer_high));
    cache.rule = span.dst ? zone.footer_dst : zone.footer_std;
    std::int64_t begin = std::max(span.begin, footer_low);
    cache.rule_end = std::min(span.end, footer_high + 1);
    if (s < footer_low) {
        begin = std::numeric_limits<std::int64_t>::min();
        cache.rule_end = footer_low;
    } else if (s > footer_high) {
        begin = footer_high + 1;
        cache.rule_end = no_end;
    }
    cache.rule.begin = std::max(begin, zone.footer_from);
}

/// The rule of `zone` in force at UTC second `s`, through the thread's cached rule: the listed
/// transitions, then the footer's.
const ZoneRule& rule_at(ThreadCache& cache, const ZoneData& zone, std::int64_t s) noexcept {
    if (cache.rule_zone != &zone || s < cache.rule.begin || s >= cache.rule_end) {
        cache.rule_zone = &zone;
        if (zone.footer && s >= zone.footer_from) {
            footer_rule_at(cache, zone, s);
        } else {
            const auto next = next_listed(zone, s);
            cache.rule = *(next - 1);
            cache.rule_end = std::min(next == zone.rules.end() ? no_end : next->begin, zone.footer_from);
        }
    }
    return cache.rule;
}

/// Writes the fraction and the zone suffix after a 20-char prefix at `p`; returns the end.
char* write_tail(char* p, std::uint32_t nanos, TimestampPrecision precision, std::uint64_t suffix,
                 std::uint32_t suffix_len) noexcept {
    char* end = p + 19;  // no fraction: the suffix overwrites the '.'
    switch (precision) {
        case TimestampPrecision::nano: write_9_digits(p + 20, nanos); end = p + 29; break;
        case TimestampPrecision::micro: write_9_digits(p + 20, nanos); end = p + 26; break;
        case TimestampPrecision::milli: write_9_digits(p + 20, nanos); end = p + 23; break;
        case TimestampPrecision::nano_trimmed:
            if (nanos != 0) {
                // The last 8 digit values sit in the word's bytes, last digit highest: each zero
                // byte at the top is a trailing zero. nanos != 0, so the 9 digits are not all zero.
                const std::uint64_t tail = write_9_digits(p + 20, nanos);
                const int zeros = tail == 0 ? 8 : std::countl_zero(tail) / 8;
                end = p + 29 - zeros;
            }
            break;
        default: break;
    }
    std::memcpy(end, &suffix, sizeof suffix);
    return end + suffix_len;
}

/// Recomputes the cache for the minute of UTC second `s` in `zone`; false when the wall time is
/// out of range.
bool refresh(ThreadCache& cache, std::int64_t s, const ZoneData* zone) noexcept {
    std::int64_t offset = 0;
    std::int64_t valid_from = std::numeric_limits<std::int64_t>::min();
    std::int64_t valid_until = no_end;
    if (zone != nullptr) {
        const ZoneRule& rule = rule_at(cache, *zone, s);
        offset = rule.offset;
        valid_from = rule.begin;
        valid_until = cache.rule_end;
        cache.suffix = suffix_word(rule);
        cache.suffix_len = 6;
    } else {
        cache.suffix = utc_suffix;
        cache.suffix_len = 1;
    }
    if (s < min_wall_second - offset || s > max_wall_second - offset) {
        cache.zone = 1;  // the suffix above is now stale for whatever was cached
        return false;
    }
    const std::int64_t wall = s + offset;
    std::uint32_t second_of_day;
    const auto into_day = static_cast<std::uint64_t>(wall - cache.day_start);
    if (into_day < 86400) {
        second_of_day = static_cast<std::uint32_t>(into_day);
    } else {
        const auto since_year0 = static_cast<std::uint64_t>(wall - min_wall_second);
        const auto days = static_cast<std::uint32_t>(since_year0 / 86400);
        second_of_day = static_cast<std::uint32_t>(since_year0 - std::uint64_t{days} * 86400);
        write_date(cache.prefix, days);
        cache.day_start = wall - second_of_day;
    }
    write_time(cache.prefix, second_of_day);
    // Offsets are whole minutes, so a wall minute is a UTC minute; a rule change inside it
    // (historical offsets began at any second) shortens what the prefix is good for.
    cache.minute_start = s - second_of_day % 60;
    const std::int64_t first = std::max(cache.minute_start, valid_from);
    cache.first = first;
    cache.span = static_cast<std::uint64_t>(std::min(cache.minute_start + 60, valid_until) - first);
    cache.zone = zone_key(zone);
    return true;
}

/// The stated policy for wall times outside years 0000–9999: the nearest bound, same offset.
char* write_clamped(const ThreadCache& cache, char* out, Timestamp t, TimestampPrecision precision) noexcept {
    const bool high = t.seconds > 0;
    std::memcpy(out, high ? "9999-12-31T23:59:59." : "0000-01-01T00:00:00.", 20);
    return write_tail(out, high ? nanos_per_second - 1 : 0, precision, cache.suffix, cache.suffix_len);
}

/// The thread's cached minute, with this call's second and fraction.
char* append_cached(const ThreadCache& cache, char* out, Timestamp t, TimestampPrecision precision) noexcept {
    std::memcpy(out, cache.prefix, sizeof cache.prefix);
    put2(out + 17, static_cast<std::uint32_t>(t.seconds - cache.minute_start));
    return write_tail(out, t.nanos, precision, cache.suffix, cache.suffix_len);
}

char* append_uncached(ThreadCache& cache, char* out, Timestamp t, const TimestampFormat& f) noexcept {
    if (!refresh(cache, t.seconds, f.zone.data())) return write_clamped(cache, out, t, f.precision);
    return append_cached(cache, out, t, f.precision);
}

/// True when `cache` holds t's minute in f's zone.
bool holds(const ThreadCache& cache, Timestamp t, const TimestampFormat& f) noexcept {
    // Unsigned: no overflow for any t.seconds, and one before `first` wraps far beyond span.
    const std::uint64_t into_cached = static_cast<std::uint64_t>(t.seconds) - static_cast<std::uint64_t>(cache.first);
    return into_cached < cache.span && zone_key(f.zone.data()) == cache.zone;
}

/// A field time the recent field cache missed: the other one holds it, or is refilled (it is
/// the least recently used); either way it becomes the recent one.
char* append_other_field(FieldCaches& field_caches, char* out, Timestamp t, const TimestampFormat& f) noexcept {
    field_caches.recent ^= 1U;
    ThreadCache& cache = field_caches.entries[field_caches.recent];
    if (holds(cache, t, f)) return append_cached(cache, out, t, f.precision);
    return append_uncached(cache, out, t, f);
}

/// unix_nanos and unix_seconds_float: sign, whole seconds, 9 fraction digits, exact for any t.
char* write_unix(char* out, Timestamp t, bool with_point) noexcept {
    // Magnitude as (whole, frac): −1.5 s is seconds −2 + 0.5e9 ns, magnitude 1 s + 0.5e9 ns.
    std::uint64_t whole = static_cast<std::uint64_t>(t.seconds);
    std::uint32_t frac = t.nanos;
    if (t.seconds < 0) {
        *out++ = '-';
        if (frac == 0) {
            whole = 0 - whole;
        } else {
            whole = static_cast<std::uint64_t>(-(t.seconds + 1));
            frac = nanos_per_second - frac;
        }
    }
    if (with_point) {
        out = write_uint(out, whole);
        *out = '.';
        write_9_digits(out + 1, frac);
        return out + 10;
    }
    if (whole == 0) return write_uint(out, frac);
    out = write_uint(out, whole);
    write_9_digits(out, frac);
    return out + 9;
}

template <Slot S>
char* append_in(char* out, Timestamp t, const TimestampFormat& f) noexcept;

/// The layouts that are not an RFC 3339 text: the unix numbers, and the short time of day, cut
/// from the rfc3339milli text (so it shares its caches). A time value in a field keeps its date:
/// without one it would not say which day it names.
template <Slot S>
[[gnu::noinline]] char* append_other_layout(char* out, Timestamp t, const TimestampFormat& f) noexcept {
    if (f.precision != TimestampPrecision::short_time) {
        return write_unix(out, t, f.precision == TimestampPrecision::unix_seconds_float);
    }
    char* const end = append_in<S>(out, t, TimestampFormat{.precision = TimestampPrecision::milli, .zone = f.zone});
    if constexpr (S == Slot::field) return end;
    constexpr std::size_t time_at = 11;  // after "YYYY-MM-DDT"
    constexpr std::size_t time_size = 12;  // "HH:MM:SS.mmm"
    std::memmove(out, out + time_at, time_size);
    return out + time_size;
}

/// A Timestamp with nanos ≥ 1e9: carried into the seconds (saturating) and written.
template <Slot S>
char* append_carried(char* out, Timestamp t, const TimestampFormat& f) noexcept {
    const std::int64_t carry = t.nanos / nanos_per_second;
    t.seconds = t.seconds > std::numeric_limits<std::int64_t>::max() - carry ? std::numeric_limits<std::int64_t>::max()
                                                                              : t.seconds + carry;
    t.nanos %= nanos_per_second;
    return append_in<S>(out, t, f);
}

/// A thread's first timestamp makes its caches; a thread whose caches are gone (it is exiting)
/// or that cannot get memory writes through a cache of its own stack.
template <Slot S>
[[gnu::noinline]] char* append_without_caches(char* out, Timestamp t, const TimestampFormat& f) noexcept {
    if (!t_caches_gone) {
        CachesOwner& owner = t_owned_caches;
        owner.caches = new (std::nothrow) ThreadCaches;
        t_caches = owner.caches;
        if (t_caches != nullptr) return append_in<S>(out, t, f);
    }
    ThreadCache on_stack;
    return append_uncached(on_stack, out, t, f);
}

template <Slot S>
char* append_in(char* out, Timestamp t, const TimestampFormat& f) noexcept {
    // Every slow path leaves by a tail call, so the cached path stays a leaf without a frame.
    if (t.nanos >= nanos_per_second) [[unlikely]] return append_carried<S>(out, t, f);
    if (f.precision >= TimestampPrecision::unix_nanos) return append_other_layout<S>(out, t, f);
    ThreadCaches* const caches = t_caches;
    if (caches == nullptr) [[unlikely]] return append_without_caches<S>(out, t, f);
    if constexpr (S == Slot::clock) {
        if (!holds(caches->clock, t, f)) [[unlikely]] return append_uncached(caches->clock, out, t, f);
        return append_cached(caches->clock, out, t, f.precision);
    } else {
        const ThreadCache& recent = caches->fields.entries[caches->fields.recent];
        if (!holds(recent, t, f)) [[unlikely]] return append_other_field(caches->fields, out, t, f);
        return append_cached(recent, out, t, f.precision);
    }
}

// ---------------------------------------------------------------------------------------------
// Zones (cold)

/// "+hh:mm" for an offset in whole minutes ("+00:00" for zero).
std::string offset_suffix(std::int32_t offset) {
    const std::uint32_t minutes = static_cast<std::uint32_t>(offset < 0 ? -offset : offset) / 60;
    std::string s = offset < 0 ? "-" : "+";
    s += digit_pairs[2 * (minutes / 60)];
    s += digit_pairs[2 * (minutes / 60) + 1];
    s += ':';
    s += digit_pairs[2 * (minutes % 60)];
    s += digit_pairs[2 * (minutes % 60) + 1];
    return s;
}

/// A rule of `offset` seconds east, truncated to whole minutes, with its suffix.
ZoneRule rule_of(std::int32_t offset) {
    ZoneRule rule;
    rule.offset = detail::whole_minutes(offset);
    const std::string text = offset_suffix(rule.offset);
    std::memcpy(rule.suffix.data(), text.data(), text.size());
    return rule;
}

/// Adds the footer rule of the zone's TZif file `file` for what follows its last listed
/// transition, when it has daylight saving time.
void add_footer(ZoneData& zone, const std::optional<std::string>& file) {
    auto footer = detail::zone_footer(zone.name, file, [&](std::int64_t s) { return (next_listed(zone, s) - 1)->offset; });
    if (footer && footer->rule.has_dst()) {
        zone.footer_from = footer->rule_from;
        zone.footer_std = rule_of(footer->rule.std_offset);
        zone.footer_dst = rule_of(footer->rule.dst_offset);
        zone.footer = std::move(footer->rule);
    }
}

/// Appends a rule of `offset` from `from`, unless it writes as the last one does.
void add_rule(ZoneData& zone, std::int64_t from, std::int32_t offset) {
    const ZoneRule rule = rule_of(offset);
    if (!zone.rules.empty() && zone.rules.back().offset == rule.offset) return;
    zone.rules.push_back(rule);
    zone.rules.back().begin = zone.rules.size() == 1 ? std::numeric_limits<std::int64_t>::min() : from;
}

#if FIELDLOG_WITH_TZ
/// Reads every offset `tz` had from year −1 to 10001 (wall times of years 0000–9999 at any
/// offset), merging neighbours that write the same after truncation to minutes, and the footer
/// rule of its TZif file for what follows the last listed transition (date extends that one).
std::unique_ptr<ZoneData> load_zone(const date::time_zone& tz) {
    auto zone = std::make_unique<ZoneData>();
    zone->name = tz.name();
    const date::sys_seconds stop = date::sys_days{date::year{10001} / 1 / 1};
    date::sys_seconds at = date::sys_days{date::year{-1} / 1 / 1};
    for (;;) {
        const date::sys_info info = tz.get_info(at);
        add_rule(*zone, info.begin.time_since_epoch().count(), static_cast<std::int32_t>(info.offset.count()));
        if (info.end >= stop) break;
        at = info.end;
    }
    add_footer(*zone, detail::read_zone_file(zone->name));
    return zone;
}

/// Zones by IANA name, each loaded once and never freed: a TimeZone is a bare pointer that
/// any thread may use until exit, including from static destructors.
const ZoneData* intern(const date::time_zone& tz) {
    static std::mutex mutex;
    static auto* zones = new std::map<std::string, std::unique_ptr<ZoneData>, std::less<>>;
    const std::lock_guard lock(mutex);
    auto it = zones->find(tz.name());
    if (it == zones->end()) it = zones->emplace(tz.name(), load_zone(tz)).first;
    return it->second.get();
}

const date::time_zone* find_zone(std::string_view name) {
    try {
        return date::locate_zone(std::string(name));
    } catch (const std::runtime_error&) {
        return nullptr;
    }
}

#endif

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API

#if FIELDLOG_WITH_TZ
TimeZone TimeZone::named(std::string_view name) {
    const date::time_zone* tz = find_zone(name);
    if (tz == nullptr) throw std::invalid_argument("fieldlog: unknown time zone \"" + std::string(name) + "\"");
    return TimeZone{intern(*tz)};
}

TimeZone TimeZone::local() {
    // date 3.0.1's current_zone() ignores TZ, which the C library (and users) honour first.
    if (const char* env = std::getenv("TZ"); env != nullptr && *env != '\0') {
        std::string_view name = env;
        if (name.front() == ':') name.remove_prefix(1);
        if (const auto at = name.rfind("zoneinfo/"); at != std::string_view::npos) name.remove_prefix(at + 9);
        if (const date::time_zone* tz = find_zone(name)) return TimeZone{intern(*tz)};
    }
    try {
        return TimeZone{intern(*date::current_zone())};
    } catch (const std::runtime_error&) {
        return utc();  // no /etc/localtime (minimal containers): UTC is what libc assumes too
    }
}

#else
// Without date, named zones are refused; the local zone is read from its TZif file as the C
// library reads it (TZ, else /etc/localtime).
TimeZone TimeZone::named(std::string_view name) {
    throw std::invalid_argument("fieldlog: time zone \"" + std::string(name) +
                                "\": this build of fieldlog has no named time zones, only UTC and local: rebuild "
                                "with -DFIELDLOG_WITH_TZ=ON (needs date-tz: libhowardhinnant-date-dev)");
}

TimeZone TimeZone::local() {
    static std::mutex mutex;
    static auto* zones = new std::map<std::string, std::unique_ptr<ZoneData>, std::less<>>;  // never freed
    std::string name;
    const std::optional<std::string> file = detail::read_local_zone_file(name);
    if (!file) return utc();  // no /etc/localtime (minimal containers): UTC is what libc assumes too
    const std::lock_guard lock(mutex);
    if (const auto it = zones->find(name); it != zones->end()) return TimeZone{it->second.get()};
    std::string error;
    const auto listed = detail::read_tzif_offsets(*file, error);
    if (!listed) {
        std::fprintf(stderr, "fieldlog: the local time zone %s: %s; writing UTC\n", name.c_str(), error.c_str());
        return utc();
    }
    auto zone = std::make_unique<ZoneData>();
    zone->name = name;
    for (const detail::ListedOffset& l : *listed) add_rule(*zone, l.from, l.offset);
    add_footer(*zone, file);
    return TimeZone{zones->emplace(name, std::move(zone)).first->second.get()};
}
#endif

TimeZone TimeZone::parse(std::string_view name) {
    if (name == "UTC") return utc();
    if (name == "local") return local();
    return named(name);
}

std::string_view TimeZone::name() const noexcept { return zone_ == nullptr ? "UTC" : std::string_view(zone_->name); }

char* append_rfc3339(char* out, Timestamp t, const TimestampFormat& f) noexcept { return append_in<Slot::clock>(out, t, f); }

namespace detail {
char* append_rfc3339_value(char* out, Timestamp t, const TimestampFormat& f) noexcept {
    return append_in<Slot::field>(out, t, f);
}

void append_json_time_value(Buffer& out, Timestamp t, const TimestampFormat& f) {
    char* o = out.reserve(max_rfc3339_size + 2);
    ThreadCaches* const caches = t_caches;
    // The default layout in a minute the recent field cache holds: written here whole, quotes
    // included, with no further call (every other case: append_in).
    if (caches != nullptr && f.precision == TimestampPrecision::nano && t.nanos < nanos_per_second) [[likely]] {
        const ThreadCache& cache = caches->fields.entries[caches->fields.recent];
        if (holds(cache, t, f)) [[likely]] {
            o[0] = '"';
            std::memcpy(o + 1, cache.prefix, sizeof cache.prefix);
            put2(o + 18, static_cast<std::uint32_t>(t.seconds - cache.minute_start));
            write_9_digits(o + 21, t.nanos);
            std::memcpy(o + 30, &cache.suffix, sizeof cache.suffix);
            o[30 + cache.suffix_len] = '"';
            out.commit(o + 31 + cache.suffix_len);
            return;
        }
    }
    if (f.is_numeric()) {
        out.commit(append_in<Slot::field>(o, t, f));
        return;
    }
    o[0] = '"';
    char* end = append_in<Slot::field>(o + 1, t, f);
    *end = '"';
    out.commit(end + 1);
}
}  // namespace detail

bool parse_timestamp_precision(std::string_view name, TimestampPrecision& out) noexcept {
    struct Entry {
        std::string_view name;
        TimestampPrecision precision;
    };
    static constexpr Entry entries[] = {
        {"rfc3339nano", TimestampPrecision::nano},
        {"rfc3339nano-trimmed", TimestampPrecision::nano_trimmed},
        {"rfc3339micro", TimestampPrecision::micro},
        {"rfc3339milli", TimestampPrecision::milli},
        {"rfc3339", TimestampPrecision::seconds},
        {"unix_nanos", TimestampPrecision::unix_nanos},
        {"unix_seconds_float", TimestampPrecision::unix_seconds_float},
        {"short", TimestampPrecision::short_time},
    };
    for (const Entry& e : entries) {
        if (e.name == name) {
            out = e.precision;
            return true;
        }
    }
    return false;
}

}  // namespace fieldlog

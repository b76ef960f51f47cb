// SPDX-License-Identifier: MIT
// Timestamps: the `ts` of every record and the value of every time-point field. The encoder
// appends them straight into the record buffer through append_rfc3339; the calendar prefix and
// the zone offset are cached per thread (for the minute: every second of it is a hit), so the
// common case copies ~20 bytes and writes the seconds and the fraction. The record's own time
// has a cache, time values in fields two (a record often carries field times of two minutes),
// so that none evicts another. No heap, no locale, no strftime, no localtime_r on this path;
// zones are loaded once, on the cold path, from date's tz database and the footer rule of each
// zone's TZif file (src/encode/timestamp.cpp, src/encode/tzif.cpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fieldlog/export.hpp"

namespace fieldlog {

/// A point on the UTC time line: whole seconds since 1970-01-01T00:00:00Z (floored) and the
/// nanoseconds into that second. Wider than sys_time<nanoseconds>, so coarse time points of any
/// year 0001–9999 convert exactly.
struct FIELDLOG_API Timestamp {
    std::int64_t seconds = 0;
    std::uint32_t nanos = 0;  ///< in [0, 1e9); append_rfc3339 carries larger values into seconds

    constexpr Timestamp() = default;
    constexpr Timestamp(std::int64_t secs, std::uint32_t ns) noexcept : seconds(secs), nanos(ns) {}

    /// Any system_clock time point; times before 1970 floor (−1 ns is 23:59:59.999999999).
    template <typename Duration>
    constexpr Timestamp(std::chrono::sys_time<Duration> t) noexcept {  // NOLINT: implicit by design
        // Truncate toward zero, then borrow: floor<seconds> overflows converting back to
        // nanoseconds in the last second of sys_time<nanoseconds> (1677-09-21T00:12:43).
        auto secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch());
        auto rest = t.time_since_epoch() - secs;
        if (rest < rest.zero()) {
            secs -= std::chrono::seconds{1};
            rest += std::chrono::seconds{1};
        }
        seconds = static_cast<std::int64_t>(secs.count());
        nanos = static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(rest).count());
    }

    friend constexpr bool operator==(const Timestamp&, const Timestamp&) = default;
};

/// Which digits and which layout a timestamp is written with.
enum class TimestampPrecision : std::uint8_t {
    nano,                ///< 9 fixed fraction digits (default; sorts as text)
    nano_trimmed,        ///< Go's time.RFC3339Nano: trailing zeros trimmed, no dot for .0
    micro,               ///< 6 fixed digits, truncated toward the past
    milli,               ///< 3 fixed digits, truncated toward the past
    seconds,             ///< whole seconds
    unix_nanos,          ///< integer nanoseconds since the epoch (a JSON number)
    unix_seconds_float,  ///< seconds since the epoch with 9 fraction digits (a JSON number)
    short_time,          ///< `15:04:05.000`: the wall time of day in the zone, milliseconds, no date or
                         ///< offset (for people at a console); time values in fields keep rfc3339milli
};

namespace detail {
struct ZoneData;  // defined in src/encode/timestamp.cpp: the zone's offset history
}

/// The zone a timestamp is written in: UTC (`Z`), the machine's local zone or an IANA name
/// (numeric offset `±hh:mm`, also at offset zero: Europe/London in winter is `+00:00`, where
/// Go's Z07:00 would write `Z`). Cheap to copy; zones are loaded once and live for the program.
///
/// The offset switches on the exact second of each transition the tz database lists; after a
/// zone's last listed one (2037 for most zones in Debian's tzdata) it follows the POSIX TZ rule
/// at the end of the zone's TZif file (RFC 8536), as glibc, Go and Python's zoneinfo do, up to
/// year 9999. A zone file without a valid rule is reported once on stderr and its last listed
/// offset holds from then on. Offsets with seconds (local mean time, mostly before 1900) are
/// written truncated to whole minutes and the wall time is computed from that same offset, so
/// the text always names the exact instant.
class FIELDLOG_API TimeZone {
public:
    /// UTC, written as `Z`.
    constexpr TimeZone() noexcept = default;
    static constexpr TimeZone utc() noexcept { return TimeZone{}; }
    /// The machine's zone, resolved now: TZ when it names an IANA zone (`Europe/Berlin`,
    /// `:Europe/Berlin` or a path into a zoneinfo tree), else /etc/localtime, else UTC.
    static TimeZone local();
    /// An IANA zone such as "Europe/Berlin"; throws std::invalid_argument naming an unknown zone.
    /// Cold: the first call per zone reads the tz database and allocates.
    static TimeZone named(std::string_view name);
    /// "UTC", "local" or an IANA name, as TimeZone::named; throws std::invalid_argument.
    static TimeZone parse(std::string_view name);

    [[nodiscard]] constexpr bool is_utc() const noexcept { return zone_ == nullptr; }
    /// "UTC" or the zone's IANA name.
    [[nodiscard]] std::string_view name() const noexcept;
    [[nodiscard]] const detail::ZoneData* data() const noexcept { return zone_; }

    friend constexpr bool operator==(const TimeZone&, const TimeZone&) = default;

private:
    explicit constexpr TimeZone(const detail::ZoneData* zone) noexcept : zone_(zone) {}
    const detail::ZoneData* zone_ = nullptr;
};

/// How timestamps are written: precision/layout and zone. Travels with an encoder.
struct FIELDLOG_API TimestampFormat {
    TimestampPrecision precision = TimestampPrecision::nano;
    TimeZone zone{};

    /// True for the unix_* layouts, which encoders write as numbers rather than strings.
    [[nodiscard]] constexpr bool is_numeric() const noexcept {
        return precision == TimestampPrecision::unix_nanos ||
               precision == TimestampPrecision::unix_seconds_float;
    }
    friend constexpr bool operator==(const TimestampFormat&, const TimestampFormat&) = default;
};

/// A stack array of this many chars always holds one append_rfc3339 result.
inline constexpr std::size_t max_rfc3339_size = 40;

/// Writes `t` in format `f` at `out` (no quotes, no terminator) and returns the end.
/// MUST: `out` has room for max_rfc3339_size chars; the bytes between the returned end and
/// out + max_rfc3339_size may be overwritten (fixed-width stores keep the hot path short).
/// A wall time before 0000-01-01T00:00:00 or after 9999-12-31T23:59:59.999999999 in the chosen
/// zone is clamped to that bound, keeping the zone's offset: never a 5-digit or negative year.
/// The unix_* layouts are exact for every Timestamp. Never allocates; thread-safe.
///
/// **Example**
/// ```
/// char buf[fieldlog::max_rfc3339_size];
/// char* end = fieldlog::append_rfc3339(buf, std::chrono::system_clock::now());
/// // std::string_view(buf, end - buf) == "2026-11-30T08:38:11.120000000Z"
/// ```
FIELDLOG_API char* append_rfc3339(char* out, Timestamp t, const TimestampFormat& f = {}) noexcept;

/// Parses a format name from config: "rfc3339nano", "rfc3339nano-trimmed", "rfc3339micro",
/// "rfc3339milli", "rfc3339", "unix_nanos", "unix_seconds_float", "short"; false when unknown.
FIELDLOG_API bool parse_timestamp_precision(std::string_view name, TimestampPrecision& out) noexcept;

}  // namespace fieldlog

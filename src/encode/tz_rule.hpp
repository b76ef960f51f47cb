// SPDX-License-Identifier: MIT
// The POSIX TZ rule string of a TZif footer (RFC 8536 section 3.3): how a zone keeps time after
// the last transition its file lists. TimeZone::named parses it once (src/encode/tzif.cpp reads
// it from the file); a timestamp cache miss past that transition asks rule_span_at for the
// stretch of one offset around its instant (src/encode/timestamp.cpp). Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fieldlog::detail {

/// The day and local time at which DST starts or ends each year.
struct TzRuleDate {
    enum class Kind : std::uint8_t {
        month_week_day,  ///< Mm.w.d: weekday d (0 = Sunday) of week w (5 = last) of month m
        julian,          ///< Jn: day n of 1–365, February 29 never counted
        zero_based,      ///< n: day n of 0–365, February 29 counted
    };
    Kind kind = Kind::month_week_day;
    std::uint8_t month = 0;
    std::uint8_t week = 0;
    std::uint8_t weekday = 0;
    std::uint16_t day = 0;      ///< n of Jn or n
    std::int32_t time = 7200;   ///< seconds after local midnight (RFC 8536: −167 h to +167 h)

    friend bool operator==(const TzRuleDate&, const TzRuleDate&) = default;
};

/// A parsed rule string: `std offset [dst [offset] ,start[/time],end[/time]]`.
struct PosixTzRule {
    std::string std_name;
    std::int32_t std_offset = 0;  ///< seconds east of UTC (POSIX writes them west: CET-1 is +3600)
    std::string dst_name;         ///< empty: no DST
    std::int32_t dst_offset = 0;  ///< seconds east of UTC; one hour more than std_offset unless given
    TzRuleDate start;             ///< in standard time
    TzRuleDate end;               ///< in DST

    [[nodiscard]] bool has_dst() const noexcept { return !dst_name.empty(); }
    friend bool operator==(const PosixTzRule&, const PosixTzRule&) = default;
};

/// Parses the whole of `text`; nullopt unless it is a rule string. DST without its two rules is
/// rejected: when it applies is not guessed.
std::optional<PosixTzRule> parse_posix_tz(std::string_view text);

/// UTC seconds at which DST starts and ends in local year `year`.
struct TzYearTransitions {
    std::int64_t start = 0;
    std::int64_t end = 0;
};
TzYearTransitions year_transitions(const PosixTzRule& rule, std::int64_t year) noexcept;

/// The offset in force at a UTC second and the UTC seconds [begin, end) around it that keep it.
struct TzRuleSpan {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    std::int32_t offset = 0;
    bool dst = false;
};

/// The span of `rule` holding UTC second `s`, |s| < 2^50 (the caller clamps). Each year in local
/// standard time follows its own two transitions, as in glibc, Go and Python's zoneinfo (which
/// count the year in UTC: the same for every zone's rule, whose transitions are far from New
/// Year): DST from start to end, or, where end comes first in the year, outside end to start.
/// So a rule that starts DST on January 1 and ends it after December 31 (RFC 8536's
/// `EST5EDT,0/0,J365/25`) keeps DST all year.
TzRuleSpan rule_span_at(const PosixTzRule& rule, std::int64_t s) noexcept;

}  // namespace fieldlog::detail

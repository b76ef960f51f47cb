// SPDX-License-Identifier: MIT
// The POSIX TZ rule parser and its calendar (tz_rule.hpp): a strict recursive descent over the
// grammar with RFC 8536's extensions, and the days of a year's two transitions by civil-date
// arithmetic (Howard Hinnant's days-from-civil). Cold except rule_span_at, which a timestamp
// cache miss past a zone's last listed transition calls.
#include "encode/tz_rule.hpp"

#include <algorithm>
#include <limits>

namespace fieldlog::detail {

namespace {

constexpr std::int64_t seconds_per_day = 86400;

/// The parser's position in the rule string; every reader returns false on malformed input.
class Reader {
public:
    explicit Reader(std::string_view text) noexcept : text_(text) {}

    [[nodiscard]] bool done() const noexcept { return pos_ == text_.size(); }
    [[nodiscard]] char peek() const noexcept { return done() ? '\0' : text_[pos_]; }
    bool take(char c) noexcept {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }

    /// `<` [A-Za-z0-9+-]{3,} `>` or [A-Za-z]{3,}.
    bool name(std::string& out) {
        const std::size_t start = pos_;
        if (take('<')) {
            while (is_alpha(peek()) || is_digit(peek()) || peek() == '+' || peek() == '-') ++pos_;
            out.assign(text_.substr(start + 1, pos_ - start - 1));
            return out.size() >= 3 && take('>');
        }
        while (is_alpha(peek())) ++pos_;
        out.assign(text_.substr(start, pos_ - start));
        return out.size() >= 3;
    }

    /// [+-]h[h…][:mm[:ss]] with at most `hour_digits` hour digits and hours up to `max_hours`;
    /// the value as written (sign included) in seconds.
    bool hms(std::size_t hour_digits, int max_hours, std::int32_t& out) noexcept {
        const bool negative = peek() == '-';
        if (negative || peek() == '+') ++pos_;
        int hours = 0;
        int minutes = 0;
        int seconds = 0;
        if (!number(1, hour_digits, hours) || hours > max_hours) return false;
        if (take(':')) {
            if (!number(2, 2, minutes) || minutes > 59) return false;
            if (take(':') && (!number(2, 2, seconds) || seconds > 59)) return false;
        }
        const std::int32_t total = hours * 3600 + minutes * 60 + seconds;
        out = negative ? -total : total;
        return true;
    }

    /// Mm.w.d, Jn or n, then an optional /time.
    bool date(TzRuleDate& out) noexcept {
        int v = 0;
        if (take('M')) {
            out.kind = TzRuleDate::Kind::month_week_day;
            if (!number(1, 2, v) || v < 1 || v > 12) return false;
            out.month = static_cast<std::uint8_t>(v);
            if (!take('.') || !number(1, 1, v) || v < 1 || v > 5) return false;
            out.week = static_cast<std::uint8_t>(v);
            if (!take('.') || !number(1, 1, v) || v > 6) return false;
            out.weekday = static_cast<std::uint8_t>(v);
        } else if (take('J')) {
            out.kind = TzRuleDate::Kind::julian;
            if (!number(1, 3, v) || v < 1 || v > 365) return false;
            out.day = static_cast<std::uint16_t>(v);
        } else {
            out.kind = TzRuleDate::Kind::zero_based;
            if (!number(1, 3, v) || v > 365) return false;
            out.day = static_cast<std::uint16_t>(v);
        }
        out.time = 7200;
        return !take('/') || hms(3, 167, out.time);
    }

private:
    static bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
    static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

    /// Between `min_digits` and `max_digits` decimal digits, no more.
    bool number(std::size_t min_digits, std::size_t max_digits, int& out) noexcept {
        std::size_t n = 0;
        out = 0;
        while (is_digit(peek())) {
            if (++n > max_digits) return false;
            out = out * 10 + (peek() - '0');
            ++pos_;
        }
        return n >= min_digits;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

/// Days from 1970-01-01 to year/month/day of the proleptic Gregorian calendar.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);                     // [0, 399]
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;     // [0, 365]
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;               // [0, 146096]
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

/// The year of a day counted from 1970-01-01.
std::int64_t year_of_day(std::int64_t days) noexcept {
    const std::int64_t z = days + 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    return static_cast<std::int64_t>(yoe) + era * 400 + (mp >= 10 ? 1 : 0);
}

bool is_leap(std::int64_t y) noexcept { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept { return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0); }

/// The local second (from 1970-01-01 local midnight) at which `date` falls in the year whose
/// January 1 is day `jan1`.
std::int64_t local_second(const TzRuleDate& date, std::int64_t jan1, bool leap) noexcept {
    std::int64_t day = 0;
    switch (date.kind) {
        case TzRuleDate::Kind::month_week_day: {
            static constexpr unsigned lengths[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
            static constexpr unsigned before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
            const unsigned length = lengths[date.month - 1] + (date.month == 2 && leap ? 1 : 0);
            const std::int64_t first = jan1 + before[date.month - 1] + (date.month > 2 && leap ? 1 : 0);
            const std::int64_t first_weekday = ((first % 7) + 11) % 7;  // 1970-01-01 was a Thursday
            day = first + (date.weekday - first_weekday + 7) % 7 + 7 * (date.week - 1);
            if (day >= first + length) day -= 7;
            break;
        }
        case TzRuleDate::Kind::julian: day = jan1 + date.day - 1 + (leap && date.day >= 60 ? 1 : 0); break;
        case TzRuleDate::Kind::zero_based: day = jan1 + date.day; break;
    }
    return day * seconds_per_day + date.time;
}

TzYearTransitions transitions_from(const PosixTzRule& rule, std::int64_t jan1, bool leap) noexcept {
    return {local_second(rule.start, jan1, leap) - rule.std_offset, local_second(rule.end, jan1, leap) - rule.dst_offset};
}

}  // namespace

std::optional<PosixTzRule> parse_posix_tz(std::string_view text) {
    Reader in(text);
    PosixTzRule rule;
    std::int32_t west = 0;
    if (!in.name(rule.std_name) || !in.hms(2, 24, west)) return std::nullopt;
    rule.std_offset = -west;
    if (in.done()) return rule;
    if (!in.name(rule.dst_name)) return std::nullopt;
    rule.dst_offset = rule.std_offset + 3600;
    if (in.peek() != ',') {
        if (!in.hms(2, 24, west)) return std::nullopt;
        rule.dst_offset = -west;
    }
    if (!in.take(',') || !in.date(rule.start) || !in.take(',') || !in.date(rule.end) || !in.done()) return std::nullopt;
    return rule;
}

TzYearTransitions year_transitions(const PosixTzRule& rule, std::int64_t year) noexcept {
    return transitions_from(rule, days_from_civil(year, 1, 1), is_leap(year));
}

TzRuleSpan rule_span_at(const PosixTzRule& rule, std::int64_t s) noexcept {
    if (!rule.has_dst()) {
        return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), rule.std_offset, false};
    }
    const std::int64_t year = year_of_day(floor_div(s + rule.std_offset, seconds_per_day));
    const std::int64_t jan1 = days_from_civil(year, 1, 1);
    const bool leap = is_leap(year);
    const TzYearTransitions t = transitions_from(rule, jan1, leap);
    const bool dst = t.start < t.end ? t.start <= s && s < t.end : !(t.end <= s && s < t.start);
    // The year's own bounds and its two transitions cut it into stretches of one offset.
    std::int64_t begin = jan1 * seconds_per_day - rule.std_offset;
    std::int64_t end = (jan1 + (leap ? 366 : 365)) * seconds_per_day - rule.std_offset;
    for (const std::int64_t cut : {t.start, t.end}) {
        if (cut <= s) begin = std::max(begin, cut);
        else end = std::min(end, cut);
    }
    return {begin, end, dst ? rule.dst_offset : rule.std_offset, dst};
}

}  // namespace fieldlog::detail

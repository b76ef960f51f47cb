// SPDX-License-Identifier: MIT
// The POSIX TZ rule strings of TZif footers (src/encode/tz_rule.cpp): the parser against a table
// of valid strings and their fields and of invalid ones, and the offsets a rule gives around its
// transitions (expected instants from Python's zoneinfo on the same rules, and the rule shapes
// RFC 8536 names: DST all year, negative DST, southern hemisphere, 30-minute DST, no DST).
#include "encode/tz_rule.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using fieldlog::detail::parse_posix_tz;
using fieldlog::detail::PosixTzRule;
using fieldlog::detail::rule_span_at;
using fieldlog::detail::TzRuleDate;
using Kind = TzRuleDate::Kind;

constexpr std::int32_t hour = 3600;

TzRuleDate m(int month, int week, int weekday, std::int32_t time = 2 * hour) {
    TzRuleDate d;
    d.kind = Kind::month_week_day;
    d.month = static_cast<std::uint8_t>(month);
    d.week = static_cast<std::uint8_t>(week);
    d.weekday = static_cast<std::uint8_t>(weekday);
    d.time = time;
    return d;
}

TzRuleDate day(Kind kind, int n, std::int32_t time = 2 * hour) {
    TzRuleDate d;
    d.kind = kind;
    d.day = static_cast<std::uint16_t>(n);
    d.time = time;
    return d;
}

PosixTzRule fixed(std::string name, std::int32_t offset) {
    PosixTzRule r;
    r.std_name = std::move(name);
    r.std_offset = offset;
    return r;
}

PosixTzRule with_dst(std::string std_name, std::int32_t std_offset, std::string dst_name, std::int32_t dst_offset,
                     TzRuleDate start, TzRuleDate end) {
    PosixTzRule r = fixed(std::move(std_name), std_offset);
    r.dst_name = std::move(dst_name);
    r.dst_offset = dst_offset;
    r.start = start;
    r.end = end;
    return r;
}

PosixTzRule parsed(const char* text) {
    const auto rule = parse_posix_tz(text);
    REQUIRE(rule.has_value());
    return *rule;
}

}  // namespace

TEST_CASE("Valid rule strings parse to their fields", "[tz][tz_rule]") {
    struct Case {
        const char* text;
        PosixTzRule expected;
    };
    const std::vector<Case> cases = {
        {"CET-1CEST,M3.5.0,M10.5.0/3", with_dst("CET", hour, "CEST", 2 * hour, m(3, 5, 0), m(10, 5, 0, 3 * hour))},
        {"EST5EDT,M3.2.0,M11.1.0", with_dst("EST", -5 * hour, "EDT", -4 * hour, m(3, 2, 0), m(11, 1, 0))},
        {"<+0330>-3:30", fixed("+0330", 3 * hour + 1800)},
        {"<+04>-4", fixed("+04", 4 * hour)},
        {"<-0930>9:30", fixed("-0930", -9 * hour - 1800)},
        {"UTC0", fixed("UTC", 0)},
        {"GMT+0", fixed("GMT", 0)},
        {"LMT-0:53:28", fixed("LMT", 53 * 60 + 28)},
        {"<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
         with_dst("-03", -3 * hour, "-02", -2 * hour, m(3, 5, 0, -2 * hour), m(10, 5, 0, -hour))},
        {"EST5EDT,0/0,J365/25", with_dst("EST", -5 * hour, "EDT", -4 * hour, day(Kind::zero_based, 0, 0),
                                         day(Kind::julian, 365, 25 * hour))},
        {"IST-1GMT0,M10.5.0,M3.5.0/1", with_dst("IST", hour, "GMT", 0, m(10, 5, 0), m(3, 5, 0, hour))},
        {"<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
         with_dst("+1030", 10 * hour + 1800, "+11", 11 * hour, m(10, 1, 0), m(4, 1, 0))},
        {"<-04>4<-03>,M9.1.6/24,M4.1.6/24", with_dst("-04", -4 * hour, "-03", -3 * hour, m(9, 1, 6, 24 * hour),
                                                     m(4, 1, 6, 24 * hour))},
        {"EET-2EEST,M3.4.4/50,M10.4.4/50", with_dst("EET", 2 * hour, "EEST", 3 * hour, m(3, 4, 4, 50 * hour),
                                                    m(10, 4, 4, 50 * hour))},
        {"<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45",
         with_dst("+1245", 12 * hour + 2700, "+1345", 13 * hour + 2700, m(9, 5, 0, 2 * hour + 2700),
                  m(4, 1, 0, 3 * hour + 2700))},
        {"XXX3YYY,J1/167,J365/-167:59:59", with_dst("XXX", -3 * hour, "YYY", -2 * hour, day(Kind::julian, 1, 167 * hour),
                                                    day(Kind::julian, 365, -(167 * hour + 59 * 60 + 59)))},
        {"ABC+12:00:01DEF-24,59,365/+0", with_dst("ABC", -(12 * hour + 1), "DEF", 24 * hour, day(Kind::zero_based, 59),
                                                  day(Kind::zero_based, 365, 0))},
        {"<A+1>1<B-2>,M12.5.6/23:59:59,M1.1.0", with_dst("A+1", -hour, "B-2", 0, m(12, 5, 6, 23 * hour + 3599), m(1, 1, 0))},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.text) {
            const auto rule = parse_posix_tz(c.text);
            REQUIRE(rule.has_value());
            CHECK(rule->std_name == c.expected.std_name);
            CHECK(rule->std_offset == c.expected.std_offset);
            CHECK(rule->dst_name == c.expected.dst_name);
            CHECK(rule->dst_offset == c.expected.dst_offset);
            CHECK(rule->start == c.expected.start);
            CHECK(rule->end == c.expected.end);
        }
    }
}

TEST_CASE("Malformed rule strings are rejected", "[tz][tz_rule]") {
    const std::vector<const char*> cases = {
        "",                                // empty
        "CET",                             // missing offset
        "CET-",                            // sign without hours
        "CE-1",                            // name shorter than 3
        "<+1>-1",                          // quoted name shorter than 3
        "<+0330-3:30",                     // unterminated <
        "<+03 30>-3",                      // space in a quoted name
        "CET-1CEST",                       // DST without its rules
        "CET-1CEST,M3.5.0",                // one rule only
        "CET-1CEST,M13.5.0,M10.5.0/3",     // month 13
        "CET-1CEST,M0.5.0,M10.5.0/3",      // month 0
        "CET-1CEST,M3.6.0,M10.5.0/3",      // week 6
        "CET-1CEST,M3.0.0,M10.5.0/3",      // week 0
        "CET-1CEST,M3.5.7,M10.5.0/3",      // day 7
        "CET-1CEST,M3.5,M10.5.0/3",        // no day
        "CET-1CEST,J0,J365",               // J0
        "CET-1CEST,J1,J366",               // J366
        "CET-1CEST,0,366",                 // n = 366
        "CET-1CEST,M3.5.0/168,M10.5.0/3",  // hour 168
        "CET-1CEST,M3.5.0/-168,M10.5.0",   // hour -168
        "CET-1CEST,M3.5.0/2:60,M10.5.0",   // minute 60
        "CET-1CEST,M3.5.0/2:5,M10.5.0",    // one-digit minute
        "CET-25",                          // offset hour 25
        "CET-1:00:60",                     // offset second 60
        "CET-100",                         // three-digit offset hours
        "CET-1CEST,M3.5.0,M10.5.0/3x",     // garbage after
        "CET-1CEST,M3.5.0,M10.5.0/3,",     // a third rule begun
        "CET-1 ",                          // trailing space
        "CET-1CEST-2,",                    // empty rules
        "CET-1\n",                         // the footer's newline is not part of the rule
        "3CET",                            // digits first
        "CET-1,M3.5.0,M10.5.0",            // rules without DST
    };
    for (const char* text : cases) {
        DYNAMIC_SECTION('"' << text << '"') { CHECK_FALSE(parse_posix_tz(text).has_value()); }
    }
}

TEST_CASE("A rule switches on the instants zoneinfo gives for 2050", "[tz][tz_rule]") {
    struct Case {
        const char* rule;
        std::int64_t first, second;         // UTC instants of the year's switches (zoneinfo)
        std::int32_t before, between, after;  // offsets east, seconds
    };
    const std::vector<Case> cases = {
        {"CET-1CEST,M3.5.0,M10.5.0/3", 2531955600, 2550704400, hour, 2 * hour, hour},
        {"EST5EDT,M3.2.0,M11.1.0", 2530767600, 2551327200, -5 * hour, -4 * hour, -5 * hour},
        {"<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", 2532524400, 2548251000, 11 * hour, 10 * hour + 1800, 11 * hour},
        {"<-04>4<-03>,M9.1.6/24,M4.1.6/24", 2532567600, 2545876800, -3 * hour, -4 * hour, -3 * hour},
        {"IST-1GMT0,M10.5.0,M3.5.0/1", 2531955600, 2550704400, 0, hour, 0},
        {"<-02>2<-01>,M3.5.0/-1,M10.5.0/0", 2531955600, 2550704400, -2 * hour, -hour, -2 * hour},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.rule) {
            const PosixTzRule rule = parsed(c.rule);
            CHECK(rule_span_at(rule, c.first - 1).offset == c.before);
            CHECK(rule_span_at(rule, c.first).offset == c.between);
            CHECK(rule_span_at(rule, c.second - 1).offset == c.between);
            CHECK(rule_span_at(rule, c.second).offset == c.after);
            // The span around an instant ends on the next switch and begins on the last.
            CHECK(rule_span_at(rule, c.first).begin == c.first);
            CHECK(rule_span_at(rule, c.first).end == c.second);
            CHECK(rule_span_at(rule, c.first - 1).end == c.first);
            CHECK(rule_span_at(rule, c.second).begin == c.second);
        }
    }
}

TEST_CASE("DST all year stays on across New Year", "[tz][tz_rule]") {
    const PosixTzRule rule = parsed("EST5EDT,0/0,J365/25");
    // 2049-12-31T19:00-05:00 (midnight UTC) to 2050-01-01T05:00Z: between one year's end and the
    // next one's start, which meet.
    for (const std::int64_t s : {2524608000 - 1, 2524608000, 2524608000 + 4 * hour, 2524608000 + 5 * hour,
                                 2524608000 + 180 * 86400}) {
        const auto span = rule_span_at(rule, s);
        CHECK(span.dst);
        CHECK(span.offset == -4 * hour);
        CHECK(span.begin <= s);
        CHECK(s < span.end);
    }
}

TEST_CASE("Without DST a rule is one offset for ever", "[tz][tz_rule]") {
    const PosixTzRule rule = parsed("<+04>-4");
    for (const std::int64_t s : {std::int64_t{-62'167'219'200}, std::int64_t{0}, std::int64_t{253'402'300'799}}) {
        const auto span = rule_span_at(rule, s);
        CHECK(span.offset == 4 * hour);
        CHECK_FALSE(span.dst);
        CHECK(span.begin <= s);
        CHECK(s < span.end);
    }
}

TEST_CASE("Week 5 is the last such weekday and Jn never counts February 29", "[tz][tz_rule]") {
    using fieldlog::detail::year_transitions;
    // 2048 is a leap year whose February 29 is a Saturday: its last Sunday is the 23rd.
    CHECK(year_transitions(parsed("UTC0DST,M2.5.0,M11.1.0"), 2048).start == 2466036000);  // 2048-02-23T02:00Z
    CHECK(year_transitions(parsed("UTC0DST,M2.5.0,M11.1.0"), 2049).start == 2498090400);  // 2049-02-28T02:00Z
    CHECK(year_transitions(parsed("UTC0DST,J60,M11.1.0"), 2048).start == 2466640800);     // 2048-03-01T02:00Z
    CHECK(year_transitions(parsed("UTC0DST,59,M11.1.0"), 2048).start == 2466554400);      // 2048-02-29T02:00Z
    CHECK(year_transitions(parsed("UTC0DST,59,M11.1.0"), 2049).start == 2498176800);      // 2049-03-01T02:00Z
}

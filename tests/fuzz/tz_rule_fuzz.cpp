// SPDX-License-Identifier: MIT
// libFuzzer target for the POSIX TZ rule parser of TZif footers (src/encode/tz_rule.cpp): any
// bytes. A rule that parses must hold its grammar's bounds, and for a few instants of years
// 0000–9999 its span must hold the instant with the offset of standard time or DST. The TZif
// reader (src/encode/tzif.cpp) gets the same bytes as a footer. Seeds: tests/fuzz/corpus/tz_rule/.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "encode/tz_rule.hpp"
#include "encode/tzif.hpp"
#include "fuzz_support.hpp"

namespace {

using fieldlog::detail::TzRuleDate;

void check_date(const TzRuleDate& d, std::string_view text) {
    const bool ok = d.kind == TzRuleDate::Kind::month_week_day
                        ? d.month >= 1 && d.month <= 12 && d.week >= 1 && d.week <= 5 && d.weekday <= 6
                        : (d.kind == TzRuleDate::Kind::julian ? d.day >= 1 && d.day <= 365 : d.day <= 365);
    if (!ok) fuzz::fail("a rule date out of its bounds", text);
    if (d.time < -(167 * 3600 + 59 * 60 + 59) || d.time > 167 * 3600 + 59 * 60 + 59) fuzz::fail("a rule time beyond 167 hours", text);
}

/// A minimal v2 TZif file without transitions, with `footer` as its footer line.
std::string tzif_with_footer(std::string_view footer) {
    std::string block = "TZif2" + std::string(15, '\0');
    for (const std::uint32_t count : {0U, 0U, 0U, 0U, 1U, 4U}) {
        for (int shift = 24; shift >= 0; shift -= 8) block += static_cast<char>(count >> shift & 0xFF);
    }
    block += std::string("\0\0\0\0\0\0UTC\0", 10);
    return block + block + "\n" + std::string(footer) + "\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::string error;
    const auto footer = fieldlog::detail::read_tzif_footer(tzif_with_footer(text), error);
    const auto rule = fieldlog::detail::parse_posix_tz(text);
    if (footer.has_value() != rule.has_value()) fuzz::fail("the TZif reader and the parser disagree", text);
    if (!rule) return 0;
    if (rule->std_name.size() < 3 || (rule->has_dst() && rule->dst_name.size() < 3)) fuzz::fail("a name shorter than 3", text);
    if (rule->std_offset < -24 * 3600 - 3599 || rule->std_offset > 24 * 3600 + 3599) fuzz::fail("an offset beyond 24 hours", text);
    if (!rule->has_dst()) return 0;
    check_date(rule->start, text);
    check_date(rule->end, text);
    for (const std::int64_t s : {std::int64_t{-62'167'219'200}, std::int64_t{0}, std::int64_t{2'531'955'600},
                                 std::int64_t{253'402'300'799}}) {
        const auto span = fieldlog::detail::rule_span_at(*rule, s);
        if (span.begin > s || s >= span.end) fuzz::fail("a span that does not hold its instant", text);
        if (span.offset != (span.dst ? rule->dst_offset : rule->std_offset)) fuzz::fail("a span's offset is neither", text);
        // Every second of the span has its offset: probe both ends.
        if (fieldlog::detail::rule_span_at(*rule, span.begin).offset != span.offset ||
            fieldlog::detail::rule_span_at(*rule, span.end - 1).offset != span.offset) {
            fuzz::fail("a span's ends have another offset", text);
        }
    }
    return 0;
}

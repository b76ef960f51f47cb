// SPDX-License-Identifier: MIT
// Reading the footer of TZif files (src/encode/tzif.cpp): files built here byte by byte (both
// data blocks, leap records, the footer) and the system's own, the errors of malformed ones,
// and the fallback: a zone without a usable footer says so in one stderr line naming it.
#include "encode/tzif.hpp"

#include "support/test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using fieldlog::detail::read_tzif_footer;
using fieldlog::detail::zone_footer;

void put32(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(v >> shift & 0xFF);
}

void put64(std::string& out, std::int64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>(static_cast<std::uint64_t>(v) >> shift & 0xFF);
}

/// A TZif file with two types (CET, CEST), the given transitions alternating between them, one
/// leap second record and `footer` after the v2 block (as written: newlines included).
std::string tzif(char version, const std::vector<std::int64_t>& transitions, const std::string& footer) {
    std::string out;
    for (const std::size_t time_size : {std::size_t{4}, std::size_t{8}}) {
        out += "TZif";
        out += version;
        out += std::string(15, '\0');
        const auto n = static_cast<std::uint32_t>(transitions.size());
        for (const std::uint32_t count : {2U, 2U, 1U, n, 2U, 9U}) put32(out, count);  // isut isstd leap time type char
        for (const std::int64_t t : transitions) {
            if (time_size == 4) put32(out, static_cast<std::uint32_t>(t));
            else put64(out, t);
        }
        for (std::size_t i = 0; i < transitions.size(); ++i) out += static_cast<char>(i % 2);
        put32(out, 3600);
        out += std::string("\0\0", 2);
        put32(out, 7200);
        out += std::string("\1\4", 2);
        out += std::string("CET\0CEST\0", 9);
        if (time_size == 4) put32(out, 78796800);
        else put64(out, 78796800);
        put32(out, 1);
        out += std::string(4, '\0');  // isstd, isut
        if (version == '\0') break;
    }
    return out + footer;
}

const std::string berlin_rule = "CET-1CEST,M3.5.0,M10.5.0/3";

}  // namespace

TEST_CASE("A TZif footer is found past both data blocks, with the last transition", "[tz][tzif]") {
    std::string error;
    const auto footer = read_tzif_footer(tzif('2', {-100, 2'000'000'000}, "\n" + berlin_rule + "\n"), error);
    REQUIRE(footer.has_value());
    CHECK(error.empty());
    CHECK(footer->rule_from == 2'000'000'000);
    CHECK(footer->rule.std_name == "CET");
    CHECK(footer->rule.dst_name == "CEST");
    // 64-bit times in the v2 block: one before 1901 and one after 2038.
    const auto wide = read_tzif_footer(tzif('3', {-5'000'000'000, 5'000'000'000}, "\n" + berlin_rule + "\n"), error);
    REQUIRE(wide.has_value());
    CHECK(wide->rule_from == 5'000'000'000);
    const auto none = read_tzif_footer(tzif('2', {}, "\n<+04>-4\n"), error);
    REQUIRE(none.has_value());
    CHECK(none->rule_from == std::numeric_limits<std::int64_t>::min());
}

TEST_CASE("The system's zone files have their footers read", "[tz][tzif]") {
    const auto file = fieldlog::detail::read_zone_file("Europe/Berlin");
    REQUIRE(file.has_value());
    std::string error;
    const auto footer = read_tzif_footer(*file, error);
    REQUIRE(footer.has_value());
    CHECK(footer->rule.std_offset == 3600);
    CHECK(footer->rule.dst_offset == 7200);
    CHECK(footer->rule_from > 2'000'000'000);  // Debian's files list transitions to 2037
    CHECK_FALSE(fieldlog::detail::read_zone_file("Mars/Olympus_Mons").has_value());
}

TEST_CASE("Malformed TZif files and footers are rejected with a reason", "[tz][tzif]") {
    struct Case {
        const char* what;
        std::string file;
        const char* reason;
    };
    const std::string good = tzif('2', {-100, 2'000'000'000}, "\n" + berlin_rule + "\n");
    const std::vector<Case> cases = {
        {"empty", "", "not a TZif file"},
        {"no magic", "TZjf" + good.substr(4), "not a TZif file"},
        {"version 1", tzif('\0', {-100}, ""), "version 1"},
        {"cut in the v2 data", good.substr(0, good.size() - berlin_rule.size() - 10), "cut short"},
        {"cut in the v2 header", good.substr(0, 100), "not a TZif file"},
        {"no footer", tzif('2', {-100}, ""), "not one line"},
        {"footer without its last newline", tzif('2', {-100}, "\n" + berlin_rule), "not one line"},
        {"footer of two lines", tzif('2', {-100}, "\n" + berlin_rule + "\nx\n"), "not one line"},
        {"empty footer", tzif('2', {-100}, "\n\n"), "empty"},
        {"malformed rule", tzif('2', {-100}, "\nCET-1CEST,M3.5.0\n"), "is not a POSIX TZ rule"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.what) {
            std::string error;
            CHECK_FALSE(read_tzif_footer(c.file, error).has_value());
            CHECK_THAT(error, Catch::Matchers::Contains(c.reason));
        }
    }
}

TEST_CASE("A zone without a usable footer falls back with one stderr line naming it", "[tz][tzif]") {
    const fieldlog_test::TempDir dir;
    const std::string report = dir.file("stderr.txt");
    const auto table_cet = [](std::int64_t) { return std::int32_t{3600}; };
    const auto table_utc = [](std::int64_t) { return std::int32_t{0}; };
    SECTION("a malformed footer") {
        {
            const fieldlog_test::StderrTo to(report);
            CHECK_FALSE(zone_footer("Test/Malformed", tzif('2', {-100, 2'000'000'000}, "\nCET-1CEST,M3.5.0,M10.6.0\n"),
                                    table_cet));
        }
        const auto lines = fieldlog_test::read_lines(report);
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Matchers::StartsWith("fieldlog: time zone Test/Malformed: the TZif footer"));
        CHECK_THAT(lines[0], Catch::Matchers::Contains("offset stays"));
    }
    SECTION("a footer that disagrees with the last listed offset") {
        {
            const fieldlog_test::StderrTo to(report);
            CHECK_FALSE(zone_footer("Test/Disagrees", tzif('2', {-100, 2'000'000'000}, "\n" + berlin_rule + "\n"), table_utc));
        }
        const auto lines = fieldlog_test::read_lines(report);
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Matchers::Contains("Test/Disagrees: its TZif footer disagrees"));
    }
    SECTION("an unreadable file") {
        {
            const fieldlog_test::StderrTo to(report);
            CHECK_FALSE(zone_footer("Test/Missing", std::nullopt, table_cet));
        }
        const auto lines = fieldlog_test::read_lines(report);
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Matchers::Contains("Test/Missing: its TZif file cannot be read"));
    }
    SECTION("a good footer says nothing") {
        {
            const fieldlog_test::StderrTo to(report);
            // 2'000'000'000 is 2033-05-18, in CEST: the table's offset there is +02:00.
            const auto footer = zone_footer("Test/Good", tzif('2', {-100, 2'000'000'000}, "\n" + berlin_rule + "\n"),
                                            [](std::int64_t) { return std::int32_t{7200}; });
            REQUIRE(footer.has_value());
            CHECK(footer->rule_from == 2'000'000'000);
        }
        CHECK(fieldlog_test::read_lines(report).empty());
    }
}

// SPDX-License-Identifier: MIT
// JSON string escaping at the edges of its fast paths: strings of every length up to and past
// the 16-byte blocks, with one special byte at every position, against a byte-by-byte
// reference (the rules of RFC 8259 and U+FFFD replacement); fixed-point doubles against fmt; and
// an error code's text, in and out of a signal handler.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "base/buffer.hpp"
#include "encode/text.hpp"

namespace {

using fieldlog::detail::Buffer;

std::string escaped(std::string_view s) {
    Buffer out;
    fieldlog::detail::append_json_escaped(out, s);
    return std::string(out.view());
}

std::string repaired(std::string_view s) {
    Buffer out;
    fieldlog::detail::append_utf8_repaired(out, s);
    return std::string(out.view());
}

std::string quoted(std::string_view s) {
    Buffer out;
    fieldlog::detail::append_json_string(out, s);
    return std::string(out.view());
}

}  // namespace

TEST_CASE("A special byte is escaped, or for a message only repaired, at every position of strings of every length",
          "[text]") {
    const struct {
        const char* name;
        std::string_view input;
        std::string_view expected;
        std::string_view repaired;  ///< by append_utf8_repaired: UTF-8 made valid, nothing escaped
    } specials[] = {
        {"quote", "\"", "\\\"", "\""},
        {"backslash", "\\", "\\\\", "\\"},
        {"newline", "\n", "\\n", "\n"},
        {"tab", "\t", "\\t", "\t"},
        {"NUL", std::string_view("\0", 1), "\\u0000", std::string_view("\0", 1)},
        {"unit separator", "\x1f", "\\u001f", "\x1f"},
        {"DEL is safe", "\x7f", "\x7f", "\x7f"},
        {"space is safe", " ", " ", " "},
        {"valid two-byte UTF-8", "\xC3\xA9", "\xC3\xA9", "\xC3\xA9"},
        {"valid four-byte UTF-8", "\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
        {"lone continuation byte", "\x80", "\xEF\xBF\xBD", "\xEF\xBF\xBD"},
        {"byte never in UTF-8", "\xFF", "\xEF\xBF\xBD", "\xEF\xBF\xBD"},
        {"truncated three-byte sequence", "\xE2\x82", "\xEF\xBF\xBD", "\xEF\xBF\xBD"},
    };
    for (const auto& special : specials) {
        DYNAMIC_SECTION(special.name) {
            for (std::size_t length = special.input.size(); length <= 100; ++length) {
                for (std::size_t at = 0; at + special.input.size() <= length; ++at) {
                    const std::string before(at, 'a');
                    const std::string after(length - at - special.input.size(), 'z');
                    const std::string input = before + std::string(special.input) + after;
                    const std::string expected = before + std::string(special.expected) + after;
                    INFO("length " << length << ", at " << at);
                    REQUIRE(escaped(input) == expected);
                    REQUIRE(quoted(input) == '"' + expected + '"');
                    REQUIRE(repaired(input) == before + std::string(special.repaired) + after);
                }
            }
        }
    }
}

TEST_CASE("Safe strings of every length are copied unchanged", "[text]") {
    std::string input;
    for (std::size_t length = 0; length <= 70; ++length) {
        INFO("length " << length);
        REQUIRE(escaped(input) == input);
        REQUIRE(quoted(input) == '"' + input + '"');
        input.push_back(static_cast<char>(0x20 + (length * 7) % 0x5F));  // printable, '"' and '\\' skipped below
        if (input.back() == '"' || input.back() == '\\') input.back() = 'x';
    }
}

TEST_CASE("Escaping appends after what the buffer holds", "[text]") {
    Buffer out;
    out.append("{\"k\":");
    fieldlog::detail::append_json_string(out, "v\"w");
    fieldlog::detail::append_json_string(out, "short");
    CHECK(out.view() == "{\"k\":\"v\\\"w\"\"short\"");
}

TEST_CASE("Integers at the edges of the small-integer path match std::to_string", "[text]") {
    const std::int64_t values[] = {0,     1,     9,      10,     11,    99,    100,       101,  999,
                                   1000,  1001,  9999,   10000,  10001, 12345, 99999999,  -1,   -9,
                                   -10,   -9999, -10000, INT64_MAX,     INT64_MIN, INT64_MIN + 1};
    for (const std::int64_t v : values) {
        Buffer out;
        out.append("x");
        fieldlog::detail::append_int(out, v);
        const std::string expected = std::to_string(v);
        CHECK(out.view().substr(0, 1) == "x");
        CHECK(out.view().substr(1) == expected);
    }
    const std::uint64_t unsigned_values[] = {0, 7, 42, 999, 9999, 10000, UINT64_MAX};
    for (const std::uint64_t v : unsigned_values) {
        Buffer out;
        fieldlog::detail::append_uint(out, v);
        CHECK(out.view() == std::to_string(v));
    }
}

TEST_CASE("A double with a fixed precision is written as fmt writes it, or left to fmt", "[text]") {
    const auto check = [](double v, unsigned precision) {
        Buffer out;
        out.append("x", 1);  // appends after what the buffer holds
        const bool written = fieldlog::detail::append_fixed(out, v, precision);
        const bool in_range = std::isfinite(v) && std::fabs(v) * std::pow(10.0, precision) < 0x1p64 * (1 - 0x1p-40);
        if (in_range) REQUIRE(written);
        if (written) {
            std::string expected = "x";
            expected += fmt::format("{:.{}f}", v, precision);
            INFO(fmt::format("{:a} .{}f", v, precision));
            REQUIRE(std::string(out.view()) == expected);
        } else {
            REQUIRE(out.view() == "x");
        }
    };
    std::mt19937_64 random(20261207);
    for (unsigned precision = 0; precision <= 9; ++precision) {
        const double unit = std::pow(10.0, -static_cast<double>(precision));
        for (const double v : {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, 0.125, 0.15, 0.25, 0.35, 1e-12, -1e-12, 5e-324,
                               std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                               0x1p64 * unit, 0x1p63 * unit, 0x1p52, 0x1p53 + 2}) {
            check(v, precision);
        }
        for (int i = 0; i < 20000; ++i) {
            // Halves of the last digit, where the rounding decides; plain values of every size;
            // and any bit pattern.
            const auto n = static_cast<double>(random() % 2'000'000'000) - 1e9;
            check((n + 0.5) * unit, precision);
            check(std::ldexp(static_cast<double>(random() >> 11), static_cast<int>(random() % 140) - 120), precision);
            check(std::bit_cast<double>(random()), precision);
        }
    }
}

TEST_CASE("Short strings that end at a page end are read within the page", "[text]") {
    // The page after the text is inaccessible: a 16-byte load past a string's end would fault.
    const long page = sysconf(_SC_PAGESIZE);
    void* map = mmap(nullptr, static_cast<std::size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    char* const base = static_cast<char*>(map);
    REQUIRE(mprotect(base + page, static_cast<std::size_t>(page), PROT_NONE) == 0);
    for (std::size_t n = 0; n <= 17; ++n) {
        for (std::size_t gap = 0; gap <= 17; ++gap) {  // bytes between the text's end and the page end
            char* text = base + page - gap - n;
            for (std::size_t i = 0; i < n; ++i) text[i] = static_cast<char>('a' + i);
            if (n > 0 && gap % 2 == 1) text[n / 2] = '"';  // and the escaping path, half the time
            const std::string_view s(text, n);
            std::string expected = "\"";
            for (const char c : s) expected += c == '"' ? std::string("\\\"") : std::string(1, c);
            expected += '"';
            CHECK(quoted(s) == expected);
        }
    }
    CHECK(quoted(std::string_view()) == "\"\"");
    munmap(map, static_cast<std::size_t>(2 * page));
}

#if FIELDLOG_SSE2_SCANS
TEST_CASE("Every copy of long text this CPU runs stops at the first unsafe byte", "[text]") {
    // Lengths through the 16- and 32-byte steps, their overlapping tails and the loops past them.
    const unsigned char unsafe[] = {'"', '\\', 0x00, 0x1f, 0x80, 0xff};
    const unsigned char safe[] = {' ', 0x7f, '~', 'a'};
    for (const fieldlog::detail::CopySafePrefix copy : fieldlog::detail::json_safe_copies()) {
        for (std::size_t length = 17; length <= 140; ++length) {
            std::string input(length, 'a');
            std::string out(length, '\0');
            const auto run = [&] {
                return copy(out.data(), reinterpret_cast<const unsigned char*>(input.data()), length);
            };
            INFO("length " << length);
            for (const unsigned char c : safe) {
                input.assign(length, static_cast<char>(c));
                REQUIRE(run() == length);
                REQUIRE(out == input);
            }
            input.assign(length, 'a');
            for (std::size_t at = 0; at < length; ++at) {
                for (const unsigned char c : unsafe) {
                    INFO("byte " << int{c} << " at " << at);
                    input[at] = static_cast<char>(c);
                    out.assign(length, '\0');
                    REQUIRE(run() == at);
                    REQUIRE(out.compare(0, at, input, 0, at) == 0);
                }
                input[at] = 'a';
            }
        }
    }
    CHECK(!fieldlog::detail::json_safe_copies().empty());
}
#endif

namespace {

/// A user category that counts its message() calls.
class CountingCategory final : public std::error_category {
public:
    explicit CountingCategory(const char* name) : name_(name) {}
    const char* name() const noexcept override { return name_; }
    std::string message(int) const override {
        ++messages;
        return "the user's message";
    }
    mutable int messages = 0;

private:
    const char* name_;
};

std::string error_text(const std::error_code& code) {
    Buffer out;
    fieldlog::detail::append_error_code(out, code);
    return std::string(out.view());
}

}  // namespace

TEST_CASE("In a signal handler an error code of a user category is written without its message()", "[text]") {
    const CountingCategory plain("payments");
    const CountingCategory odd("db\"pool\\\x01\xc3\xa9");
    const std::string long_name(100, 'n');
    const CountingCategory long_named(long_name.c_str());
    const std::error_code refused = std::make_error_code(std::errc::connection_refused);

    CHECK(error_text(std::error_code(42, plain)) == "the user's message (payments:42)");
    CHECK(plain.messages == 1);

    fieldlog::detail::set_signal_safe_text(true);
    const std::string in_handler = error_text(std::error_code(42, plain));
    const std::string odd_in_handler = error_text(std::error_code(-7, odd));
    const std::string long_in_handler = error_text(std::error_code(3, long_named));
    const std::string generic_in_handler = error_text(refused);
    fieldlog::detail::set_signal_safe_text(false);

    CHECK(in_handler == "(payments:42)");
    CHECK(plain.messages == 1);
    // Each byte JSON would escape, and each past ASCII, is '?': the text escapes to itself.
    CHECK(odd_in_handler == "(db?pool????:-7)");
    CHECK(escaped(odd_in_handler) == odd_in_handler);
    CHECK(odd.messages == 0);
    CHECK(long_in_handler == "(" + std::string(64, 'n') + ":3)");
    CHECK(long_named.messages == 0);
    // The generic and system categories keep their message: it comes from a static table.
    CHECK(generic_in_handler == "Connection refused (generic:111)");
    CHECK(error_text(std::error_code(42, plain)) == "the user's message (payments:42)");
}

// SPDX-License-Identifier: MIT
// The JSON encoder: exact golden lines for every value kind, RFC 8259 escaping, invalid UTF-8
// replaced per maximal subpart, non-finite floats, integer extremes.
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/test_support.hpp"

using namespace std::chrono_literals;
using fieldlog_test::capture;
using fieldlog_test::jsonl_errors;

namespace {

const std::string kPrefix =
    R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"test","msg":"m")";

/// The line one record with `fields` produces.
std::string line_with(fieldlog::Fields fields) {
    auto sink = capture();
    fieldlog::get("test").info("m", fields);
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
}

std::string string_field(std::string_view value) { return line_with({{"s", value}}); }

/// A user type: written by fieldlog_encode (found by ADL), as an object of its own.
struct Point {
    int x;
    int y;
};
void fieldlog_encode(fieldlog::ValueEncoder& encoder, const Point& p) {
    encoder.value(fieldlog::Object{{"x", p.x}, {"y", p.y}});
}

}  // namespace

TEST_CASE("a record is one JSON line with ts, level, logger, msg, then fields in order", "[json]") {
    auto sink = capture();
    fieldlog::get("http").info("request done", {{"status", 200}, {"path", "/checkout"}, {"ok", true}});
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] ==
          R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"http","msg":"request done",)"
          R"("status":200,"path":"/checkout","ok":true})");
    CHECK(jsonl_errors(lines) == "");
}

TEST_CASE("every value kind has its exact JSON form", "[json]") {
    const std::error_code refused = std::make_error_code(std::errc::connection_refused);
    const std::array<std::byte, 4> bytes{std::byte{'f'}, std::byte{'o'}, std::byte{'o'}, std::byte{0xFF}};
    const std::vector<int> ints{1, 2, 3};
    const std::vector<std::string> strings{"a", "b"};
    const std::chrono::sys_time<std::chrono::nanoseconds> when{std::chrono::nanoseconds(1'700'000'000'000'000'001)};
    // Values refer to their contents (see field.hpp), so nested contents are named locals here:
    // the table outlives the full expression that built it.
    const fieldlog::Field object_fields[] = {{"a", 1}, {"b", "x"}};
    const fieldlog::Value array_values[] = {1, "two", 3.5, nullptr};
    const fieldlog::Field inner[] = {{"k", true}};
    const fieldlog::Value list[] = {fieldlog::Object(std::span(inner))};
    const fieldlog::Field outer[] = {{"list", fieldlog::Array(std::span(list))}};
    struct Case {
        const char* name;
        fieldlog::Value value;
        std::string json;
    };
    const Case cases[] = {
        {"null", nullptr, "null"},
        {"true", true, "true"},
        {"false", false, "false"},
        {"int", -42, "-42"},
        {"int64 min", std::numeric_limits<std::int64_t>::min(), "-9223372036854775808"},
        {"int64 max", std::numeric_limits<std::int64_t>::max(), "9223372036854775807"},
        {"uint64 max", std::numeric_limits<std::uint64_t>::max(), "18446744073709551615"},
        {"double", 1.5, "1.5"},
        {"double shortest", 0.1, "0.1"},
        {"double exponent", 1e300, "1e+300"},
        {"NaN", std::nan(""), R"("NaN")"},
        {"+Inf", std::numeric_limits<double>::infinity(), R"("+Inf")"},
        {"-Inf", -std::numeric_limits<double>::infinity(), R"("-Inf")"},
        {"string", "text", R"("text")"},
        {"null char pointer", static_cast<const char*>(nullptr), "null"},
        {"duration ms", 1250us, R"("1.25ms")"},
        {"duration zero", 0s, R"("0s")"},
        {"duration hours", 7384500ms, R"("2h3m4.5s")"},
        {"duration ns", 12ns, R"("12ns")"},
        {"duration negative", -1500ms, R"("-1.5s")"},
        {"time point", when, R"("2023-11-14T22:13:20.000000001Z")"},
        {"error code", refused, R"j("Connection refused (generic:111)")j"},
        {"bytes", fieldlog::Bytes{bytes}, R"("Zm9v/w==")"},
        {"object", fieldlog::Object(std::span(object_fields)), R"({"a":1,"b":"x"})"},
        {"empty object", fieldlog::Object(std::span<const fieldlog::Field>()), "{}"},
        {"array", fieldlog::Array(std::span(array_values)), R"([1,"two",3.5,null])"},
        {"vector of ints", ints, "[1,2,3]"},
        {"vector of strings", strings, R"(["a","b"])"},
        {"nested", fieldlog::Object(std::span(outer)), R"({"list":[{"k":true}]})"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const std::string line = line_with({{"v", c.value}});
            CHECK(line == kPrefix + ",\"v\":" + c.json + "}");
            CHECK(jsonl_errors({line}) == "");
        }
    }
}

TEST_CASE("strings are escaped per RFC 8259", "[json]") {
    struct Case {
        const char* name;
        std::string input;
        std::string escaped;
    };
    const Case cases[] = {
        {"plain", "hello world", "hello world"},
        {"quote and backslash", "a\"b\\c", R"(a\"b\\c)"},
        {"short escapes", "\n\r\t", R"(\n\r\t)"},
        {"other controls", std::string("\x00\x01\x08\x0c\x1f", 5), R"(\u0000\u0001\u0008\u000c\u001f)"},
        {"DEL is not a control in JSON", "\x7f", "\x7f"},
        {"slash is left alone", "a/b", "a/b"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const std::string line = string_field(c.input);
            CHECK(line == kPrefix + ",\"s\":\"" + c.escaped + "\"}");
            CHECK(jsonl_errors({line}) == "");
        }
    }
}

TEST_CASE("invalid UTF-8 becomes U+FFFD per maximal subpart, like Python's decode('utf-8', 'replace')", "[json]") {
    const std::string fffd = "\xEF\xBF\xBD";
    struct Case {
        const char* name;
        std::string input;
        std::string output;
    };
    const Case cases[] = {
        {"overlong C0 AF", "\xC0\xAF", fffd + fffd},
        {"surrogate ED A0 80", "\xED\xA0\x80", fffd + fffd + fffd},
        {"above U+10FFFF F4 90 80 80", "\xF4\x90\x80\x80", fffd + fffd + fffd + fffd},
        {"truncated E2 82", "\xE2\x82", fffd},
        {"truncated then ASCII E2 82 41", "\xE2\x82\x41", fffd + "A"},
        {"FF", "\xFF", fffd},
        {"lone continuations 80 80", "\x80\x80", fffd + fffd},
        {"truncated emoji F0 9F 98", "\xF0\x9F\x98", fffd},
        {"valid emoji", "\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
        {"valid two- and three-byte", "\xC3\xA9\xE2\x82\xAC", "\xC3\xA9\xE2\x82\xAC"},
        {"U+FFFF edge", "\xEF\xBF\xBF", "\xEF\xBF\xBF"},
        {"U+10FFFF edge", "\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},
        {"invalid in the middle", "a\xFF" "b", "a" + fffd + "b"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const std::string line = string_field(c.input);
            CHECK(line == kPrefix + ",\"s\":\"" + c.output + "\"}");
            CHECK(jsonl_errors({line}) == "");
        }
    }
}

TEST_CASE("keys, message and logger name are escaped like values", "[json]") {
    auto sink = capture();
    fieldlog::get("we\"ird\n").info("line1\nline2\xFF", {{"k\"ey\t", 1}});
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"we\"ird\n",)"
                      "\"msg\":\"line1\\nline2\xEF\xBF\xBD\",\"k\\\"ey\\t\":1}");
    CHECK(jsonl_errors(lines) == "");
}

TEST_CASE("an object whose later key needs escaping is written whole, its nested objects too", "[json]") {
    // The first members are written as given before the escaped key is met; the object is then
    // written again through the general path, with the same bytes as if it had been from the start.
    const fieldlog::Field nested[] = {{"x", 1}, {"x", 2}, {"y", "z"}};
    const fieldlog::Field inner[] = {{"p", "q"}, {"t", fieldlog::Object(std::span(nested))}};
    const fieldlog::Field object[] = {{"a", 1}, {"in", fieldlog::Object(std::span(inner))}, {"b\"c", true}, {"d", "e"}};
    CHECK(line_with({{"o", fieldlog::Object(std::span(object))}}) ==
          kPrefix + R"(,"o":{"a":1,"in":{"p":"q","t":{"x":2,"y":"z"}},"b\"c":true,"d":"e"}})");
    const fieldlog::Field repeated[] = {{"a", 1}, {"b", 2}, {"a", 3}};
    CHECK(line_with({{"o", fieldlog::Object(std::span(repeated))}}) == kPrefix + R"(,"o":{"b":2,"a":3}})");
    const fieldlog::Field empty_key[] = {{"", 1}, {std::string_view("\0", 1), 2}};
    CHECK(line_with({{"o", fieldlog::Object(std::span(empty_key))}}) == kPrefix + R"(,"o":{"":1,"\u0000":2}})");
}

TEST_CASE("an object's keys of one length are compared, and a user type among its values is written through the index", "[json]") {
    // Keys of equal length are told apart by their bytes: distinct ones all stay, a repeat replaces.
    const fieldlog::Field same_length[] = {{"ab", 1}, {"cd", 2}, {"ef", 3}, {"cd", 4}};
    CHECK(line_with({{"o", fieldlog::Object(std::span(same_length))}}) == kPrefix + R"(,"o":{"ab":1,"ef":3,"cd":4}})");
    // A user type after plain members: the object is written again through the index, same bytes.
    const Point point{2, 3};
    const fieldlog::Field with_user_type[] = {{"a", 1}, {"p", point}, {"a", 5}};
    CHECK(line_with({{"o", fieldlog::Object(std::span(with_user_type))}}) == kPrefix + R"(,"o":{"p":{"x":2,"y":3},"a":5}})");
    // More members than the as-given path takes: the index handles them, repeats included.
    std::vector<std::string> keys;
    for (int i = 0; i < 17; ++i) keys.push_back(fmt::format("k{}", i));
    std::vector<fieldlog::Field> many;
    for (int i = 0; i < 17; ++i) many.push_back({keys[static_cast<std::size_t>(i)], i});
    many.push_back({keys[0], 99});
    std::string expected = kPrefix + R"(,"o":{)";
    for (int i = 1; i < 17; ++i) expected.append(fmt::format(R"("k{}":{},)", i, i));
    expected.append(R"("k0":99}})");
    CHECK(line_with({{"o", fieldlog::Object(std::span(many))}}) == expected);
}

TEST_CASE("a logger name of any length is written whole, escaped", "[json]") {
    auto sink = capture();
    const std::string name = std::string(70, 'n') + "\"\t" + std::string(13, 'x');
    fieldlog::get(name).info("m");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":")" + std::string(70, 'n') +
                          R"(\"\t)" + std::string(13, 'x') + R"(","msg":"m"})");
    CHECK(jsonl_errors(lines) == "");
}

TEST_CASE("containers nested deeper than the limit become a placeholder", "[json]") {
    // 40 levels of arrays, built from the inside out.
    std::vector<fieldlog::Value> levels(40);
    levels[0] = fieldlog::Value(1);
    for (std::size_t i = 1; i < levels.size(); ++i) levels[i] = fieldlog::Array(std::span(&levels[i - 1], 1));
    const std::string line = line_with({{"deep", levels.back()}});
    CHECK(line.find("\"[depth limit]\"") != std::string::npos);
    CHECK(jsonl_errors({line}) == "");
}

TEST_CASE("a fmt message is formatted into the record", "[json]") {
    auto sink = capture();
    fieldlog::get("test").info("took {} ms for \"{}\"", 12, "x");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"test","msg":"took 12 ms for \"x\""})");
}

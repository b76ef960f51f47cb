// SPDX-License-Identifier: MIT
// The three formats from the same record: exact golden lines for every value kind in json,
// logfmt and console; logfmt quoting and key rules; console layout, colour and escaping; the
// duplicate-key rule; user types (objects, scalars, ranges, maps, optionals, fmt-formattable,
// unbalanced streams); fmt messages with fields; the nesting limit; a 1 MiB value; and the
// async writer's lines from the records' typed copies, equal to the caller's in every format.
#include <catch2/catch.hpp>

#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

#include "base/buffer.hpp"
#include "base/thread_id.hpp"
#include "encode/console_encoder.hpp"
#include "record/thread_context.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;
using fieldlog::Format;
using fieldlog_test::capture;
using fieldlog_test::jsonl_errors;

namespace formats_test {

struct Point {
    int x;
    int y;
};

/// Writes itself as an object.
struct User {
    std::string_view name;
    int id;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const User& u) {
    enc.value(fieldlog::Object{{"name", u.name}, {"id", u.id}});
}

/// Writes itself as a scalar.
struct Celsius {
    double degrees;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Celsius& c) { enc.value(c.degrees); }

/// Streams an object key by key, repeating one.
struct Streamed {};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Streamed&) {
    enc.begin_object();
    enc.key("a");
    enc.value(1);
    enc.key("b");
    enc.begin_array();
    enc.value(true);
    enc.formatted("{}-{}", fmt::make_format_args("x", 2));
    enc.end_array();
    enc.key("a");
    enc.value(3);
    enc.end_object();
}

/// Writes an object holding an error code and bytes (not flat: recorded call by call).
struct Failure {
    std::error_code code;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Failure& f) {
    static constexpr std::array<std::byte, 2> kBytes{std::byte{1}, std::byte{2}};
    enc.value(fieldlog::Object{{"code", f.code}, {"raw", fieldlog::Bytes{kBytes}}, {"attempt", 3}});
}

/// Forgets to close what it opens.
struct Unclosed {};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Unclosed&) {
    enc.begin_object();
    enc.key("open");
    enc.begin_array();
    enc.value(1);
}

/// Writes its value, then one more member, "x", into the object that holds it.
struct AddsSibling {};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const AddsSibling&) {
    enc.value(2);
    enc.key("x");
    enc.value(3);
}

/// Closes more than it opens, and with the wrong kind.
struct OverClosed {};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const OverClosed&) {
    enc.begin_object();
    enc.key("k");
    enc.value(1);
    enc.end_array();
    enc.end_object();
    enc.end_object();
}

/// A linked list far deeper than the nesting limit, written as nested arrays.
struct Chain {
    int remaining;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Chain& c) {
    enc.begin_array();
    enc.value(c.remaining);
    if (c.remaining > 0) enc.value(Chain{c.remaining - 1});
    enc.end_array();
}

}  // namespace formats_test

template <>
struct fmt::formatter<formats_test::Point> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename Context>
    auto format(const formats_test::Point& p, Context& ctx) const {
        return fmt::format_to(ctx.out(), "Point({}, {})", p.x, p.y);
    }
};

namespace {

using namespace formats_test;

const std::string kTs = "2026-11-30T08:38:11.123456789Z";

/// The one line a record with `fields` makes in `format`.
std::string line_in(Format format, fieldlog::Fields fields, const fieldlog::Message& message = "m") {
    auto sink = capture(format);
    fieldlog::get("test").info(message, fields);
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
}

/// The line the async writer makes of the same record from its typed copy.
std::string queued_line_in(Format format, fieldlog::Fields fields, const fieldlog::Message& message = "m") {
    auto sink = capture(format, true);
    fieldlog::get("test").info(message, fields);
    fieldlog::flush();
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
}

std::string json_line(const std::string& members) {
    return R"({"ts":")" + kTs + R"(","level":"info","logger":"test","msg":"m")" + members + "}";
}
std::string logfmt_line(const std::string& members) { return "ts=" + kTs + " level=info logger=test msg=m" + members; }
/// `name:` in the logger column of the default width, and the space after it.
std::string logger_column(const std::string& name) {
    return name + ":" + std::string(fieldlog::default_logger_width - name.size() + 1, ' ');
}
/// "m" is one column wide; fields start at the message column.
std::string console_line(const std::string& members) {
    return kTs + " INFO  " + logger_column("test") + "m" +
           std::string(fieldlog::detail::ConsoleEncoder::kMessageWidth - 1, ' ') + members;
}

}  // namespace

TEST_CASE("every value kind has its exact form in json, logfmt and console", "[formats]") {
    const std::error_code refused = std::make_error_code(std::errc::connection_refused);
    const std::array<std::byte, 4> bytes{std::byte{'f'}, std::byte{'o'}, std::byte{'o'}, std::byte{0xFF}};
    const std::vector<int> ints{1, 2, 3};
    const std::map<std::string, int> map{{"a", 1}, {"b", 2}};
    const std::optional<int> some = 5;
    const std::optional<int> none;
    const std::chrono::sys_time<std::chrono::nanoseconds> when{std::chrono::nanoseconds(1'700'000'000'000'000'001)};
    const User user{"Jane Doe", 7};
    const Celsius celsius{21.5};
    const Point point{1, 2};
    const Streamed streamed;
    const fieldlog::Field object_fields[] = {{"name", "Jane Doe"}, {"id", 7}};
    const fieldlog::Value array_values[] = {1, "two", nullptr};
    const fieldlog::Value controls[] = {"\x7F\xC2\x85"};
    struct Case {
        const char* name;
        fieldlog::Value value;
        std::string json;
        std::string logfmt;
        std::string console;
    };
    const Case cases[] = {
        {"null", nullptr, "null", "null", "null"},
        {"bool", true, "true", "true", "true"},
        {"int64", std::int64_t{-42}, "-42", "-42", "-42"},
        {"uint64", std::numeric_limits<std::uint64_t>::max(), "18446744073709551615", "18446744073709551615",
         "18446744073709551615"},
        {"float64", 0.1, "0.1", "0.1", "0.1"},
        {"NaN", std::nan(""), R"("NaN")", "NaN", "NaN"},
        {"-Inf", -std::numeric_limits<double>::infinity(), R"("-Inf")", "-Inf", "-Inf"},
        {"plain string", "plain", R"("plain")", "plain", "plain"},
        {"string with a space", "two words", R"("two words")", R"("two words")", R"("two words")"},
        {"string with = and quotes", R"(a="b")", R"("a=\"b\"")", R"("a=\"b\"")", R"("a=\"b\"")"},
        // The console continues the value on an indented line (console_test.cpp).
        {"string with a newline", "line\nbreak", R"("line\nbreak")", R"("line\nbreak")", "\"line\n    break\""},
        {"empty string", "", R"("")", R"("")", R"("")"},
        {"invalid UTF-8", "a\xFF" "b", "\"a\xEF\xBF\xBD" "b\"", "\"a\xEF\xBF\xBD" "b\"", "\"a\xEF\xBF\xBD" "b\""},
        {"C1 control", "\xC2\x9B", "\"\xC2\x9B\"", "\xC2\x9B", R"("\u009b")"},
        {"lead byte of a C1 control before ASCII", "\xC2J", "\"\xEF\xBF\xBDJ\"", "\"\xEF\xBF\xBDJ\"",
         "\"\xEF\xBF\xBDJ\""},
        {"DEL", "a\x7F", "\"a\x7F\"", "\"a\x7F\"", R"("a\u007f")"},
        {"DEL and C1 in an array", fieldlog::Array(std::span(controls)), "[\"\x7F\xC2\x85\"]",
         "\"[\\\"\x7F\xC2\x85\\\"]\"", R"(["\u007f\u0085"])"},
        {"escape", "\x1b[31m", R"("\u001b[31m")", R"("\u001b[31m")", R"("\u001b[31m")"},
        {"duration", 1250us, R"("1.25ms")", "1.25ms", "1.25ms"},
        {"time", when, R"("2023-11-14T22:13:20.000000001Z")", "2023-11-14T22:13:20.000000001Z",
         "2023-11-14T22:13:20.000000001Z"},
        {"error_code", refused, R"~("Connection refused (generic:111)")~", R"~("Connection refused (generic:111)")~",
         R"~("Connection refused (generic:111)")~"},
        {"bytes", fieldlog::Bytes{bytes}, R"("Zm9v/w==")", R"("Zm9v/w==")", R"("Zm9v/w==")"},
        {"object", fieldlog::Object(std::span(object_fields)), R"({"name":"Jane Doe","id":7})",
         R"("{\"name\":\"Jane Doe\",\"id\":7}")", R"({"name":"Jane Doe","id":7})"},
        {"array", fieldlog::Array(std::span(array_values)), R"([1,"two",null])", R"("[1,\"two\",null]")",
         R"([1,"two",null])"},
        {"empty array", fieldlog::Array(std::span<const fieldlog::Value>()), "[]", "[]", "[]"},
        {"container", ints, "[1,2,3]", "[1,2,3]", "[1,2,3]"},
        {"map", map, R"({"a":1,"b":2})", R"("{\"a\":1,\"b\":2}")", R"({"a":1,"b":2})"},
        {"optional with a value", some, "5", "5", "5"},
        {"empty optional", none, "null", "null", "null"},
        {"user type as object", user, R"({"name":"Jane Doe","id":7})", R"("{\"name\":\"Jane Doe\",\"id\":7}")",
         R"({"name":"Jane Doe","id":7})"},
        {"user type as scalar", celsius, "21.5", "21.5", "21.5"},
        {"fmt-formattable type", point, R"~("Point(1, 2)")~", R"~("Point(1, 2)")~", R"~("Point(1, 2)")~"},
        {"streamed user type", streamed, R"({"b":[true,"x-2"],"a":3})", R"("{\"b\":[true,\"x-2\"],\"a\":3}")",
         R"({"b":[true,"x-2"],"a":3})"},
    };
    std::vector<std::string> json_lines;
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const std::string json = line_in(Format::json, {{"v", c.value}});
            CHECK(json == json_line(",\"v\":" + c.json));
            CHECK(jsonl_errors({json}) == "");
            CHECK(line_in(Format::logfmt, {{"v", c.value}}) == logfmt_line(" v=" + c.logfmt));
            CHECK(line_in(Format::console, {{"v", c.value}}) == console_line(" v=" + c.console));
            for (const Format format : {Format::json, Format::logfmt, Format::console, Format::otel}) {
                CHECK(queued_line_in(format, {{"v", c.value}}) == line_in(format, {{"v", c.value}}));
            }
        }
    }
}

TEST_CASE("a record has the same members in every format, in order", "[formats]") {
    struct Case {
        Format format;
        std::string line;
    };
    const Case cases[] = {
        {Format::json, R"({"ts":")" + kTs + R"(","level":"warn","logger":"http","msg":"request done",)"
                       R"("service":"checkout","status":200,"path":"/a b","ok":true})"},
        {Format::logfmt, "ts=" + kTs + R"( level=warn logger=http msg="request done" service=checkout status=200 path="/a b" ok=true)"},
        {Format::console, kTs + " WARN  " + logger_column("http") + std::string("request done") + std::string(28, ' ') +
                              R"( service=checkout status=200 path="/a b" ok=true)"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(to_string(c.format)) {
            auto sink = capture(c.format);
            const auto log = fieldlog::get("http").with({{"service", "checkout"}});
            log.warn("request done", {{"status", 200}, {"path", "/a b"}, {"ok", true}});
            REQUIRE(sink->lines().size() == 1);
            CHECK(sink->lines()[0] == c.line);
        }
    }
}

TEST_CASE("logfmt quotes the logger and message only when needed", "[formats][logfmt]") {
    auto sink = capture(Format::logfmt);
    fieldlog::get("").info("");
    fieldlog::get("a b").info("x=y");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "ts=" + kTs + R"( level=info logger="" msg="")");
    CHECK(lines[1] == "ts=" + kTs + R"( level=info logger="a b" msg="x=y")");
}

TEST_CASE("logfmt and console keys replace what would break them with '_'", "[formats][logfmt]") {
    struct Case {
        std::string key;
        std::string written;
    };
    const Case cases[] = {
        {"a b", "a_b"}, {"k=v", "k_v"}, {"say\"", "say_"}, {"", "_"}, {"tab\there", "tab_here"},
        {"bad\xFF", "bad_"}, {"c1\xC2\x85", "c1_"}, {"caf\xC3\xA9", "caf\xC3\xA9"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.written) {
            CHECK(line_in(Format::logfmt, {{c.key, 1}}) == logfmt_line(" " + c.written + "=1"));
            CHECK(line_in(Format::console, {{c.key, 1}}) == console_line(" " + c.written + "=1"));
        }
    }
}

TEST_CASE("console escapes control characters in the message and pads it to the field column", "[formats][console]") {
    auto sink = capture(Format::console);
    fieldlog::get("esc").error("a\nb\x1b[2J\xC2\x9B \"quoted\" \\ caf\xC3\xA9\xFF");
    fieldlog::get("").info("no fields, no padding");
    fieldlog::get("wide").info("\xC3\xA9\xC3\xA9", {{"k", 1}});
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 3);
    // The message's line break starts an indented line (console_test.cpp has the rules).
    CHECK(lines[0] == kTs + " ERROR " + logger_column("esc") + "a\n    b\\u001b[2J\\u009b \"quoted\" \\ caf\xC3\xA9\xEF\xBF\xBD");
    CHECK(lines[1] == kTs + " INFO  " + std::string(fieldlog::default_logger_width + 2, ' ') + "no fields, no padding");
    // Two code points (four bytes) of message: padded by columns, not bytes.
    CHECK(lines[2] == kTs + " INFO  " + logger_column("wide") + std::string("\xC3\xA9\xC3\xA9") + std::string(38, ' ') + " k=1");
}

using fieldlog_test::TerminalSink;

TEST_CASE("console colours the level by severity, dims the time and keys and makes the message bold", "[formats][console]") {
    auto terminal = std::make_shared<TerminalSink>();
    auto plain = std::make_shared<fieldlog::MemorySink>();
    // ColourMode::automatic and the environment: console_test.cpp.
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .format = Format::console,
                         .sinks = {{.target = terminal, .colour = fieldlog::ColourMode::always},
                                   {.target = plain, .colour = fieldlog::ColourMode::never}},
                         .clock = &fieldlog_test::fixed_clock});
    const auto log = fieldlog::get("c");
    const struct {
        fieldlog::Level level;
        std::string coloured;
    } cases[] = {
        {fieldlog::Level::trace, "\x1b[90mTRACE\x1b[0m"}, {fieldlog::Level::debug, "\x1b[36mDEBUG\x1b[0m"},
        {fieldlog::Level::info, "\x1b[32mINFO \x1b[0m"},  {fieldlog::Level::warn, "\x1b[33mWARN \x1b[0m"},
        {fieldlog::Level::error, "\x1b[31mERROR\x1b[0m"}, {fieldlog::Level::fatal, "\x1b[1;31mFATAL\x1b[0m"},
    };
    for (const auto& c : cases) log.log(c.level, "m", {{"k", "v"}});
    REQUIRE(terminal->lines.size() == std::size(cases));
    REQUIRE(plain->lines().size() == std::size(cases));
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        const std::string padded = std::string(39, ' ');
        CHECK(terminal->lines[i] == std::string("\x1b[2m") + kTs + "\x1b[0m " + cases[i].coloured + std::string(" ") + logger_column("c") +
                                        "\x1b[1mm\x1b[0m" + padded + " \x1b[2mk=\x1b[0mv");
        const std::string rest = std::string(" ") + logger_column("c") + "m" + padded + " k=v";
        const std::string name(to_string(cases[i].level));
        std::string upper = name;
        for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        upper.resize(5, ' ');
        CHECK(plain->lines()[i] == kTs + " " + upper + rest);
    }
}

TEST_CASE("user keys equal to ts, level, logger or msg are written as fields.<key>", "[formats][duplicates]") {
    const fieldlog::Fields fields = {{"ts", 1}, {"level", 2}, {"logger", 3}, {"msg", 4}, {"message", 5}};
    CHECK(line_in(Format::json, fields) ==
          json_line(R"(,"fields.ts":1,"fields.level":2,"fields.logger":3,"fields.msg":4,"message":5)"));
    CHECK(line_in(Format::logfmt, fields) ==
          logfmt_line(" fields.ts=1 fields.level=2 fields.logger=3 fields.msg=4 message=5"));
    CHECK(line_in(Format::console, fields) ==
          console_line(" fields.ts=1 fields.level=2 fields.logger=3 fields.msg=4 message=5"));
    // Nested objects have no reserved keys.
    CHECK(line_in(Format::json, {{"o", fieldlog::Object{{"msg", 1}}}}) == json_line(R"(,"o":{"msg":1})"));
}

TEST_CASE("a repeated key replaces the earlier member, wherever the two come from", "[formats][duplicates]") {
    struct Case {
        const char* name;
        std::string json;
        std::string logfmt;
    };
    const Case cases[] = {
        {"call repeats call", R"(,"b":2,"a":3)", " b=2 a=3"},
        {"call repeats bound", R"(,"keep":1,"b":2,"a":3,"bound":"call")", " keep=1 b=2 a=3 bound=call"},
        {"child repeats parent", R"(,"keep":1,"bound":"child")", " keep=1 bound=child"},
        {"nested object repeats its first key", R"(,"o":{"y":2,"x":3})", " o=\"{\\\"y\\\":2,\\\"x\\\":3}\""},
        {"nested object repeats its last key", R"(,"o":{"x":1,"y":3})", " o=\"{\\\"x\\\":1,\\\"y\\\":3}\""},
        {"reserved after rename", R"(,"fields.msg":2)", " fields.msg=2"},
        // Objects whose keys are few, short and plain skip the key index; these three take it.
        {"nested object of nine members repeats a key", R"(,"o":{"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"a":9})",
         " o=\"{\\\"b\\\":2,\\\"c\\\":3,\\\"d\\\":4,\\\"e\\\":5,\\\"f\\\":6,\\\"g\\\":7,\\\"h\\\":8,\\\"a\\\":9}\""},
        {"nested object repeats a long key", R"(,"o":{"y":2,"a_key_longer_than_16":3})",
         " o=\"{\\\"y\\\":2,\\\"a_key_longer_than_16\\\":3}\""},
        {"nested keys equal once invalid UTF-8 is replaced", ",\"o\":{\"\xEF\xBF\xBD\":2}",
         " o=\"{\\\"\xEF\xBF\xBD\\\":2}\""},
        {"a user type in a nested object adds a key the object has", R"(,"o":{"u":2,"x":3})",
         " o=\"{\\\"u\\\":2,\\\"x\\\":3}\""},
        // The top level's plain keys get their index entries only when a later key may need them.
        {"a user type at the top level adds a key the call has", R"(,"y":2,"u":2,"x":3,"z":4)", " y=2 u=2 x=3 z=4"},
        {"call repeats call after a long key", R"(,"a_key_longer_than_16":2,"b":3,"a":4)",
         " a_key_longer_than_16=2 b=3 a=4"},
        {"call repeats call among many keys", R"(,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k0":11)",
         " k1=1 k2=2 k3=3 k4=4 k5=5 k6=6 k7=7 k8=8 k9=9 k10=10 k0=11"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            for (const Format format : {Format::json, Format::logfmt}) {
                auto sink = capture(format);
                const auto parent = fieldlog::get("test").with({{"keep", 1}, {"bound", "parent"}});
                const std::string name = c.name;
                if (name == "call repeats call") {
                    fieldlog::get("test").info("m", {{"a", 1}, {"b", 2}, {"a", 3}});
                } else if (name == "call repeats bound") {
                    parent.info("m", {{"b", 2}, {"a", 3}, {"bound", "call"}});
                } else if (name == "child repeats parent") {
                    parent.with({{"bound", "child"}}).info("m");
                } else if (name == "nested object repeats its first key") {
                    fieldlog::get("test").info("m", {{"o", fieldlog::Object{{"x", 1}, {"y", 2}, {"x", 3}}}});
                } else if (name == "nested object repeats its last key") {
                    fieldlog::get("test").info("m", {{"o", fieldlog::Object{{"x", 1}, {"y", 2}, {"y", 3}}}});
                } else if (name == "nested object of nine members repeats a key") {
                    fieldlog::get("test").info("m", {{"o", fieldlog::Object{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"e", 5},
                                                                            {"f", 6}, {"g", 7}, {"h", 8}, {"a", 9}}}});
                } else if (name == "nested object repeats a long key") {
                    fieldlog::get("test").info(
                        "m", {{"o", fieldlog::Object{{"a_key_longer_than_16", 1}, {"y", 2}, {"a_key_longer_than_16", 3}}}});
                } else if (name == "a user type in a nested object adds a key the object has") {
                    fieldlog::get("test").info("m", {{"o", fieldlog::Object{{"x", 1}, {"u", AddsSibling{}}}}});
                } else if (name == "a user type at the top level adds a key the call has") {
                    fieldlog::get("test").info("m", {{"x", 1}, {"y", 2}, {"u", AddsSibling{}}, {"z", 4}});
                } else if (name == "call repeats call after a long key") {
                    fieldlog::get("test").info("m", {{"a", 1}, {"a_key_longer_than_16", 2}, {"b", 3}, {"a", 4}});
                } else if (name == "call repeats call among many keys") {
                    fieldlog::get("test").info("m", {{"k0", 0}, {"k1", 1}, {"k2", 2}, {"k3", 3}, {"k4", 4}, {"k5", 5},
                                                     {"k6", 6}, {"k7", 7}, {"k8", 8}, {"k9", 9}, {"k10", 10}, {"k0", 11}});
                } else if (name == "nested keys equal once invalid UTF-8 is replaced") {
                    fieldlog::get("test").info("m", {{"o", fieldlog::Object{{"\xFF", 1}, {"\xFE", 2}}}});
                } else {
                    fieldlog::get("test").info("m", {{"msg", 1}, {"fields.msg", 2}});
                }
                const auto lines = sink->lines();
                REQUIRE(lines.size() == 1);
                if (format == Format::json) {
                    CHECK(lines[0] == json_line(c.json));
                    CHECK(jsonl_errors(lines) == "");
                } else {
                    CHECK(lines[0] == logfmt_line(c.logfmt));
                }
            }
        }
    }
}

TEST_CASE("user types that leave containers open or close too many still make valid lines", "[formats][user-types]") {
    const Unclosed unclosed;
    const OverClosed over;
    const std::string json = line_in(Format::json, {{"u", unclosed}, {"o", over}, {"after", 1}});
    CHECK(json == json_line(R"(,"u":{"open":[1]},"o":{"k":1},"after":1)"));
    CHECK(jsonl_errors({json}) == "");
    CHECK(line_in(Format::logfmt, {{"u", unclosed}, {"o", over}, {"after", 1}}) ==
          logfmt_line(R"( u="{\"open\":[1]}" o="{\"k\":1}" after=1)"));
}

TEST_CASE("nesting deeper than the limit writes a placeholder instead of recursing", "[formats][depth]") {
    // 40 nested objects built bottom-up: {"d":{"d":…{"d":1}…}}.
    std::vector<std::array<fieldlog::Field, 1>> levels(40);
    levels[0][0] = {"d", 1};
    for (std::size_t i = 1; i < levels.size(); ++i) levels[i][0] = {"d", fieldlog::Object(std::span<const fieldlog::Field>(levels[i - 1]))};
    const std::string json = line_in(Format::json, {{"deep", fieldlog::Object(std::span<const fieldlog::Field>(levels.back()))}});
    CHECK(jsonl_errors({json}) == "");
    // The record is depth 0; objects 1–32 open, the 33rd is the placeholder.
    std::string expected = ",\"deep\":";
    for (int i = 0; i < 32; ++i) expected += "{\"d\":";
    expected += "\"[depth limit]\"" + std::string(32, '}');
    CHECK(json == json_line(expected));

    // A user type recursing 100,000 times stops being asked once it is below the limit.
    const std::string chain = line_in(Format::json, {{"chain", Chain{100'000}}});
    CHECK(jsonl_errors({chain}) == "");
    CHECK(chain.find("[depth limit]") != std::string::npos);
    CHECK(line_in(Format::logfmt, {{"chain", Chain{100'000}}}).find("[depth limit]") != std::string::npos);
}

TEST_CASE("a fmt message combines with fields in every format", "[formats][message]") {
    const std::string user = "jane";
    const auto message = [&] { return fieldlog::format("user {} logged in after {} tries", user, 3); };
    CHECK(line_in(Format::json, {{"ip", "10.0.0.1"}}, message()) ==
          R"({"ts":")" + kTs + R"(","level":"info","logger":"test","msg":"user jane logged in after 3 tries","ip":"10.0.0.1"})");
    CHECK(line_in(Format::logfmt, {{"ip", "10.0.0.1"}}, message()) ==
          "ts=" + kTs + R"( level=info logger=test msg="user jane logged in after 3 tries" ip=10.0.0.1)");
    CHECK(line_in(Format::console, {{"ip", "10.0.0.1"}}, message()) ==
          kTs + " INFO  " + logger_column("test") + std::string("user jane logged in after 3 tries") + std::string(7, ' ') + " ip=10.0.0.1");
    // The short form, fmt arguments and no fields, in logfmt.
    auto sink = capture(Format::logfmt);
    fieldlog::get("test").info("took {} ms", 12);
    REQUIRE(sink->lines().size() == 1);
    CHECK(sink->lines()[0] == "ts=" + kTs + R"( level=info logger=test msg="took 12 ms")");
}

namespace {

/// The lines of one request's records: bound fields (a user type, a reserved key), scope
/// fields (a streamed user type), fmt messages, call facts, a user type adding a sibling, one
/// past the nesting limit. In async mode they are the writer's, from the typed copies.
std::vector<std::string> request_lines(Format format, bool async) {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::trace,
                                         .format = format,
                                         .caller = fieldlog::Caller::with_function,
                                         .tid = true,
                                         .async = {.enabled = async},
                                         .sinks = {fieldlog::SinkConfig{.target = sink}},
                                         .clock = &fieldlog_test::fixed_clock});
    const User user{"Jane Doe", 7};
    const std::vector<int> ids{4, 5};
    {
        const fieldlog::Logger log = fieldlog::get("test.typed").with({{"service", "api"}, {"user", user}, {"msg", "bound"}});
        const fieldlog::Scope request{{"request_id", "r-1"}, {"streamed", Streamed{}}};
        log.info(fieldlog::format("user {} took {} ms", "jane", 12),
                 {{"status", 200}, {"request_id", "the call's"}, {"sibling", AddsSibling{}}, {"ids", ids}});
        log.debug("no fields of its own");
        {
            const fieldlog::Scope inner{{"attempt", 2}};
            fieldlog::get("test.typed").warn("unbound", {{"chain", Chain{40}}, {"ratio", 0.25}});
        }
        log.error("last", {{"elapsed", 1500us}, {"failure", Failure{std::make_error_code(std::errc::timed_out)}}});
    }
    fieldlog::flush();
    std::vector<std::string> lines = sink->lines();
    fieldlog_test::release_sinks();
    return lines;
}

}  // namespace

TEST_CASE("the async writer's lines from the typed copies equal the caller's, in every format", "[formats][async]") {
    for (const Format format : {Format::json, Format::logfmt, Format::console, Format::otel}) {
        const std::vector<std::string> direct = request_lines(format, false);
        REQUIRE(direct.size() == 4);
        CHECK(request_lines(format, true) == direct);
    }
}

TEST_CASE("queued records with long recordings and long strings make the same lines", "[formats][async]") {
    std::vector<std::string> many;  // a recording of 602 calls
    for (int i = 0; i < 600; ++i) many.push_back("value-" + std::to_string(i));
    const std::vector<std::string> long_ones(3, std::string(3000, 'x'));
    const std::vector<std::string> few{"a", "b"};
    // Longer than the thread's scratch buffer holds inline: its recording grows it.
    const std::vector<std::string> huge{std::string(40'000, 'y'), "after"};
    for (const Format format : {Format::json, Format::logfmt}) {
        CHECK(queued_line_in(format, {{"many", many}}) == line_in(format, {{"many", many}}));
        CHECK(queued_line_in(format, {{"huge", huge}}) == line_in(format, {{"huge", huge}}));
        CHECK(queued_line_in(format, {{"long", long_ones}}) == line_in(format, {{"long", long_ones}}));
        CHECK(queued_line_in(format, {{"few", few}, {"user", User{"Jane", 7}}}) ==
              line_in(format, {{"few", few}, {"user", User{"Jane", 7}}}));
    }
}

TEST_CASE("a queued record names the thread that logged it, not the writer's", "[formats][async]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::trace,
                                         .tid = true,
                                         .async = {.enabled = true},
                                         .sinks = {fieldlog::SinkConfig{.target = sink}}});
    long logged_by = 0;
    std::thread([&] {
        logged_by = fieldlog::detail::kernel_thread_id();
        fieldlog::get("test").info("m");
    }).join();
    fieldlog::flush();
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find(",\"tid\":" + std::to_string(logged_by) + "}") != std::string::npos);
    fieldlog_test::release_sinks();
}

TEST_CASE("a 1 MiB value is written whole and the thread's buffers shrink back", "[formats][large]") {
    std::string big(1 << 20, 'x');
    for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = '"';  // some escaping on the way
    for (const Format format : {Format::json, Format::logfmt, Format::console}) {
        DYNAMIC_SECTION(to_string(format)) {
            auto sink = capture(format);
            fieldlog::get("test").info("big", {{"v", big}});
            const auto lines = sink->lines();
            REQUIRE(lines.size() == 1);
            const std::size_t quotes = big.size() / 4096;
            CHECK(lines[0].size() > big.size() + quotes);
            CHECK(lines[0].find(std::string(4095, 'x')) != std::string::npos);
            if (format == Format::json) CHECK(jsonl_errors(lines) == "");
            const fieldlog::detail::ThreadContext* context = fieldlog::detail::this_thread_context();
            REQUIRE(context != nullptr);
            CHECK_FALSE(context->record.on_heap());
            CHECK_FALSE(context->scratch.on_heap());
        }
    }
    // What a thread keeps between records, as README.md states it: its fixed context only.
    STATIC_REQUIRE(sizeof(fieldlog::detail::ThreadContext) <= 34 * 1024);
}

TEST_CASE("a record with more members than the inline key table still has unique keys", "[formats][duplicates]") {
    std::vector<std::string> keys;
    for (int i = 0; i < 200; ++i) keys.push_back(fmt::format("k{}", i));
    std::vector<fieldlog::Field> fields;
    for (const std::string& key : keys) fields.push_back({key, 1});
    fields.push_back({"k0", 2});    // repeats the first
    fields.push_back({"k199", 3});  // repeats the last
    for (const Format format : {Format::json, Format::logfmt}) {
        auto sink = capture(format);
        fieldlog::get("test").log(fieldlog::Level::info, "m", fields);
        const auto lines = sink->lines();
        REQUIRE(lines.size() == 1);
        if (format == Format::json) {
            CHECK(jsonl_errors(lines) == "");
            CHECK(lines[0].find(R"("k0":1)") == std::string::npos);
            CHECK(lines[0].ends_with(R"("k198":1,"k0":2,"k199":3})"));
        } else {
            CHECK(lines[0].find(" k0=1 ") == std::string::npos);
            CHECK(lines[0].ends_with(" k198=1 k0=2 k199=3"));
        }
    }
}

TEST_CASE("durations under a microsecond's unit are µs by default and us with string_ascii, in every format", "[formats]") {
    for (const auto duration : {fieldlog::DurationFormat::string, fieldlog::DurationFormat::string_ascii}) {
        const std::string micro = duration == fieldlog::DurationFormat::string ? "1.5\xC2\xB5s" : "1.5us";
        DYNAMIC_SECTION(micro) {
            auto json = std::make_shared<fieldlog::MemorySink>();
            auto logfmt = std::make_shared<fieldlog::MemorySink>();
            auto console = std::make_shared<fieldlog::MemorySink>();
            fieldlog::configure({.duration = duration,
                                 .sinks = {{.target = json},
                                           {.target = logfmt, .format = Format::logfmt},
                                           {.target = console, .format = Format::console}},
                                 .clock = &fieldlog_test::fixed_clock});
            fieldlog::get("test").info("m", {{"d", 1500ns}, {"e", -2500ns}, {"f", 1250us}});
            const std::string members = "d=" + micro + " e=-2.5" + micro.substr(3) + " f=1.25ms";
            CHECK(json->lines() == std::vector<std::string>{json_line(R"(,"d":")" + micro + R"(","e":"-2.5)" +
                                                                      micro.substr(3) + R"(","f":"1.25ms")")});
            CHECK(logfmt->lines() == std::vector<std::string>{logfmt_line(" " + members)});
            CHECK(console->lines() == std::vector<std::string>{console_line(" " + members)});
        }
    }
}

TEST_CASE("each sink gets the format it asked for from one call", "[formats]") {
    auto json = std::make_shared<fieldlog::MemorySink>();
    auto logfmt = std::make_shared<fieldlog::MemorySink>();
    auto console = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .sinks = {{.target = json},
                                   {.target = logfmt, .format = Format::logfmt},
                                   {.target = console, .format = Format::console}},
                         .clock = &fieldlog_test::fixed_clock});
    fieldlog::get("test").info("m", {{"k", 1}});
    CHECK(json->lines() == std::vector<std::string>{json_line(",\"k\":1")});
    CHECK(logfmt->lines() == std::vector<std::string>{logfmt_line(" k=1")});
    CHECK(console->lines() == std::vector<std::string>{console_line(" k=1")});
}

// SPDX-License-Identifier: MIT
// The console format for people: each sink's own timestamp layout, colour chosen by `color`
// and the NO_COLOR / FORCE_COLOR / CLICOLOR_FORCE conventions, the logger column, the colour
// scheme over bound and scope fields, and multi-line messages and values as indented lines.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::ColourMode;
using fieldlog::Format;

namespace {

using fieldlog_test::ScopedEnv;

const std::string kTs = "2026-11-30T08:38:11.123456789Z";

using fieldlog_test::TerminalSink;

/// The colour variables as a case says, none left from the test's own environment.
struct ColourEnv {
    ScopedEnv no_color;
    ScopedEnv force_color;
    ScopedEnv clicolor_force;
};

/// The plain console line of one record: `rest` after the level and the default logger column.
std::string plain(const std::string& level, const std::string& logger, const std::string& rest) {
    return kTs + " " + level + " " + logger + ":" + std::string(fieldlog::default_logger_width - logger.size() + 1, ' ') + rest;
}

/// Configures one console MemorySink with the fixed clock; `sink` adjusts its SinkConfig.
std::shared_ptr<fieldlog::MemorySink> console(fieldlog::SinkConfig sink = {}) {
    auto memory = std::make_shared<fieldlog::MemorySink>();
    sink.target = memory;
    sink.format = Format::console;
    fieldlog::configure({.level = fieldlog::Level::trace, .sinks = {sink}, .clock = &fieldlog_test::fixed_clock});
    return memory;
}

}  // namespace

TEST_CASE("each sink writes the record's time in its own layout, in the configuration's zone", "[console]") {
    auto short_time = std::make_shared<fieldlog::MemorySink>();
    auto full = std::make_shared<fieldlog::MemorySink>();
    auto json = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.format = Format::console,
                         .timestamp = {.precision = fieldlog::TimestampPrecision::milli,
                                       .zone = fieldlog::TimeZone::named("Asia/Kolkata")},
                         .sinks = {{.target = short_time, .timestamp = fieldlog::TimestampPrecision::short_time},
                                   {.target = full},
                                   {.target = json, .format = Format::json, .timestamp = fieldlog::TimestampPrecision::seconds}},
                         .clock = &fieldlog_test::fixed_clock});
    const fieldlog::Timestamp field_time{1'796'027'891, 5'000'000};  // the clock's second
    fieldlog::get("").info("m", {{"at", field_time}});
    const std::string root_column(fieldlog::default_logger_width + 2, ' ');
    CHECK(short_time->lines() == std::vector<std::string>{"14:08:11.123 INFO  " + root_column + "m" + std::string(39, ' ') +
                                                          " at=2026-11-30T14:08:11.005+05:30"});
    CHECK(full->lines() == std::vector<std::string>{"2026-11-30T14:08:11.123+05:30 INFO  " + root_column + "m" + std::string(39, ' ') +
                                                    " at=2026-11-30T14:08:11.005+05:30"});
    CHECK(json->lines() == std::vector<std::string>{R"({"ts":"2026-11-30T14:08:11+05:30","level":"info","logger":"","msg":"m","at":"2026-11-30T14:08:11+05:30"})"});
}

TEST_CASE("color: auto follows the terminal, NO_COLOR, FORCE_COLOR and CLICOLOR_FORCE, while always and never do not", "[console]") {
    using Env = std::optional<std::string>;
    const struct Case {
        ColourMode mode;
        bool terminal;
        Env no_color, force_color, clicolor_force;
        bool coloured;
    } cases[] = {
        {ColourMode::automatic, true, {}, {}, {}, true},
        {ColourMode::automatic, false, {}, {}, {}, false},
        {ColourMode::automatic, true, "1", {}, {}, false},
        {ColourMode::automatic, true, "", {}, {}, true},           // empty: not set (no-color.org)
        {ColourMode::automatic, false, {}, "1", {}, true},
        {ColourMode::automatic, false, {}, "0", {}, false},        // "0" does not force
        {ColourMode::automatic, false, {}, "", {}, false},
        {ColourMode::automatic, false, {}, {}, "1", true},
        {ColourMode::automatic, false, "1", "1", "1", false},      // NO_COLOR wins
        {ColourMode::automatic, true, {}, "0", {}, true},          // nothing forced: the terminal decides
        {ColourMode::always, false, "1", {}, {}, true},
        {ColourMode::never, true, {}, "1", "1", false},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION("mode " << static_cast<int>(c.mode) << " terminal " << c.terminal << " NO_COLOR "
                                << c.no_color.value_or("-") << " FORCE_COLOR " << c.force_color.value_or("-")
                                << " CLICOLOR_FORCE " << c.clicolor_force.value_or("-")) {
            const ColourEnv env{{"NO_COLOR", c.no_color}, {"FORCE_COLOR", c.force_color}, {"CLICOLOR_FORCE", c.clicolor_force}};
            auto terminal = std::make_shared<TerminalSink>();
            auto memory = std::make_shared<fieldlog::MemorySink>();
            fieldlog::SinkConfig sink{.format = Format::console, .colour = c.mode};
            if (c.terminal) {
                sink.target = terminal;
            } else {
                sink.target = memory;
            }
            fieldlog::configure({.sinks = {sink}, .clock = &fieldlog_test::fixed_clock});
            fieldlog::get("c").info("m", {{"k", 1}});
            const std::string line = c.terminal ? terminal->lines.at(0) : memory->lines().at(0);
            CHECK((line.find('\x1b') != std::string::npos) == c.coloured);
            if (!c.coloured) CHECK(line == plain("INFO ", "c", std::string("m") + std::string(39, ' ') + " k=1"));
        }
    }
}

TEST_CASE("color never reaches a JSON or logfmt sink, whatever it says", "[console]") {
    const ColourEnv env{{"NO_COLOR", std::nullopt}, {"FORCE_COLOR", "1"}, {"CLICOLOR_FORCE", std::nullopt}};
    auto json = std::make_shared<TerminalSink>();
    auto logfmt = std::make_shared<TerminalSink>();
    fieldlog::configure({.sinks = {{.target = json, .colour = ColourMode::always},
                                   {.target = logfmt, .format = Format::logfmt, .colour = ColourMode::always}},
                         .clock = &fieldlog_test::fixed_clock});
    fieldlog::get("c").info("m", {{"k", 1}});
    CHECK(json->lines.at(0) == R"({"ts":")" + kTs + R"(","level":"info","logger":"c","msg":"m","k":1})");
    CHECK(logfmt->lines.at(0) == "ts=" + kTs + " level=info logger=c msg=m k=1");
}

TEST_CASE("the message starts in one column whatever the logger's name, and a longer name is cut to the column", "[console]") {
    SECTION("the default width") {
        auto sink = console();
        fieldlog::get("db").info("query", {{"rows", 3}});
        fieldlog::get("http").info("request", {{"status", 200}});
        fieldlog::get("").info("root", {{"k", 1}});
        fieldlog::get("payments.reconcile").info("cut", {{"k", 2}});
        fieldlog::get("caf\xC3\xA9.\xC3\xA9t\xC3\xA9").info("by code points");
        fieldlog::get("twelve.chars").info("exactly");
        const auto lines = sink->lines();
        REQUIRE(lines.size() == 6);
        CHECK(lines[0] == kTs + " INFO  db:" + std::string(11, ' ') + std::string("query") + std::string(35, ' ') + " rows=3");
        CHECK(lines[1] == kTs + " INFO  http:" + std::string(9, ' ') + std::string("request") + std::string(33, ' ') + " status=200");
        CHECK(lines[2] == kTs + " INFO  " + std::string(14, ' ') + std::string("root") + std::string(36, ' ') + " k=1");
        CHECK(lines[3] == kTs + " INFO  payments.re\xE2\x80\xA6: cut" + std::string(37, ' ') + " k=2");
        CHECK(lines[4] == kTs + " INFO  caf\xC3\xA9.\xC3\xA9t\xC3\xA9:" + std::string(5, ' ') + "by code points");
        CHECK(lines[5] == kTs + " INFO  twelve.chars: exactly");
    }
    SECTION("a width of its own") {
        auto sink = console({.logger_width = 4});
        fieldlog::get("db").info("a");
        fieldlog::get("http.client").info("b");
        CHECK(sink->lines() == std::vector<std::string>{kTs + " INFO  db:   a", kTs + " INFO  htt\xE2\x80\xA6: b"});
    }
    SECTION("no column: the name as it is") {
        auto sink = console({.logger_width = 0});
        fieldlog::get("http.client").info("c");
        fieldlog::get("").info("d");
        CHECK(sink->lines() == std::vector<std::string>{kTs + " INFO  http.client: c", kTs + " INFO  d"});
    }
}

TEST_CASE("a multi-line message shows its further lines indented after the fields, and JSON and logfmt keep it whole", "[console]") {
    auto sink = console();
    const auto log = fieldlog::get("app");
    log.error("query failed\n  at db.cpp:10\r\n  at main.cpp:3\n", {{"code", 7}});
    log.info("first\n\nthird");
    log.info(fieldlog::format("{} failed\n  at {}", "job", "worker.cpp:20"), {{"k", "v"}});
    log.info("\nafter an empty first line");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == plain("ERROR", "app", std::string("query failed") + std::string(28, ' ') + " code=7\n      at db.cpp:10\n      at main.cpp:3"));
    CHECK(lines[1] == plain("INFO ", "app", "first\n    \n    third"));
    CHECK(lines[2] == plain("INFO ", "app", std::string("job failed") + std::string(30, ' ') + " k=v\n      at worker.cpp:20"));
    CHECK(lines[3] == plain("INFO ", "app", "\n    after an empty first line"));
    // A lone carriage return still cannot move the cursor.
    log.info("a\rb");
    CHECK(sink->lines().back() == plain("INFO ", "app", "a\\rb"));

    auto json = std::make_shared<fieldlog::MemorySink>();
    auto logfmt = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.sinks = {{.target = json}, {.target = logfmt, .format = Format::logfmt}},
                         .clock = &fieldlog_test::fixed_clock});
    log.info("a\nb", {{"v", "c\nd"}});
    CHECK(json->lines() == std::vector<std::string>{R"({"ts":")" + kTs + R"(","level":"info","logger":"app","msg":"a\nb","v":"c\nd"})"});
    CHECK(logfmt->lines() == std::vector<std::string>{"ts=" + kTs + R"( level=info logger=app msg="a\nb" v="c\nd")"});
}

TEST_CASE("a string value with line breaks continues on indented lines, also from bound and scope fields", "[console]") {
    auto sink = console();
    const auto log = fieldlog::get("app").with({{"stack", "main.cpp:1\nlib.cpp:2"}});
    {
        const fieldlog::Scope scope{{"note", "x\r\ny"}};
        log.info("m", {{"trace", "a \"b\"\nc\\d\n"}, {"nested", fieldlog::Object{{"s", "e\nf"}}}});
    }
    const std::string head = plain("INFO ", "app", std::string("m") + std::string(39, ' '));
    CHECK(sink->lines() == std::vector<std::string>{head + " stack=\"main.cpp:1\n    lib.cpp:2\" note=\"x\n    y\"" +
                                                    " trace=\"a \\\"b\\\"\n    c\\\\d\n    \"" +
                                                    R"( nested={"s":"e\nf"})"});
}

TEST_CASE("keys are dim in bound, scope and call fields alike, and a repeated key still replaces the earlier one", "[console]") {
    auto sink = console({.colour = ColourMode::always});
    const auto log = fieldlog::get("svc").with({{"a", 1}, {"b", 2}});
    {
        const fieldlog::Scope scope{{"b", 3}, {"c", 4}};
        log.info("m", {{"a", 5}, {"d", "two words"}});
    }
    const auto key = [](const std::string& k, const std::string& v) { return std::string(" \x1b[2m").append(k).append("=\x1b[0m").append(v); };
    const std::string head = std::string("\x1b[2m") + kTs + "\x1b[0m \x1b[32mINFO \x1b[0m svc:" + std::string(10, ' ') + "\x1b[1mm\x1b[0m" +
                             std::string(39, ' ');
    // A child's bound fields over its parent's: the parent's run is copied, then cut by key.
    log.with({{"a", 6}}).info("m");
    CHECK(sink->lines() == std::vector<std::string>{head + key("b", "3") + key("c", "4") + key("a", "5") + key("d", "\"two words\""),
                                                    head + key("b", "2") + key("a", "6")});
}

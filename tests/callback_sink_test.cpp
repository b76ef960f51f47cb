// SPDX-License-Identifier: MIT
// The callback sink: lines or whole records handed to user functions, flush forwarded, and a
// throwing callback contained and counted.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "support/test_support.hpp"

TEST_CASE("a callback sink hands each line to the function without its newline", "[callback_sink]") {
    std::vector<std::string> lines;
    int flushes = 0;
    auto sink = std::make_shared<fieldlog::CallbackSink>([&](std::string_view line) { lines.emplace_back(line); },
                                                         [&] { ++flushes; });
    fieldlog::configure({.level = fieldlog::Level::info, .sinks = {{.target = sink}}, .clock = &fieldlog_test::fixed_clock});
    fieldlog::get("callback").info("hello", {{"n", 1}});
    fieldlog::flush();
    fieldlog::shutdown();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] ==
          R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"callback","msg":"hello","n":1})");
    CHECK(flushes >= 1);
    CHECK(sink->counters().records == 1);
    CHECK(sink->counters().bytes == lines[0].size() + 1);
}

TEST_CASE("the record form of a callback sink sees level, time and the whole line", "[callback_sink]") {
    std::vector<fieldlog::Level> levels;
    std::vector<fieldlog::Timestamp> times;
    std::string last;
    auto sink = std::make_shared<fieldlog::CallbackSink>([&](const fieldlog::RecordView& record) {
        levels.push_back(record.level);
        times.push_back(record.time);
        last.assign(record.bytes.data(), record.bytes.size());
    });
    fieldlog::configure({.level = fieldlog::Level::trace, .sinks = {{.target = sink}}, .clock = &fieldlog_test::fixed_clock});
    const auto log = fieldlog::get("callback");
    log.warn("w");
    log.error("e");
    fieldlog::shutdown();
    CHECK(levels == std::vector<fieldlog::Level>{fieldlog::Level::warn, fieldlog::Level::error});
    CHECK(times == std::vector<fieldlog::Timestamp>(2, fieldlog_test::fixed_clock()));
    CHECK(last.ends_with("\"msg\":\"e\"}\n"));
}

TEST_CASE("a callback that throws costs its record, counted, and never reaches the caller", "[callback_sink]") {
    int calls = 0;
    auto sink = std::make_shared<fieldlog::CallbackSink>([&](std::string_view) {
        if (++calls % 2 == 0) throw std::runtime_error("downstream is down");
    }, [] { throw std::runtime_error("flush failed"); });
    fieldlog::configure({.level = fieldlog::Level::info, .sinks = {{.target = sink}}});
    const auto log = fieldlog::get("callback");
    for (int i = 0; i < 4; ++i) CHECK_NOTHROW(log.info("m"));
    CHECK_NOTHROW(fieldlog::flush());
    fieldlog::shutdown();
    CHECK(calls == 4);
    CHECK(sink->counters().records == 4);  // handed over; two of them lost
    CHECK(sink->counters().dropped == 2);
    CHECK(sink->counters().errors >= 3);  // two records and at least one flush
}

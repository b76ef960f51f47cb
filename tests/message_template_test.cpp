// SPDX-License-Identifier: MIT
// Message templates: the holes are typed fields and the message their text, in every format,
// sync and async, with fields after them, redacted, kept for a backtrace, read by sinks of parts;
// the same record as a brace list with a fmt message of the same text.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fieldlog/testing/observer.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;
using namespace fieldlog::literals;
using fieldlog::Config;
using fieldlog::Format;
using fieldlog::Level;
using fieldlog_test::info_line;

namespace message_template_test {

struct Point {
    int x;
    int y;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Point& p) {
    enc.value(fieldlog::Object{{"x", p.x}, {"y", p.y}});
}

/// Converts to a C string, and has its own encoding, which is what a field of it writes.
struct Label {
    operator const char*() const noexcept { return "plain"; }  // NOLINT: implicit on purpose
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Label&) { enc.value(fieldlog::Object{{"label", "own"}}); }

}  // namespace message_template_test

namespace {

/// A request's record both ways: the template, then the brace list with a fmt message.
void log_request_both_ways(const fieldlog::Logger& log) {
    const char* method = "GET";
    const std::string path = "/api/v1/orders/12345";
    const int status = 200;
    const double latency_us = 1250.4567;
    const std::uint64_t bytes = 5123;
    const bool cached = false;
    log.info("request {method} {path} {status} in {latency_us:.1f} us bytes={bytes} cached={cached}"_tpl, method,
             path, status, latency_us, bytes, cached);
    log.info(fieldlog::format("request {} {} {} in {:.1f} us bytes={} cached={}", method, path, status, latency_us,
                              bytes, cached),
             {{"method", method},
              {"path", path},
              {"status", status},
              {"latency_us", latency_us},
              {"bytes", bytes},
              {"cached", cached}});
}

}  // namespace

TEST_CASE("a template writes its holes as typed fields and its text with their values", "[template]") {
    auto sink = fieldlog_test::capture();
    const fieldlog::Logger log = fieldlog::get("svc");
    log.info("user {user} paid {cents} cents"_tpl, "ann", 1299);
    log.info("no holes, {{braces}} kept"_tpl);
    log.info("{a}{b}"_tpl, true, 2.5);
    FIELDLOG_WARN(log, "from a macro: {n}"_tpl, -3);
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == info_line("user ann paid 1299 cents", R"(,"user":"ann","cents":1299)"));
    CHECK(lines[1] == info_line("no holes, {braces} kept", ""));
    CHECK(lines[2] == info_line("true2.5", R"(,"a":true,"b":2.5)"));
    CHECK(lines[3].find(R"("level":"warn","logger":"svc","msg":"from a macro: -3","n":-3})") != std::string::npos);
    fieldlog_test::release_sinks();
}

TEST_CASE("a template's spec shapes its text only: the field keeps its value", "[template]") {
    auto sink = fieldlog_test::capture();
    fieldlog::get("svc").info("took {ms:.2f} ms for {who:>5}"_tpl, 3.14159, "bo");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == info_line("took 3.14 ms for    bo", R"(,"ms":3.14159,"who":"bo")"));
    fieldlog_test::release_sinks();
}

TEST_CASE("a hole that is not a number or a string shows as its JSON", "[template]") {
    auto sink = fieldlog_test::capture();
    fieldlog::get("svc").info("at {where} after {wait}"_tpl, message_template_test::Point{1, 2}, 1500us);
    fieldlog::get("svc").info("{label}"_tpl, message_template_test::Label{});
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == info_line(R"(at {\"x\":1,\"y\":2} after \"1.5ms\")", R"(,"where":{"x":1,"y":2},"wait":"1.5ms")"));
    CHECK(lines[1] == info_line(R"({\"label\":\"own\"})", R"(,"label":{"label":"own"})"));
    fieldlog_test::release_sinks();
}

TEST_CASE("a template and a brace list with a fmt message of the same text make the same line", "[template][async]") {
    for (const Format format : {Format::json, Format::logfmt, Format::console, Format::otel}) {
        for (const bool async : {false, true}) {
            CAPTURE(static_cast<int>(format), async);
            auto sink = fieldlog_test::capture(format, async);
            log_request_both_ways(fieldlog::get("svc"));
            fieldlog::flush();
            const auto lines = sink->lines();
            REQUIRE(lines.size() == 2);
            CHECK(lines[0] == lines[1]);
            CHECK(lines[0].find("request GET /api/v1/orders/12345 200 in 1250.5 us bytes=5123 cached=false") !=
                  std::string::npos);
        }
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("every kind of value a call gives a hole makes the line a brace list makes", "[template][async]") {
    // Strings of each length the owned copy moves differently (none, short, up to 48 bytes,
    // longer), each string type, the integer and floating types, a null character pointer
    // (the fields' way: null), and a string too large for the ring (written by the caller).
    const std::string long_text(70, 'x');
    const std::string huge_text(6000, 'y');
    const std::string_view view = "/api/v1/orders/12345";
    const char* const null_text = nullptr;
    const char literal[] = "lit";
    const std::int8_t small = -8;
    const unsigned short ushort = 65535;
    const long long wide = INT64_MIN;
    const std::uint64_t uwide = UINT64_MAX;
    const float single = 0.25F;
    for (const bool async : {false, true}) {
        CAPTURE(async);
        auto sink = std::make_shared<fieldlog::MemorySink>();
        fieldlog::configure(Config{.level = Level::trace,
                                   .async = {.enabled = async, .queue_bytes = 8192},
                                   .sinks = {fieldlog::SinkConfig{.target = sink}},
                                   .clock = &fieldlog_test::fixed_clock});
        const fieldlog::Logger log = fieldlog::get("svc");
        log.info("{empty}|{view}|{long}|{lit}|{null}|{s}|{us}|{w}|{uw}|{f}|{b}"_tpl, std::string(), view, long_text,
                 literal, null_text, small, ushort, wide, uwide, single, true);
        log.info(fieldlog::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", "", view, long_text, literal, "null", small, ushort,
                                  wide, uwide, single, true),
                 {{"empty", std::string()},
                  {"view", view},
                  {"long", long_text},
                  {"lit", literal},
                  {"null", null_text},
                  {"s", small},
                  {"us", ushort},
                  {"w", wide},
                  {"uw", uwide},
                  {"f", single},
                  {"b", true}});
        log.info("{huge} done"_tpl, huge_text);
        fieldlog::flush();
        const auto lines = sink->lines();
        REQUIRE(lines.size() == 3);
        CHECK(lines[0] == lines[1]);
        CHECK(lines[0].find(R"("null":null,"s":-8,"us":65535,"w":-9223372036854775808,"uw":18446744073709551615,)") !=
              std::string::npos);
        CHECK(lines[2] == info_line(huge_text + " done", R"(,"huge":")" + huge_text + R"(")"));
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("fields after a template's values: through fieldlog::format, written after its holes", "[template][async]") {
    // Strings of each length the owned copy moves differently: short, up to 48 bytes, longer.
    const std::string long_text(70, 'x');
    for (const bool async : {false, true}) {
        CAPTURE(async);
        auto sink = fieldlog_test::capture(Format::json, async);
        const fieldlog::Logger log = fieldlog::get("svc");
        log.info(fieldlog::format("user {user} logged in"_tpl, "ann"), {{"ip", "10.0.0.1"}, {"user", "bob"}});
        log.warn(fieldlog::format("{a} and more"_tpl, 1), {{"b", 2}});
        FIELDLOG_ERROR(log, fieldlog::format("{a} from a macro"_tpl, 1), {{"b", 2}});
        log.info(fieldlog::format("{path} {long} {n}"_tpl, "/api/v1/orders/12345", long_text, 7),
                 {{"after", long_text}, {"trace", "4bf92f3577b34da6a3ce929d0e0e4736"}});
        fieldlog::flush();
        const auto lines = sink->lines();
        REQUIRE(lines.size() == 4);
        // A key written again replaces the earlier member where it was written last (field.hpp).
        CHECK(lines[0] == info_line("user ann logged in", R"(,"ip":"10.0.0.1","user":"bob")"));
        CHECK(lines[1].find(R"("msg":"1 and more","a":1,"b":2})") != std::string::npos);
        CHECK(lines[2].find(R"("level":"error","logger":"svc","msg":"1 from a macro","a":1,"b":2})") != std::string::npos);
        CHECK(lines[3] == info_line("/api/v1/orders/12345 " + long_text + " 7",
                                    R"(,"path":"/api/v1/orders/12345","long":")" + long_text + R"(","n":7,"after":")" +
                                        long_text + R"(","trace":"4bf92f3577b34da6a3ce929d0e0e4736")"));
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("a template's fields may be many: more than the list on the stack holds", "[template]") {
    std::vector<std::string> keys;
    for (int i = 0; i < 70; ++i) keys.push_back(fmt::format("k{}", i));
    std::vector<fieldlog::Field> many;
    for (int i = 0; i < 70; ++i) many.emplace_back(keys[static_cast<std::size_t>(i)], i);
    auto observer = std::make_shared<fieldlog::testing::Observer>();
    fieldlog::configure({.level = Level::trace, .sinks = {{.target = observer}}});
    fieldlog::get("svc").info(fieldlog::format("{first} first"_tpl, -1), many);
    const auto records = observer->records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].message == "-1 first");
    REQUIRE(records[0].fields.size() == 71);
    CHECK(records[0].fields[0].key == "first");
    CHECK(records[0].fields[70].key == "k69");
    CHECK(records[0].field("k69") == 69);
    fieldlog_test::release_sinks();
}

TEST_CASE("a redacted hole is redacted in the message too", "[template][redact][async]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    auto observer = std::make_shared<fieldlog::testing::Observer>();
    for (const bool async : {false, true}) {
        CAPTURE(async);
        fieldlog::configure(Config{.level = Level::trace,
                                   .async = {.enabled = async},
                                   .redact = {"pass*"},
                                   .sinks = {{.target = sink}, {.target = observer}},
                                   .clock = &fieldlog_test::fixed_clock});
        fieldlog::get("svc").info("login {user} with {password}"_tpl, "ann", "hunter2");
        fieldlog::flush();
        const auto lines = sink->lines();
        REQUIRE(lines.size() == 1);
        CHECK(lines[0] == info_line("login ann with [REDACTED]", R"(,"user":"ann","password":"[REDACTED]")"));
        const auto records = observer->records();
        REQUIRE(records.size() == 1);
        CHECK(records[0].message == "login ann with [REDACTED]");
        sink->clear();
        observer->clear();
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("sinks of parts read a template's record with its text made and its holes typed", "[template][observer]") {
    auto observer = std::make_shared<fieldlog::testing::Observer>();
    for (const bool async : {false, true}) {
        CAPTURE(async);
        fieldlog::configure({.level = Level::trace, .async = {.enabled = async}, .sinks = {{.target = observer}}});
        fieldlog::get("svc").info("paid {cents} cents in {ms:.1f} ms"_tpl, 1299, 2.25);
        const auto records = observer->records();
        REQUIRE(records.size() == 1);
        CHECK(records[0].message == "paid 1299 cents in 2.2 ms");
        CHECK(records[0].field("cents") == 1299);
        CHECK(records[0].field("ms") == 2.25);
        observer->clear();
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("a template's record kept for a backtrace is written with its text", "[template][backtrace]") {
    auto sink = fieldlog_test::capture();
    const fieldlog::Logger log = fieldlog::get("bt");
    log.set_level(Level::info);
    log.keep_backtrace({.records = 4, .keep_from = Level::debug, .trigger = Level::error});
    {
        std::string user = "ann";
        log.debug("step {n} for {user}"_tpl, 1, user);
        user.assign(user.size(), 'x');  // the kept copy owns its text
    }
    log.error("failed"_tpl);
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find(R"("msg":"step 1 for ann","backtrace":true,"n":1,"user":"ann")") != std::string::npos);
    CHECK(lines[1].find(R"("msg":"failed")") != std::string::npos);
    log.keep_backtrace({.records = 0});
    log.reset_level();
    fieldlog_test::release_sinks();
}

namespace {

/// A rate-limited site of each template form; a function template, so that each mode has
/// sites of its own.
template <bool Async>
void check_rate_limited_template() {
    auto sink = fieldlog_test::capture(Format::json, Async);
    const fieldlog::Logger log = fieldlog::get("svc");
    for (int i = 0; i < 4; ++i) FIELDLOG_INFO_EVERY_N(log, 2, "tick {i}"_tpl, i);
    for (int i = 0; i < 4; ++i) FIELDLOG_INFO_EVERY_N(log, 2, fieldlog::format("tock {i}"_tpl, i), {{"k", 1}});
    fieldlog::flush();
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == info_line("tick 0", R"(,"i":0)"));
    CHECK(lines[1] == info_line("tick 2", R"(,"suppressed":1,"i":2)"));
    CHECK(lines[2] == info_line("tock 0", R"(,"i":0,"k":1)"));
    CHECK(lines[3] == info_line("tock 2", R"(,"suppressed":1,"i":2,"k":1)"));
    fieldlog_test::release_sinks();
}

}  // namespace

TEST_CASE("a rate-limited call site takes a template, with fields after it or not", "[template][rate_limit]") {
    check_rate_limited_template<false>();
}

TEST_CASE("a rate-limited call site takes a template in async mode", "[template][rate_limit][async]") {
    check_rate_limited_template<true>();
}

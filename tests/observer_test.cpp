// SPDX-License-Identifier: MIT
// The test observer: every value kind kept typed, user types through fieldlog_encode, the
// encoders' key precedence (call over scope over bound), captures re-opened on another thread,
// fmt messages and call sites, level and logger routing, counters, threads logging at once,
// async mode without a flush, and the queries.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fieldlog/testing/observer.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;
using fieldlog::Level;
using fieldlog::testing::ObservedMember;
using fieldlog::testing::ObservedRecord;
using fieldlog::testing::ObservedValue;
using fieldlog::testing::Observer;

namespace observer_test {

struct Point {
    int x;
    int y;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Point& p) {
    enc.value(fieldlog::Object{{"x", p.x}, {"y", p.y}});
}

/// Streams its parts, as a user type may: an object with an array member built call by call.
struct Route {
    std::string name;
    std::vector<Point> stops;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Route& r) {
    enc.begin_object();
    enc.key("name");
    enc.value(r.name);
    enc.key("stops");
    enc.begin_array();
    for (const Point& p : r.stops) enc.value(p);
    enc.end_array();
    enc.key("label");
    enc.formatted("{}-{}", fmt::make_format_args(r.name, r.stops.size()));
    enc.end_object();
}

struct Celsius {
    double degrees;
};

}  // namespace observer_test

template <>
struct fmt::formatter<observer_test::Celsius> : fmt::formatter<double> {
    auto format(const observer_test::Celsius& c, format_context& ctx) const {
        return fmt::format_to(ctx.out(), "{}°C", c.degrees);
    }
};

namespace {

/// Configures `observer` alone at level trace with the fixed clock.
void observe(const std::shared_ptr<Observer>& observer, bool async = false) {
    fieldlog::configure({.level = Level::trace,
                         .async = {.enabled = async},
                         .sinks = {{.target = observer}},
                         .clock = &fieldlog_test::fixed_clock});
}

}  // namespace

TEST_CASE("the observer keeps every kind of value typed", "[observer]") {
    auto observer = std::make_shared<Observer>();
    observe(observer);
    const std::array<std::byte, 3> raw{std::byte{1}, std::byte{0xAB}, std::byte{0xFF}};
    const std::error_code refused = std::make_error_code(std::errc::connection_refused);
    const auto when = std::chrono::sys_days{std::chrono::year{2026} / 11 / 30} + 8h + 38min + 11s + 5ns;
    const std::vector<int> ids{1, 2, 3};
    const std::map<std::string, int> counts{{"a", 1}, {"b", 2}};
    const std::optional<int> none;
    const std::optional<int> some = 7;
    fieldlog::get("kinds").info("all", {{"null", nullptr},
                                        {"bool", true},
                                        {"int", -3},
                                        {"uint", std::uint64_t{18'000'000'000'000'000'000u}},
                                        {"double", 2.5},
                                        {"string", "text"},
                                        {"bytes", fieldlog::Bytes{raw}},
                                        {"duration", 1250us},
                                        {"time", when},
                                        {"error", refused},
                                        {"array", fieldlog::Array{1, "two", 3.0}},
                                        {"object", fieldlog::Object{{"k", "v"}, {"n", fieldlog::Object{{"deep", 1}}}}},
                                        {"vector", ids},
                                        {"map", counts},
                                        {"none", none},
                                        {"some", some},
                                        {"formatted", observer_test::Celsius{21.5}},
                                        {"exception", std::runtime_error("boom")}});
    fieldlog::shutdown();
    REQUIRE(observer->size() == 1);
    const ObservedRecord r = observer->all().front();
    using Kind = ObservedValue::Kind;
    CHECK(r.field("null")->kind() == Kind::null);
    CHECK(r.field("null") == nullptr);
    CHECK(r.field("bool") == true);
    CHECK_FALSE(r.field("bool") == 1);  // a bool is no integer
    CHECK(r.field("int") == -3);
    CHECK(r.field("int")->kind() == Kind::int64);
    CHECK(r.field("uint") == 18'000'000'000'000'000'000u);
    CHECK(r.field("uint")->kind() == Kind::uint64);
    CHECK(r.field("double") == 2.5);
    CHECK_FALSE(r.field("double") == 2);  // an integer never equals a double
    CHECK(r.field("string") == "text");
    CHECK(r.field("string") == std::string("text"));
    CHECK(r.field("string") == std::string_view("text"));
    CHECK(r.field("bytes") == std::vector<std::byte>(raw.begin(), raw.end()));
    CHECK(r.field("duration") == 1250us);
    CHECK(r.field("duration") == 1'250'000ns);
    CHECK(r.field("duration")->as_duration() == 1250us);
    CHECK(r.field("time") == when);
    CHECK(r.field("time")->as_time() == fieldlog::Timestamp(when));
    CHECK(r.field("error") == refused);
    CHECK(r.field("error")->as_error_code().category == "generic");
    CHECK(r.field("error")->as_error_code().value == static_cast<int>(std::errc::connection_refused));
    CHECK(r.field("array") == std::vector<ObservedValue>{1, "two", 3.0});
    CHECK(r.field("array")->as_array().at(1) == "two");
    CHECK(*r.field("object")->find("k") == "v");
    CHECK(*r.field("object")->find("n")->find("deep") == 1);
    CHECK(r.field("object")->find("absent") == nullptr);
    CHECK(r.field("vector") == std::vector<ObservedValue>{1, 2, 3});
    CHECK(r.field("map") == std::vector<ObservedMember>{{"a", 1}, {"b", 2}});
    CHECK(r.field("none") == nullptr);
    CHECK(r.field("some") == 7);
    CHECK(r.field("formatted") == "21.5°C");
    CHECK(*r.field("exception")->find("what") == "boom");
    CHECK(*r.field("exception")->find("type") == "std::runtime_error");
    CHECK_FALSE(r.has("absent"));
    CHECK_FALSE(r.field("absent") == nullptr);  // absent is not null
    CHECK(r.field("object")->to_string() == R"({"k": "v", "n": {"deep": 1}})");
}

TEST_CASE("integers compare by value across signedness, values of other kinds never", "[observer]") {
    CHECK(ObservedValue(3) == ObservedValue(3u));
    CHECK(ObservedValue(std::uint64_t{3}) == std::int64_t{3});
    CHECK_FALSE(ObservedValue(-1) == ObservedValue(std::uint64_t{UINT64_MAX}));
    CHECK_FALSE(ObservedValue(3) == ObservedValue(3.0));
    CHECK_FALSE(ObservedValue("3") == ObservedValue(3));
    CHECK_FALSE(ObservedValue() == ObservedValue(false));
    CHECK(ObservedValue(static_cast<const char*>(nullptr)).is_null());
    CHECK(std::vector<ObservedValue>{1, 2u} == std::vector<ObservedValue>{1u, 2});
    CHECK(ObservedValue(std::vector<ObservedValue>{1u}) == std::vector<ObservedValue>{1});
    CHECK(ObservedValue(std::vector<ObservedMember>{{"a", 1}}) != ObservedValue(std::vector<ObservedMember>{{"b", 1}}));
}

TEST_CASE("a user type is recorded as the calls its fieldlog_encode made", "[observer]") {
    auto observer = std::make_shared<Observer>();
    observe(observer);
    const observer_test::Route route{"north", {{1, 2}, {3, 4}}};
    // Bound and scope fields are copied into a context node first (a recorded tape); the
    // observer sees the same structure through them as through the call's own fields.
    const fieldlog::Logger log = fieldlog::get("geo").with({{"origin", observer_test::Point{0, 0}}});
    {
        const fieldlog::Scope scope{{"route", route}};
        log.info("planned", {{"first", route.stops.front()}});
    }
    fieldlog::shutdown();
    REQUIRE(observer->size() == 1);
    const ObservedRecord r = observer->all().front();
    const std::vector<ObservedMember> origin{{"x", 0}, {"y", 0}};
    CHECK(r.field("origin") == origin);
    CHECK(r.field("first") == std::vector<ObservedMember>{{"x", 1}, {"y", 2}});
    const ObservedValue& recorded = *r.field("route");
    CHECK(*recorded.find("name") == "north");
    CHECK(*recorded.find("label") == "north-2");
    CHECK(*recorded.find("stops") == std::vector<ObservedValue>{std::vector<ObservedMember>{{"x", 1}, {"y", 2}},
                                                                std::vector<ObservedMember>{{"x", 3}, {"y", 4}}});
}

TEST_CASE("fields merge as the encoders merge them: call over scope over bound, the last place kept", "[observer]") {
    auto observer = std::make_shared<Observer>();
    auto memory = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = Level::trace,
                         .sinks = {{.target = observer}, {.target = memory}},
                         .clock = &fieldlog_test::fixed_clock});
    const fieldlog::Logger parent = fieldlog::get("merge").with({{"k", "bound"}, {"a", 1}});
    const fieldlog::Logger child = parent.with({{"c", 3}, {"a", "child"}});
    {
        const fieldlog::Scope outer{{"k", "outer"}, {"b", 2}};
        const fieldlog::Scope inner{{"b", "inner"}, {"msg", "a user's msg"}};
        child.info("m", {{"k", "call"}, {"d", 4}});
        child.info("scope only");
    }
    fieldlog::shutdown();
    REQUIRE(observer->size() == 2);
    const std::vector<ObservedRecord> records = observer->all();
    const auto keys = [](const ObservedRecord& r) {
        std::vector<std::string> out;
        for (const ObservedMember& m : r.fields) out.push_back(m.key);
        return out;
    };
    CHECK(keys(records[0]) == std::vector<std::string>{"c", "a", "b", "msg", "k", "d"});
    CHECK(records[0].field("k") == "call");
    CHECK(records[0].field("a") == "child");
    CHECK(records[0].field("b") == "inner");
    CHECK(records[0].field("msg") == "a user's msg");  // kept as given: typed, not a line
    CHECK(records[0].message == "m");
    CHECK(keys(records[1]) == std::vector<std::string>{"c", "a", "k", "b", "msg"});
    CHECK(records[1].field("k") == "outer");
    // The JSON line has the same members in the same order (the reserved key renamed).
    const std::vector<std::string> lines = memory->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == fieldlog_test::info_line(
                          "m", R"(,"c":3,"a":"child","b":"inner","fields.msg":"a user's msg","k":"call","d":4)", "merge"));
}

TEST_CASE("a capture re-opened on another thread brings its fields to that thread's records", "[observer]") {
    auto observer = std::make_shared<Observer>();
    observe(observer);
    const fieldlog::Logger log = fieldlog::get("worker");
    fieldlog::ScopeContext captured;
    {
        const fieldlog::Scope request{{"request_id", "r-7"}, {"user", 42}};
        captured = fieldlog::Scope::capture();
    }
    std::thread worker([&] {
        const fieldlog::Scope again{captured};
        const fieldlog::Scope step{{"step", "resize"}};
        log.info("on the pool");
    });
    worker.join();
    log.info("after");
    fieldlog::shutdown();
    REQUIRE(observer->size() == 2);
    const std::vector<ObservedRecord> records = observer->all();
    CHECK(records[0].field("request_id") == "r-7");
    CHECK(records[0].field("user") == 42);
    CHECK(records[0].field("step") == "resize");
    CHECK(records[0].fields.size() == 3);
    CHECK(records[1].fields.empty());  // the scope closed before this record, on this thread
}

TEST_CASE("a fmt message is formatted, and the call site is the logging call's", "[observer]") {
    auto observer = std::make_shared<Observer>();
    observe(observer);
    const fieldlog::Logger log = fieldlog::get("fmt");
    const unsigned line = __LINE__ + 1;
    log.info("took {} ms for {}", 42, "cart");
    log.warn(fieldlog::format("{} of {}", 3, 4), {{"part", true}});
    FIELDLOG_ERROR(log, "plain {}", {{"braces", "kept"}});
    fieldlog::shutdown();
    const std::vector<ObservedRecord> records = observer->all();
    REQUIRE(records.size() == 3);
    CHECK(records[0].message == "took 42 ms for cart");
    CHECK(records[0].caller.line == line);
    CHECK(records[0].caller.file.ends_with("observer_test.cpp"));
    CHECK_FALSE(records[0].caller.function.empty());
    CHECK(records[1].message == "3 of 4");
    CHECK(records[1].caller.line == line + 1);
    CHECK(records[1].field("part") == true);
    CHECK(records[2].message == "plain {}");
    CHECK(records[2].level == Level::error);
    CHECK(records[2].logger == "fmt");
    CHECK(records[2].time == fieldlog_test::fixed_clock());
}

TEST_CASE("an observer takes the records its level and logger rules let through, counted", "[observer]") {
    auto warnings = std::make_shared<Observer>();
    auto db = std::make_shared<Observer>();
    auto memory = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = Level::debug,
                         .sinks = {{.target = warnings, .level = Level::warn},
                                   {.target = db, .loggers = {"db"}, .exclude = {"db.cache"}},
                                   {.target = memory, .level = Level::error}}});
    fieldlog::get("db").debug("db debug");
    fieldlog::get("db.pool").warn("pool warn");
    fieldlog::get("db.cache").error("cache error");
    fieldlog::get("http").info("http info");
    fieldlog::get("http").trace("below the logger's level");
    const fieldlog::Metrics metrics = fieldlog::metrics();
    fieldlog::shutdown();
    const auto messages = [](const Observer& o) {
        std::vector<std::string> out;
        for (const ObservedRecord& r : o.all()) out.push_back(r.message);
        return out;
    };
    CHECK(messages(*warnings) == std::vector<std::string>{"pool warn", "cache error"});
    CHECK(messages(*db) == std::vector<std::string>{"db debug", "pool warn"});
    CHECK(memory->lines().size() == 1);
    CHECK(warnings->counters().records == 2);
    CHECK(warnings->counters().bytes == 0);
    CHECK(db->counters().records == 2);
    std::size_t observers = 0;
    for (const fieldlog::SinkMetrics& sink : metrics.sinks) {
        if (sink.kind == "observer") {
            ++observers;
            CHECK(sink.counters.records == 2);
        }
    }
    CHECK(observers == 2);
}

TEST_CASE("the queries filter, chain, take and clear", "[observer]") {
    auto observer = std::make_shared<Observer>();
    observe(observer);
    const fieldlog::Logger db = fieldlog::get("db");
    db.warn("slow query", {{"rows", 3}});
    db.warn("slow query", {{"rows", 4u}});
    db.info("slow query", {{"rows", 3}});
    fieldlog::get("db.pool").warn("slow query", {{"rows", 3}});
    fieldlog::get("http").warn("timeout", {{"rows", 3}});
    CHECK(observer->size() == 5);
    CHECK(observer->filter_level(Level::warn).size() == 4);
    CHECK(observer->filter_logger("db").size() == 3);  // exactly "db", not "db.pool"
    CHECK(observer->filter_message("slow query").size() == 4);
    CHECK(observer->filter_field("rows", 3).size() == 4);
    CHECK(observer->filter_field("rows", 4).size() == 1);  // uint64 4 equals 4
    CHECK(observer->filter_field("rows", "3").empty());
    const auto chained = observer->filter_level(Level::warn).filter_logger("db").filter_field("rows", 3);
    REQUIRE(chained.size() == 1);
    CHECK(chained[0].message == "slow query");
    CHECK(observer->records().filter([](const ObservedRecord& r) { return r.logger.starts_with("db"); }).size() == 4);
    const std::vector<ObservedRecord> taken = observer->take_all();
    CHECK(taken.size() == 5);
    CHECK(observer->size() == 0);
    db.error("later");
    CHECK(observer->size() == 1);
    observer->clear();
    CHECK(observer->all().empty());
    fieldlog::shutdown();
}

TEST_CASE("in async mode the observer has each record when the logging call returns", "[observer]") {
    auto observer = std::make_shared<Observer>();
    auto memory = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = Level::trace,
                         .async = {.enabled = true},
                         .sinks = {{.target = observer}, {.target = memory}}});
    const fieldlog::Logger log = fieldlog::get("async");
    for (int i = 0; i < 100; ++i) {
        log.info("queued", {{"i", i}});
        REQUIRE(observer->size() == static_cast<std::size_t>(i + 1));  // no flush between
    }
    fieldlog::flush();
    CHECK(memory->lines().size() == 100);  // the encoded sinks get theirs through the writer
    fieldlog::shutdown();
    const std::vector<ObservedRecord> records = observer->all();
    REQUIRE(records.size() == 100);
    for (int i = 0; i < 100; ++i) CHECK(records[static_cast<std::size_t>(i)].field("i") == i);
}

TEST_CASE("two threads logging at once to an observer while a third reads it", "[observer][concurrent]") {
    auto observer = std::make_shared<Observer>();
    observe(observer);
    constexpr int kPerThread = 500;
    std::atomic<bool> done{false};
    std::atomic<bool> shrank{false};  // Catch2's checks are for the test's own thread
    std::thread reader([&] {
        std::size_t last = 0;
        while (!done.load()) {
            const std::size_t now = observer->filter_logger("t").size();
            if (now < last) shrank = true;
            last = now;
        }
    });
    const auto write = [&](int tag) {
        const fieldlog::Scope scope{{"thread", tag}};
        const fieldlog::Logger log = fieldlog::get("t");
        for (int i = 0; i < kPerThread; ++i) log.info("n", {{"i", i}});
    };
    std::thread one(write, 1);
    std::thread two(write, 2);
    one.join();
    two.join();
    done = true;
    reader.join();
    CHECK_FALSE(shrank);
    fieldlog::shutdown();
    const std::vector<ObservedRecord> records = observer->all();
    REQUIRE(records.size() == 2 * kPerThread);
    for (const int tag : {1, 2}) {
        const auto mine = observer->filter_field("thread", tag);
        REQUIRE(mine.size() == kPerThread);
        for (int i = 0; i < kPerThread; ++i) CHECK(mine[static_cast<std::size_t>(i)].field("i") == i);  // in order
    }
}

// The README's example ("Testing your logging"), as a user's test reads.
namespace {
void run_query(const fieldlog::Logger& log, std::string_view sql) {
    log.debug("query", {{"sql", sql}});
    log.warn("slow query", {{"sql", sql}, {"rows", 3}, {"took", 1250ms}});
}
}  // namespace

TEST_CASE("Catch2 example: a slow query is logged once, with its rows and the request's id", "[observer]") {
    auto observer = std::make_shared<fieldlog::testing::Observer>();
    fieldlog::configure({.level = fieldlog::Level::debug, .sinks = {{.target = observer}}});
    {
        fieldlog::Scope request{{"request_id", "r-42"}};
        run_query(fieldlog::get("db"), "SELECT 1");
    }
    const auto slow = observer->filter_level(fieldlog::Level::warn).filter_logger("db");
    REQUIRE(slow.size() == 1);
    CHECK(slow[0].message == "slow query");
    CHECK(slow[0].field("rows") == 3);
    CHECK(slow[0].field("took") == 1250ms);
    CHECK(slow[0].field("request_id") == "r-42");
    CHECK(observer->filter_message("query").filter_field("sql", "SELECT 1").size() == 1);
    fieldlog::shutdown();
}

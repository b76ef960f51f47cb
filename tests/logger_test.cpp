// SPDX-License-Identifier: MIT
// Loggers: the level check, names of every length, macros that skip argument evaluation, child
// loggers (and their bound fields kept between records), per-logger levels, metrics, and many
// threads writing one file without interleaving.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using fieldlog_test::capture;
using fieldlog_test::info_line;
using fieldlog_test::jsonl_errors;

namespace {
int evaluations = 0;
int counted() { return ++evaluations; }
}  // namespace

TEST_CASE("records below the logger's level are not written", "[logger]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::warn, .sinks = {{.target = sink}}});
    const auto log = fieldlog::get("gate");
    log.info("hidden");
    log.debug("hidden");
    log.warn("shown");
    log.error("shown");
    CHECK(sink->lines().size() == 2);
    CHECK_FALSE(log.enabled(fieldlog::Level::info));
    CHECK(log.enabled(fieldlog::Level::error));
}

TEST_CASE("every level writes its own name", "[logger]") {
    auto sink = capture();
    const auto log = fieldlog::get("levels");
    log.trace("m");
    log.debug("m");
    log.info("m");
    log.warn("m");
    log.error("m");
    log.fatal("m");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 6);
    const char* names[] = {"trace", "debug", "info", "warn", "error", "fatal"};
    for (std::size_t i = 0; i < 6; ++i) CHECK(lines[i].find(std::string("\"level\":\"") + names[i] + "\"") != std::string::npos);
}

TEST_CASE("a logger's name is written escaped, whether or not its JSON form is made once", "[logger]") {
    // The JSON form of a name (quoted, escaped, then `,"msg":"`) is made once when it fits 48
    // bytes, a name of up to 38 plain bytes; longer ones are escaped on every record.
    struct Case {
        std::string name;
        std::string written;
    };
    const std::string fits(38, 'a');
    const std::string one_over(39, 'b');
    const std::string long_after_escaping = std::string(30, 'c') + "\x01\x02";
    const std::vector<Case> cases = {
        {"", ""},
        {"svc", "svc"},
        {fits, fits},
        {one_over, one_over},
        {"q\"b\\s", R"(q\"b\\s)"},
        {"\x01", R"(\u0001)"},
        {"bad\xFF", "bad\xEF\xBF\xBD"},
        {long_after_escaping, std::string(30, 'c') + R"(\u0001\u0002)"},
        {std::string(1000, 'd'), std::string(1000, 'd')},
    };
    auto sink = capture();
    for (const Case& c : cases) fieldlog::get(c.name).info("m", {{"n", 1}});
    const auto lines = sink->lines();
    REQUIRE(lines.size() == cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << i);
        CHECK(lines[i] == info_line("m", R"(,"n":1)", cases[i].written));
    }
    CHECK(jsonl_errors(lines).empty());
}

TEST_CASE("the macros do not evaluate their arguments when the level is off", "[logger]") {
    auto sink = capture();
    const auto log = fieldlog::get("macros");
    log.set_level(fieldlog::Level::info);
    evaluations = 0;
    FIELDLOG_DEBUG(log, "not evaluated", {{"n", counted()}});
    CHECK(evaluations == 0);
    FIELDLOG_INFO(log, "evaluated", {{"n", counted()}});
    CHECK(evaluations == 1);
    FIELDLOG_WARN(log, "formatted {}", counted());
    CHECK(evaluations == 2);
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].ends_with(R"("msg":"evaluated","n":1})"));
    CHECK(lines[1].ends_with(R"("msg":"formatted 2"})"));
    log.reset_level();  // a level set at run time outlives the test case
}

TEST_CASE("set_level is seen by every handle of the same name", "[logger][concurrent]") {
    capture();
    const auto a = fieldlog::get("shared.name");
    const auto b = fieldlog::get("shared.name");
    a.set_level(fieldlog::Level::error);
    CHECK(b.level() == fieldlog::Level::error);
    std::thread([&] { CHECK_FALSE(b.enabled(fieldlog::Level::warn)); }).join();
    a.reset_level();
}

TEST_CASE("set_level applies to the dotted children without a level of their own, until reset_level", "[logger][levels]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    const fieldlog::Config config{.level = fieldlog::Level::info,
                                  .levels = {{"db.pool", fieldlog::Level::error}},
                                  .sinks = {{.target = sink}}};
    fieldlog::configure(config);
    const auto db = fieldlog::get("db");
    const auto query = fieldlog::get("db.query");
    const auto pool = fieldlog::get("db.pool");
    const auto dbx = fieldlog::get("dbx");
    db.set_level(fieldlog::Level::debug);
    CHECK(db.level() == fieldlog::Level::debug);
    CHECK(query.level() == fieldlog::Level::debug);          // a child without a level of its own
    CHECK(fieldlog::get("db.query.slow").level() == fieldlog::Level::debug);  // made after set_level
    CHECK(pool.level() == fieldlog::Level::error);           // the configuration gives it its own
    CHECK(dbx.level() == fieldlog::Level::info);             // not a dotted child
    query.set_level(fieldlog::Level::warn);
    CHECK(query.level() == fieldlog::Level::warn);
    fieldlog::configure(config);  // levels set at run time are kept
    CHECK(db.level() == fieldlog::Level::debug);
    CHECK(query.level() == fieldlog::Level::warn);
    db.reset_level();
    CHECK(db.level() == fieldlog::Level::info);
    CHECK(query.level() == fieldlog::Level::warn);  // its own still holds
    query.reset_level();
    CHECK(query.level() == fieldlog::Level::info);
    fieldlog::Logger().set_level(fieldlog::Level::warn);  // the root: the global level
    CHECK(db.level() == fieldlog::Level::warn);
    CHECK(pool.level() == fieldlog::Level::error);
    fieldlog::Logger().reset_level();
    CHECK(db.level() == fieldlog::Level::info);
    fieldlog_test::release_sinks();
}

TEST_CASE("levels() and set_levels() read and replace the levels set at run time", "[logger][levels]") {
    fieldlog::set_levels("");  // what earlier test cases in this process pinned with set_level()
    fieldlog::configure({.level = fieldlog::Level::info,
                         .levels = {{"http", fieldlog::Level::warn}},
                         .sinks = {{.target = std::make_shared<fieldlog::NullSink>()}}});
    CHECK(fieldlog::levels() == "info,http=warn");
    fieldlog::set_levels("Debug, db=TRACE ,http.client=error");
    CHECK(fieldlog::levels() == "debug,db=trace,http=warn,http.client=error");
    CHECK(fieldlog::get("db.pool").level() == fieldlog::Level::trace);
    CHECK(fieldlog::get("http").level() == fieldlog::Level::warn);
    CHECK(fieldlog::get("http.client.tls").level() == fieldlog::Level::error);
    CHECK(fieldlog::get("other").level() == fieldlog::Level::debug);

    CHECK_THROWS_WITH(fieldlog::set_levels("info,db=loud"),
                      "set_levels: levels.db: expected trace, debug, info, warn, error, fatal or off, got \"loud\"");
    CHECK(fieldlog::levels() == "debug,db=trace,http=warn,http.client=error");  // unchanged

    fieldlog::set_levels("");  // back to the configuration
    CHECK(fieldlog::levels() == "info,http=warn");
    CHECK(fieldlog::get("db.pool").level() == fieldlog::Level::info);
    fieldlog_test::release_sinks();
}

TEST_CASE("a field list built at run time is logged behind the level check", "[logger]") {
    auto sink = capture();
    const auto log = fieldlog::get("runtime.fields");
    log.set_level(fieldlog::Level::info);
    std::vector<fieldlog::Field> fields;
    for (int n = 0; n < 3; ++n) fields.push_back({n == 0 ? "a" : n == 1 ? "b" : "c", n});
    log.info("vector", fields);
    log.log(fieldlog::Level::warn, "span", std::span<const fieldlog::Field>(fields).first(2));
    log.debug("below the level", fields);
    log.log(fieldlog::Level::debug, "below the level", std::span<const fieldlog::Field>(fields));
    FIELDLOG_INFO(log, "macro", std::span<const fieldlog::Field>(fields).last(1));
    log.reset_level();
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == info_line("vector", R"(,"a":0,"b":1,"c":2)", "runtime.fields"));
    CHECK(lines[1].ends_with(R"("level":"warn","logger":"runtime.fields","msg":"span","a":0,"b":1})"));
    CHECK(lines[2] == info_line("macro", R"(,"c":2)", "runtime.fields"));
}

TEST_CASE("level names parse in any case", "[logger][levels]") {
    CHECK(fieldlog::parse_level("DEBUG") == fieldlog::Level::debug);
    CHECK(fieldlog::parse_level("Info") == fieldlog::Level::info);
    CHECK(fieldlog::parse_level("WARNING") == fieldlog::Level::warn);
    CHECK(fieldlog::parse_level("oFF") == fieldlog::Level::off);
    CHECK_FALSE(fieldlog::parse_level("inf").has_value());
    CHECK_FALSE(fieldlog::parse_level("infoo").has_value());
    CHECK_FALSE(fieldlog::parse_level("").has_value());
}

TEST_CASE("per-logger levels apply to the name and its dotted children", "[logger]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::warn,
                         .levels = {{"db", fieldlog::Level::debug}, {"db.pool", fieldlog::Level::error}},
                         .sinks = {{.target = sink}}});
    CHECK(fieldlog::get("db").level() == fieldlog::Level::debug);
    CHECK(fieldlog::get("db.query").level() == fieldlog::Level::debug);
    CHECK(fieldlog::get("db.pool").level() == fieldlog::Level::error);
    CHECK(fieldlog::get("db.pool.conn").level() == fieldlog::Level::error);
    CHECK(fieldlog::get("dbx").level() == fieldlog::Level::warn);
    CHECK(fieldlog::get("other").level() == fieldlog::Level::warn);
}

TEST_CASE("child loggers carry their bound fields, parents first, before call fields", "[logger]") {
    auto sink = capture();
    const auto parent = fieldlog::get("svc").with({{"service", "checkout"}, {"version", 3}});
    const auto child = parent.with({{"region", "eu"}});
    child.info("hello", {{"status", 200}});
    parent.info("parent");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"svc","msg":"hello",)"
                      R"("service":"checkout","version":3,"region":"eu","status":200})");
    CHECK(lines[1] == R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"svc","msg":"parent",)"
                      R"("service":"checkout","version":3})");
}

// Child loggers interleaved with each other, with the root, with long and oversized records,
// with keys that replace a bound one and with scopes: every line exact.
TEST_CASE("bound fields in every order of records give exact lines", "[logger][bound]") {
    auto sink = capture();
    const auto a = fieldlog::get("svc").with({{"a", 1}, {"s", "alpha"}});
    const auto b = fieldlog::get("svc").with({{"b", 2}});
    const auto root = fieldlog::get("svc");
    const std::string long_message(2000, 'm');
    const std::string big(100'000, 'x');
    const std::string huge_bound(20'000, 'h');
    std::vector<std::string> expected;
    const std::string a_members = R"(,"a":1,"s":"alpha")";

    a.info("1");
    a.info("2");
    b.info("3");
    a.info("4");
    expected.insert(expected.end(), {info_line("1", a_members), info_line("2", a_members), info_line("3", R"(,"b":2)"),
                                     info_line("4", a_members)});
    root.info(long_message);  // a record of another logger reaching past where they are kept
    a.info("6");
    root.info("6b", {{"v", long_message}, {"v", 1}});  // past them, then cut back short
    a.info("6c");
    a.info(long_message);  // a header too long to end where they are kept
    a.info("8");
    expected.insert(expected.end(), {info_line(long_message, ""), info_line("6", a_members), info_line("6b", R"(,"v":1)"),
                                     info_line("6c", a_members),
                                     info_line(long_message, a_members), info_line("8", a_members)});
    a.info("9", {{"a", 9}});  // cuts the bound "a" out of the kept bytes
    a.info("10");
    a.info("11", {{"big", big}});  // oversized: the record moves to the heap
    a.info("12");
    expected.insert(expected.end(), {info_line("9", R"(,"s":"alpha","a":9)"), info_line("10", a_members),
                                     info_line("11", a_members + R"(,"big":")" + big + '"'), info_line("12", a_members)});
    {
        const fieldlog::Scope scope{{"k", "v"}, {"long", long_message}};
        a.info("13");
    }
    a.info("14");
    expected.insert(expected.end(), {info_line("13", a_members + R"(,"k":"v","long":")" + long_message + '"'),
                                     info_line("14", a_members)});
    for (const int value : {1, 2}) {  // the second child may get the first one's address
        const auto child = fieldlog::get("svc").with({{"c", value}});
        child.info("15");
        child.info("16");
        const std::string members = R"(,"c":)" + std::to_string(value);
        expected.insert(expected.end(), {info_line("15", members), info_line("16", members)});
    }
    const auto huge = fieldlog::get("svc").with({{"h", huge_bound}});  // more than the inline buffer
    huge.info("17");
    huge.info("18");
    expected.insert(expected.end(), {info_line("17", R"(,"h":")" + huge_bound + '"'),
                                     info_line("18", R"(,"h":")" + huge_bound + '"')});

    const auto lines = sink->lines();
    REQUIRE(lines.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("record " << i + 1);
        CHECK(lines[i] == expected[i]);
    }
    CHECK(jsonl_errors(lines) == "");
}

TEST_CASE("bound fields in two formats: a long logfmt line between JSON ones", "[logger][bound]") {
    auto logfmt = std::make_shared<fieldlog::MemorySink>();
    auto json = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .sinks = {{.target = logfmt, .format = fieldlog::Format::logfmt},
                                   {.target = json, .format = fieldlog::Format::json}},
                         .clock = &fieldlog_test::fixed_clock});
    const auto a = fieldlog::get("svc").with({{"a", 1}});
    const std::string long_value(3000, 'v');
    a.info("1");
    a.info("2", {{"v", long_value}});
    a.info("3");
    const auto json_lines = json->lines();
    REQUIRE(json_lines.size() == 3);
    CHECK(json_lines[0] == info_line("1", R"(,"a":1)"));
    CHECK(json_lines[1] == info_line("2", R"(,"a":1,"v":")" + long_value + '"'));
    CHECK(json_lines[2] == info_line("3", R"(,"a":1)"));
    const auto logfmt_lines = logfmt->lines();
    REQUIRE(logfmt_lines.size() == 3);
    CHECK(logfmt_lines[2] == "ts=2026-11-30T08:38:11.123456789Z level=info logger=svc msg=3 a=1");
}

TEST_CASE("a sink's own level filters what it receives", "[logger]") {
    auto all = std::make_shared<fieldlog::MemorySink>();
    auto errors_only = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .sinks = {{.target = all}, {.target = errors_only, .level = fieldlog::Level::error}}});
    const auto log = fieldlog::get("filter");
    log.info("a");
    log.error("b");
    CHECK(all->lines().size() == 2);
    CHECK(errors_only->lines().size() == 1);
}

TEST_CASE("metrics count records by level and each sink's writes", "[logger][metrics]") {
    auto sink = capture();
    const fieldlog::Metrics before = fieldlog::metrics();
    const auto log = fieldlog::get("metrics");
    log.info("a");
    log.info("b");
    log.error("c");
    const fieldlog::Metrics after = fieldlog::metrics();
    CHECK(after.records_by_level[static_cast<std::size_t>(fieldlog::Level::info)] -
              before.records_by_level[static_cast<std::size_t>(fieldlog::Level::info)] == 2);
    CHECK(after.records_by_level[static_cast<std::size_t>(fieldlog::Level::error)] -
              before.records_by_level[static_cast<std::size_t>(fieldlog::Level::error)] == 1);
    REQUIRE(after.sinks.size() == 1);
    CHECK(after.sinks[0].kind == "memory");
    CHECK(after.sinks[0].counters.records == 3);
    const std::string text = fieldlog::metrics_text();
    CHECK(text.find("fieldlog_sink_records_total{sink=\"memory\",kind=\"memory\",target=\"\"} 3\n") != std::string::npos);
    CHECK(text.find("# TYPE fieldlog_records_total counter\n") != std::string::npos);
}

TEST_CASE("a record too large for the inline buffer is written whole and counted", "[logger]") {
    auto sink = capture();
    const std::string big(100'000, 'x');
    const auto before = fieldlog::metrics().oversized_records;
    fieldlog::get("big").info("big", {{"payload", big}});
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].size() > big.size());
    CHECK(lines[0].find(big) != std::string::npos);
    CHECK(fieldlog::metrics().oversized_records == before + 1);
}

TEST_CASE("4 threads x 100,000 records to one file: each record once, whole, valid", "[logger][file][concurrent]") {
    const fieldlog_test::TempDir dir;
    const std::string path = dir.file("mt.log");
    fieldlog::configure({.level = fieldlog::Level::info,
                         .sinks = {{.target = fieldlog::FileSinkOptions{.path = path}}}});
    constexpr int kThreads = 4;
    constexpr int kRecords = 100'000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t] {
            const auto log = fieldlog::get("mt");
            for (int i = 0; i < kRecords; ++i) log.info("record", {{"thread", t}, {"seq", i}, {"pad", "abcdefghijklmnopqrstuvwxyz"}});
        });
    }
    for (auto& thread : threads) thread.join();
    fieldlog_test::release_sinks();  // closes (and flushes) the file sink

    const auto lines = fieldlog_test::read_lines(path);
    REQUIRE(lines.size() == static_cast<std::size_t>(kThreads * kRecords));
    std::vector<int> next(kThreads, 0);
    std::size_t out_of_order = 0;  // counted, not asserted per line: 400,000 assertions are slow
    for (const std::string& line : lines) {
        const auto t_at = line.find("\"thread\":");
        const auto s_at = line.find("\"seq\":");
        if (t_at == std::string::npos || s_at == std::string::npos) {
            ++out_of_order;
            continue;
        }
        const auto t = static_cast<std::size_t>(std::stoi(line.substr(t_at + 9)));
        const int seq = std::stoi(line.substr(s_at + 6));
        if (t >= next.size() || seq != next[t]) ++out_of_order;  // per-thread order, no loss, no duplicate
        if (t < next.size()) next[t] = seq + 1;
    }
    CHECK(out_of_order == 0);
    CHECK(next == std::vector<int>(kThreads, kRecords));
    CHECK(fieldlog_test::jsonl_file_errors(path) == "");
}

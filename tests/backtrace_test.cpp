// SPDX-License-Identifier: MIT
// Backtraces of scopes (fieldlog::Backtrace): records below the logger's level kept per scope,
// written before a record at the trigger level within it, marked, each with its own time and
// context; discarded when the scope closes without one. Nested scopes, captures re-opened on
// other threads, the bound, the sinks' levels, async mode, the typed observer, the level check after
// the last backtrace closes. A logger's backtrace: records of every thread, the bound, its end
// and replacement, beside a scope's.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "base/thread_id.hpp"
#include "fieldlog/testing/observer.hpp"
#include "support/test_support.hpp"

using fieldlog::Backtrace;
using fieldlog::Level;
using fieldlog::Scope;

namespace {

std::atomic<std::uint32_t> g_tick{0};

/// A clock a nanosecond later at every call from 2026-11-30T08:38:11.000000001Z: a kept
/// record's line shows the time it was logged at, not the time it was written.
fieldlog::Timestamp ticking_clock() noexcept { return fieldlog::Timestamp(1796027891, ++g_tick); }

struct Capture {
    std::shared_ptr<fieldlog::MemorySink> all = std::make_shared<fieldlog::MemorySink>();
    std::shared_ptr<fieldlog::MemorySink> info_and_up = std::make_shared<fieldlog::MemorySink>();
};

/// Loggers at info; one sink takes every level, one info and up; the ticking clock from 0.
Capture configure_at_info(fieldlog::Format format = fieldlog::Format::json, bool async = false) {
    Capture sinks;
    g_tick = 0;
    fieldlog::configure({.level = Level::info,
                         .format = format,
                         .async = {.enabled = async},
                         .sinks = {{.target = sinks.all}, {.target = sinks.info_and_up, .level = Level::info}},
                         .clock = &ticking_clock});
    return sinks;
}

/// The JSON line of a record at the ticking clock's `tick`.
std::string line(unsigned tick, std::string_view level, std::string_view msg, std::string_view members) {
    return R"({"ts":"2026-11-30T08:38:11.)" + fmt::format("{:09}", tick) + R"(Z","level":")" + std::string(level) +
           R"(","logger":"svc","msg":")" + std::string(msg) + '"' + std::string(members) + "}";
}

fieldlog::Metrics counters() { return fieldlog::metrics(); }

}  // namespace

TEST_CASE("an error inside a scope writes what its backtrace kept first, in order, marked, then the error",
          "[backtrace]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc").with({{"service", "checkout"}});
    const auto before = counters();
    {
        const Scope request{{{"request_id", "r-1"}}, Backtrace{.records = 8}};
        log.debug("cache miss", {{"key", "user:7"}});   // tick 1
        log.info("upstream called");                    // tick 2: written now, not kept
        log.debug("retry {} of {}", 1, 3);             // tick 3: a fmt message, formatted when kept
        log.trace("below debug");                      // not kept: below keep_from
        log.error("upstream failed", {{"status", 502}});  // tick 4
    }
    const std::vector<std::string> expected{
        line(2, "info", "upstream called", R"(,"service":"checkout","request_id":"r-1")"),
        line(1, "debug", "cache miss", R"(,"service":"checkout","request_id":"r-1","backtrace":true,"key":"user:7")"),
        line(3, "debug", "retry 1 of 3", R"(,"service":"checkout","request_id":"r-1","backtrace":true)"),
        line(4, "error", "upstream failed", R"(,"service":"checkout","request_id":"r-1","status":502)")};
    CHECK(sinks.all->lines() == expected);
    // The sink at info takes no kept debug record.
    CHECK(sinks.info_and_up->lines() == std::vector<std::string>{expected[0], expected[3]});
    const auto after = counters();
    CHECK(after.backtrace_kept - before.backtrace_kept == 2);
    CHECK(after.backtrace_written - before.backtrace_written == 2);
}

TEST_CASE("a scope that closes without an error discards what it kept, and later errors write nothing of it",
          "[backtrace]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    const auto before = counters();
    {
        const Scope request{{{"request_id", "r-2"}}, Backtrace{.records = 8}};
        log.debug("step", {{"n", 1}});
        log.debug("step", {{"n", 2}});
        log.warn("slow");  // below the trigger: written, and the kept records stay kept
    }
    log.error("unrelated");
    log.debug("outside any backtrace");
    const auto lines = sinks.all->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == line(3, "warn", "slow", R"(,"request_id":"r-2")"));
    CHECK(lines[1] == line(4, "error", "unrelated", ""));
    const auto after = counters();
    CHECK(after.backtrace_kept - before.backtrace_kept == 2);
    CHECK(after.backtrace_written - before.backtrace_written == 0);
}

TEST_CASE("a second error in the scope writes only what was kept since the first", "[backtrace]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    const Scope request{Backtrace{.records = 8}};
    log.debug("a");
    log.error("first");
    log.error("second");
    log.debug("b");
    log.fatal("third");
    const std::vector<std::string> expected{line(1, "debug", "a", R"(,"backtrace":true)"), line(2, "error", "first", ""),
                                            line(3, "error", "second", ""),
                                            line(4, "debug", "b", R"(,"backtrace":true)"), line(5, "fatal", "third", "")};
    CHECK(sinks.all->lines() == expected);
}

TEST_CASE("a backtrace keeps the newest records up to its bound, and the oldest go", "[backtrace][capacity]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    {
        const Scope request{Backtrace{.records = 3}};
        for (int i = 0; i < 6; ++i) log.debug("step", {{"i", i}});  // ticks 1..6
        log.error("failed");                                         // tick 7
    }
    const std::vector<std::string> expected{line(4, "debug", "step", R"(,"backtrace":true,"i":3)"),
                                            line(5, "debug", "step", R"(,"backtrace":true,"i":4)"),
                                            line(6, "debug", "step", R"(,"backtrace":true,"i":5)"),
                                            line(7, "error", "failed", "")};
    CHECK(sinks.all->lines() == expected);
}

namespace backtrace_test {
struct Point {
    int x;
    int y;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Point& p) {
    enc.value(fieldlog::Object{{"x", p.x}, {"y", p.y}});
}
}  // namespace backtrace_test

TEST_CASE("kept records of any size and kind are written whole", "[backtrace][capacity]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    const std::string big(10'000, 'x');  // more than one chunk of kept records holds
    const std::string path(300, 'p');
    {
        const Scope request{Backtrace{.records = 8}};
        log.debug("big", {{"value", big}});
        log.debug("typed", {{"at", backtrace_test::Point{1, -2}}, {"user", fieldlog::Object{{"id", 7}}},
                            {"ids", fieldlog::Array{1, 2}}});
        log.debug("small", {{"path", path}, {"n", 3}});
        log.error("failed");
    }
    const std::vector<std::string> expected{
        line(1, "debug", "big", R"(,"backtrace":true,"value":")" + big + '"'),
        line(2, "debug", "typed", R"(,"backtrace":true,"at":{"x":1,"y":-2},"user":{"id":7},"ids":[1,2])"),
        line(3, "debug", "small", R"(,"backtrace":true,"path":")" + path + R"(","n":3)"),
        line(4, "error", "failed", "")};
    CHECK(sinks.all->lines() == expected);
}

TEST_CASE("a long request keeps its newest records, however many it logged", "[backtrace][capacity]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    const std::string pad(100, 'p');  // records of about 400 bytes: many chunks over the run
    {
        const Scope request{Backtrace{.records = 50}};
        for (int i = 0; i < 1000; ++i) {
            log.debug("step", {{"i", i}, {"pad", pad}});
            if (i == 500) log.debug("typed", {{"at", backtrace_test::Point{i, i}}});  // a block of its own
        }
        log.error("failed");
    }
    const auto lines = sinks.all->lines();
    REQUIRE(lines.size() == 51);
    for (int k = 0; k < 50; ++k) {
        const auto i = static_cast<unsigned>(950 + k);
        CHECK(lines[static_cast<std::size_t>(k)] ==
              line(i + 2, "debug", "step", R"(,"backtrace":true,"i":)" + std::to_string(i) + R"(,"pad":")" + pad + '"'));
    }
    CHECK(lines[50] == line(1002, "error", "failed", ""));
}

TEST_CASE("nested scopes: the innermost backtrace keeps, an error writes the outer's first", "[backtrace][nested]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    {
        const Scope request{{{"request_id", "r-3"}}, Backtrace{.records = 8}};
        log.debug("outer");  // tick 1: the request's
        {
            const Scope plain{{"step", "load"}};  // keeps no backtrace: the request's keeps
            log.debug("in plain");                // tick 2
            const Scope query{{{"query", "q-1"}}, Backtrace{.records = 8, .trigger = Level::warn}};
            log.debug("inner");  // tick 3: the query's
            log.warn("slow");    // tick 4: triggers the query's alone
            log.debug("inner again");  // tick 5
        }  // the query's kept record is discarded
        log.error("failed");  // tick 6: the request's two
    }
    const std::vector<std::string> expected{
        line(3, "debug", "inner", R"(,"request_id":"r-3","step":"load","query":"q-1","backtrace":true)"),
        line(4, "warn", "slow", R"(,"request_id":"r-3","step":"load","query":"q-1")"),
        line(1, "debug", "outer", R"(,"request_id":"r-3","backtrace":true)"),
        line(2, "debug", "in plain", R"(,"request_id":"r-3","step":"load","backtrace":true)"),
        line(6, "error", "failed", R"(,"request_id":"r-3")")};
    CHECK(sinks.all->lines() == expected);
}

TEST_CASE("an error in an inner scope writes every open backtrace, outermost first", "[backtrace][nested]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    const Scope request{{{"request_id", "r-4"}}, Backtrace{.records = 8}};
    log.debug("outer");
    const Scope query{{{"query", "q-2"}}, Backtrace{.records = 8}};
    log.debug("inner");
    log.error("failed");
    const std::vector<std::string> expected{
        line(1, "debug", "outer", R"(,"request_id":"r-4","backtrace":true)"),
        line(2, "debug", "inner", R"(,"request_id":"r-4","query":"q-2","backtrace":true)"),
        line(3, "error", "failed", R"(,"request_id":"r-4","query":"q-2")")};
    CHECK(sinks.all->lines() == expected);
}

TEST_CASE("a kept record keeps the context it was logged in when a scope below closes first", "[backtrace][nested]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    std::optional<Scope> outer;
    outer.emplace(fieldlog::Fields{{"tenant", "acme"}});
    const Scope request{{{"request_id", "r-9"}}, Backtrace{.records = 8}};
    log.debug("under both");  // tick 1
    outer.reset();            // out of order: the request's chain is remade without the tenant
    log.debug("request only");  // tick 2
    log.error("failed");        // tick 3
    const std::vector<std::string> expected{
        line(1, "debug", "under both", R"(,"tenant":"acme","request_id":"r-9","backtrace":true)"),
        line(2, "debug", "request only", R"(,"request_id":"r-9","backtrace":true)"),
        line(3, "error", "failed", R"(,"request_id":"r-9")")};
    CHECK(sinks.all->lines() == expected);
}

TEST_CASE("a capture re-opened on another thread keeps that thread's records with the request's fields",
          "[backtrace][capture][concurrent]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    fieldlog::ScopeContext context;
    std::optional<Scope> request;
    request.emplace(fieldlog::Fields{{"request_id", "r-5"}}, Backtrace{.records = 4, .trigger = Level::warn});
    log.debug("on the origin");  // tick 1: kept here, on the origin thread
    context = Scope::capture();
    CHECK(context.backtrace().records == 4);
    CHECK(context.backtrace().trigger == Level::warn);
    std::thread worker([&log, context] {
        log.debug("before the capture opens");  // no backtrace open on this thread: dropped
        const Scope task{context};
        log.debug("on the worker");  // tick 2
        log.warn("worker warns");    // tick 3: writes the worker's kept record only
    });
    worker.join();
    std::vector<std::string> expected{line(2, "debug", "on the worker", R"(,"request_id":"r-5","backtrace":true)"),
                                      line(3, "warn", "worker warns", R"(,"request_id":"r-5")")};
    CHECK(sinks.all->lines() == expected);
    log.warn("origin warns");  // tick 4: the origin's own kept record
    expected.push_back(line(1, "debug", "on the origin", R"(,"request_id":"r-5","backtrace":true)"));
    expected.push_back(line(4, "warn", "origin warns", R"(,"request_id":"r-5")"));
    CHECK(sinks.all->lines() == expected);
    request.reset();
}

TEST_CASE("records another thread logs are not kept by this thread's backtrace", "[backtrace][concurrent]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    const Scope request{Backtrace{.records = 8}};
    std::thread other([&log] {
        log.debug("elsewhere");  // let through by the level check, dropped: no backtrace open there
        log.error("elsewhere failed");
    });
    other.join();
    log.error("here");
    CHECK(sinks.all->lines() == std::vector<std::string>{line(1, "error", "elsewhere failed", ""), line(2, "error", "here", "")});
}

TEST_CASE("a scope's backtrace lasts while it is open: the level check is back once the last closes", "[backtrace][level]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    CHECK_FALSE(log.enabled(Level::debug));
    {
        const Scope request{Backtrace{.records = 8, .keep_from = Level::trace}};
        CHECK(log.enabled(Level::trace));
        CHECK(log.enabled(Level::debug));
        {
            const Scope inner{Backtrace{.records = 2}};
            CHECK(log.enabled(Level::debug));
        }
        CHECK(log.enabled(Level::trace));
    }
    CHECK_FALSE(log.enabled(Level::debug));
    CHECK_FALSE(log.enabled(Level::trace));

    // A scope moved to another thread and closed there after its own thread exited.
    std::optional<Scope> moved;
    std::thread opener([&moved] {
        moved.emplace(Backtrace{.records = 8});
        fieldlog::get("svc").debug("kept, then discarded with its thread");
    });
    opener.join();
    CHECK_FALSE(log.enabled(Level::debug));  // the thread's exit closed its scopes
    moved.reset();
    CHECK_FALSE(log.enabled(Level::debug));
    log.error("after");
    CHECK(sinks.all->lines() == std::vector<std::string>{line(2, "error", "after", "")});
}

TEST_CASE("a logger at off keeps nothing, and a backtrace of 0 records is no backtrace", "[backtrace]") {
    const Capture sinks = configure_at_info();
    const auto quiet = fieldlog::get("quiet");
    quiet.set_level(Level::off);
    const auto log = fieldlog::get("svc");
    {
        const Scope none{Backtrace{.records = 0}};
        CHECK_FALSE(log.enabled(Level::debug));
        const Scope request{Backtrace{.records = 8}};
        quiet.debug("from a logger at off");
        quiet.error("also off");
        log.error("failed");
    }
    quiet.reset_level();
    CHECK(sinks.all->lines() == std::vector<std::string>{line(1, "error", "failed", "")});
}

TEST_CASE("kept records are written in every format as records of their own", "[backtrace][formats]") {
    {
        const Capture sinks = configure_at_info(fieldlog::Format::logfmt);
        const auto log = fieldlog::get("svc");
        const Scope request{{{"request_id", "r-6"}}, Backtrace{.records = 8}};
        log.debug("cache miss", {{"key", "user 7"}});
        log.error("failed");
        CHECK(sinks.all->lines() ==
              std::vector<std::string>{
                  R"(ts=2026-11-30T08:38:11.000000001Z level=debug logger=svc msg="cache miss" request_id=r-6 backtrace=true key="user 7")",
                  R"(ts=2026-11-30T08:38:11.000000002Z level=error logger=svc msg=failed request_id=r-6)"});
    }
    {
        const Capture sinks = configure_at_info(fieldlog::Format::console);
        const auto log = fieldlog::get("svc");
        const Scope request{Backtrace{.records = 8}};
        log.debug("cache miss");
        log.error("failed");
        const auto lines = sinks.all->lines();
        REQUIRE(lines.size() == 2);
        CHECK(lines[0].find("cache miss") != std::string::npos);
        CHECK(lines[0].find("backtrace=true") != std::string::npos);
        CHECK(lines[1].find("failed") != std::string::npos);
    }
}

TEST_CASE("in async mode the kept records reach the sinks before the error, as logged", "[backtrace][async]") {
    const Capture sinks = configure_at_info(fieldlog::Format::json, true);
    const auto log = fieldlog::get("svc");
    {
        const Scope request{{{"request_id", "r-7"}}, Backtrace{.records = 8}};
        for (int i = 0; i < 3; ++i) log.debug("step", {{"i", i}});  // ticks 1..3
        log.error("failed");                                         // tick 4
    }
    fieldlog::flush();
    const std::vector<std::string> expected{line(1, "debug", "step", R"(,"request_id":"r-7","backtrace":true,"i":0)"),
                                            line(2, "debug", "step", R"(,"request_id":"r-7","backtrace":true,"i":1)"),
                                            line(3, "debug", "step", R"(,"request_id":"r-7","backtrace":true,"i":2)"),
                                            line(4, "error", "failed", R"(,"request_id":"r-7")")};
    CHECK(sinks.all->lines() == expected);
    fieldlog_test::release_sinks();
}

TEST_CASE("the typed observer sees kept records with their marker and the scope's fields", "[backtrace][observer]") {
    auto observer = std::make_shared<fieldlog::testing::Observer>();
    fieldlog::configure({.level = Level::info, .sinks = {{.target = observer}}, .clock = &fieldlog_test::fixed_clock});
    const auto log = fieldlog::get("db");
    {
        const Scope request{{{"request_id", "r-8"}}, Backtrace{.records = 8}};
        log.debug("query", {{"rows", 3}});
        log.error("commit failed");
    }
    const auto records = observer->records();
    REQUIRE(records.size() == 2);
    CHECK(records[0].level == Level::debug);
    CHECK(records[0].field("backtrace")->as_bool());
    CHECK(*records[0].field("rows") == 3);
    CHECK(*records[0].field("request_id") == "r-8");
    CHECK(records.filter_level(Level::error).filter_field("request_id", "r-8").size() == 1);
    CHECK_FALSE(records[1].has("backtrace"));
    fieldlog_test::release_sinks();
}

namespace {

long kernel_thread_id() { return fieldlog::detail::kernel_thread_id(); }

/// A logger's backtrace lasts as long as the process: each test ends the one it began.
struct LoggerBacktrace {
    fieldlog::Logger log;
    LoggerBacktrace(std::string_view name, const Backtrace& backtrace) : log(fieldlog::get(name)) {
        log.keep_backtrace(backtrace);
    }
    LoggerBacktrace(const LoggerBacktrace&) = delete;
    LoggerBacktrace& operator=(const LoggerBacktrace&) = delete;
    ~LoggerBacktrace() { log.keep_backtrace(Backtrace{.records = 0}); }
};

}  // namespace

TEST_CASE("a logger's backtrace keeps its records from every thread and writes them before its next error",
          "[backtrace][logger][concurrent]") {
    const Capture sinks = configure_at_info();
    const LoggerBacktrace db{"svc", Backtrace{.records = 8}};
    const auto other_logger = fieldlog::get("other");
    const auto before = counters();
    std::thread([&db] { db.log.debug("pool empty", {{"waiters", 3}}); }).join();  // tick 1
    other_logger.debug("not this logger's");                                      // let through, dropped
    db.log.with({{"table", "orders"}}).debug("slow query");                      // tick 2: a child's
    db.log.info("connected");                                                    // tick 3: written now
    other_logger.error("another logger's error");                                // tick 4: writes nothing kept
    db.log.error("query failed");                                                // tick 5
    db.log.error("again");                                                       // tick 6: nothing left
    CHECK(sinks.all->lines() ==
          std::vector<std::string>{
              line(3, "info", "connected", ""),
              R"({"ts":"2026-11-30T08:38:11.000000004Z","level":"error","logger":"other","msg":"another logger's error"})",
              line(1, "debug", "pool empty", R"(,"backtrace":true,"waiters":3)"),
              line(2, "debug", "slow query", R"(,"table":"orders","backtrace":true)"),
              line(5, "error", "query failed", ""), line(6, "error", "again", "")});
    const auto after = counters();
    CHECK(after.backtrace_kept - before.backtrace_kept == 2);
    CHECK(after.backtrace_written - before.backtrace_written == 2);
}

TEST_CASE("a logger's backtrace keeps its newest records, and ending it drops them and closes the level check",
          "[backtrace][logger][level]") {
    const Capture sinks = configure_at_info();
    const auto log = fieldlog::get("svc");
    {
        const LoggerBacktrace db{"svc", Backtrace{.records = 2, .keep_from = Level::trace, .trigger = Level::warn}};
        CHECK(log.enabled(Level::trace));
        for (int i = 0; i < 5; ++i) log.trace("step", {{"i", i}});  // ticks 1 to 5: 4 and 5 stay
        log.warn("slow");                                             // tick 6
        log.debug("kept, then dropped by the end of the backtrace");  // tick 7
    }
    CHECK_FALSE(log.enabled(Level::debug));
    CHECK_FALSE(log.enabled(Level::trace));
    log.error("failed");  // tick 8
    CHECK(sinks.all->lines() == std::vector<std::string>{line(4, "trace", "step", R"(,"backtrace":true,"i":3)"),
                                                         line(5, "trace", "step", R"(,"backtrace":true,"i":4)"),
                                                         line(6, "warn", "slow", ""), line(8, "error", "failed", "")});
}

TEST_CASE("a logger's new backtrace replaces its old one, and what the old one kept is dropped", "[backtrace][logger]") {
    const Capture sinks = configure_at_info();
    const LoggerBacktrace db{"svc", Backtrace{.records = 8}};
    db.log.debug("kept by the first");  // tick 1
    db.log.keep_backtrace(Backtrace{.records = 8, .keep_from = Level::trace});
    CHECK(db.log.enabled(Level::trace));
    db.log.trace("kept by the second");  // tick 2
    db.log.error("failed");              // tick 3
    CHECK(sinks.all->lines() == std::vector<std::string>{line(2, "trace", "kept by the second", R"(,"backtrace":true)"),
                                                         line(3, "error", "failed", "")});
}

TEST_CASE("a record a scope's backtrace keeps is not also kept by its logger's", "[backtrace][logger][nested]") {
    const Capture sinks = configure_at_info();
    const LoggerBacktrace db{"svc", Backtrace{.records = 8}};
    db.log.debug("before the request");  // tick 1: the logger's
    {
        const Scope request{{{"request_id", "r-1"}}, Backtrace{.records = 8}};
        db.log.debug("in the request");  // tick 2: the scope's
        db.log.error("failed");          // tick 3: the logger's, then the scope's
    }
    CHECK(sinks.all->lines() ==
          std::vector<std::string>{line(1, "debug", "before the request", R"(,"backtrace":true)"),
                                   line(2, "debug", "in the request", R"(,"request_id":"r-1","backtrace":true)"),
                                   line(3, "error", "failed", R"(,"request_id":"r-1")")});
}

TEST_CASE("a logger's kept record carries the scope it was logged in and the thread that logged it",
          "[backtrace][logger][concurrent]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = Level::info, .tid = true, .sinks = {{.target = sink}}});
    const LoggerBacktrace db{"svc", Backtrace{.records = 8}};
    long logged_by = 0;
    std::thread([&] {
        logged_by = kernel_thread_id();
        const Scope request{{"request_id", "r-2"}};
        db.log.debug("kept on another thread");
    }).join();  // the scope is closed before the record is written
    db.log.error("failed");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find(R"("msg":"kept on another thread","tid":)" + std::to_string(logged_by) +
                        R"(,"request_id":"r-2","backtrace":true})") != std::string::npos);
    CHECK(lines[1].find(R"("msg":"failed","tid":)" + std::to_string(kernel_thread_id()) + "}") != std::string::npos);
}

TEST_CASE("in async mode a logger's kept records reach the sinks before its error", "[backtrace][logger][async]") {
    const Capture sinks = configure_at_info(fieldlog::Format::json, true);
    const LoggerBacktrace db{"svc", Backtrace{.records = 8}};
    db.log.debug("kept", {{"user", "u-1"}});
    db.log.error("failed");
    fieldlog::flush();
    CHECK(sinks.all->lines() == std::vector<std::string>{line(1, "debug", "kept", R"(,"backtrace":true,"user":"u-1")"),
                                                         line(2, "error", "failed", "")});
}

namespace {

/// configure_at_info's sinks and clock (restarted), and `backtraces`.
void configure_at_info(const Capture& sinks, std::map<std::string, Backtrace, std::less<>> backtraces) {
    g_tick = 0;
    fieldlog::configure({.level = Level::info,
                         .backtraces = std::move(backtraces),
                         .sinks = {{.target = sinks.all}, {.target = sinks.info_and_up, .level = Level::info}},
                         .clock = &ticking_clock});
}

}  // namespace

TEST_CASE("a configuration's backtraces: given, kept across an unchanged configure, ended when no longer named",
          "[backtrace][logger][config]") {
    const Capture sinks;
    const auto log = fieldlog::get("svc");
    configure_at_info(sinks, {{"svc", Backtrace{.records = 8}}});
    CHECK(log.enabled(Level::debug));
    log.debug("kept across the next configure");                   // tick 1
    configure_at_info(sinks, {{"svc", Backtrace{.records = 8}}});  // the same entry: nothing dropped
    log.error("failed");                                            // tick 1 again: the clock restarted
    configure_at_info(sinks, {{"svc", Backtrace{.records = 8, .keep_from = Level::trace}}});  // a new one
    log.trace("kept by the new entry");                             // tick 1
    configure_at_info(sinks, {});  // no longer named: ended, what it kept dropped
    CHECK_FALSE(log.enabled(Level::trace));
    CHECK_FALSE(log.enabled(Level::debug));
    log.error("after");  // tick 1
    CHECK(sinks.all->lines() ==
          std::vector<std::string>{line(1, "debug", "kept across the next configure", R"(,"backtrace":true)"),
                                   line(1, "error", "failed", ""), line(1, "error", "after", "")});
}

TEST_CASE("a configuration leaves a backtrace set in code alone unless it names that logger",
          "[backtrace][logger][config]") {
    const Capture sinks;
    configure_at_info(sinks, {{"other", Backtrace{.records = 4}}});
    const LoggerBacktrace db{"svc", Backtrace{.records = 8}};
    const auto other = fieldlog::get("other");
    db.log.debug("kept by the code's backtrace");       // tick 1
    other.debug("kept, then dropped by the configure");  // tick 2
    configure_at_info(sinks, {});                        // ends "other"'s, not "svc"'s
    other.error("other failed");                         // tick 1: nothing kept to write
    db.log.error("failed");                              // tick 2
    db.log.debug("kept again");                          // tick 3
    configure_at_info(sinks, {{"svc", Backtrace{.records = 0}}});  // named with 0 records: ended
    CHECK_FALSE(db.log.enabled(Level::debug));
    configure_at_info(sinks, {});
    CHECK(sinks.all->lines() ==
          std::vector<std::string>{
              R"({"ts":"2026-11-30T08:38:11.000000001Z","level":"error","logger":"other","msg":"other failed"})",
              line(1, "debug", "kept by the code's backtrace", R"(,"backtrace":true)"), line(2, "error", "failed", "")});
}

TEST_CASE("a configuration's backtrace that keeps no level is refused, and the running one stays",
          "[backtrace][logger][config]") {
    const Capture sinks;
    configure_at_info(sinks, {{"svc", Backtrace{.records = 8}}});
    const auto refused = [&](std::map<std::string, Backtrace, std::less<>> backtraces) {
        try {
            configure_at_info(sinks, std::move(backtraces));
        } catch (const fieldlog::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(refused({{"svc", Backtrace{.records = 8, .keep_from = Level::error, .trigger = Level::error}}}) ==
          "backtraces \"svc\": keep_from must be below trigger, and trigger a level (records = 0 keeps none)");
    CHECK(refused({{"db.*", Backtrace{}}}) ==
          "backtraces \"db.*\": not a logger name (like \"http\" or \"db.pool\"; \"\" is the root logger)");
    CHECK(fieldlog::get("svc").enabled(Level::debug));  // the running configuration's backtrace
    configure_at_info(sinks, {});
    CHECK_FALSE(fieldlog::get("svc").enabled(Level::debug));
}

TEST_CASE("backtraces in TOML, and what is refused", "[backtrace][config]") {
    const fieldlog::Config config = fieldlog::Config::parse(R"(
[backtraces.http]
records = 64
keep_from = "trace"
trigger = "warn"
[backtraces.db.pool]
records = 16
[backtraces.""]
)");
    CHECK(config.backtraces ==
          std::map<std::string, Backtrace, std::less<>>{
              {"http", Backtrace{.records = 64, .keep_from = Level::trace, .trigger = Level::warn}},
              {"db.pool", Backtrace{.records = 16}},
              {"", Backtrace{}}});
    const auto error_of = [](std::string_view toml) {
        try {
            (void)fieldlog::Config::parse(toml, "f.toml");
        } catch (const fieldlog::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of("[backtraces.http]\nrecord = 3\n") ==
          "f.toml:2: backtraces.http.record: unknown key for a backtrace entry (did you mean \"records\"?)");
    CHECK(error_of("[backtraces.http]\nkeep_from = \"error\"\n") ==
          "f.toml:1: backtraces.http: keeps no level: keep_from must be below trigger, and trigger a level");
    CHECK(error_of("[backtraces.http]\ntrigger = \"loud\"\n") ==
          "f.toml:2: backtraces.http.trigger: expected trace, debug, info, warn, error, fatal or off, got \"loud\"");
    CHECK(error_of("[backtraces.http]\nrecords = -1\n").find("backtraces.http.records") != std::string::npos);
    CHECK(error_of("[backtraces]\nhttp = 3\n") ==
          "f.toml:2: backtraces.http: expected a table of records, keep_from and trigger, got 3");
    CHECK(error_of("[backtraces.\"db.*\"]\nrecords = 3\n") ==
          "f.toml:1: backtraces.db.*: is not a logger name (like \"http\" or \"db.pool\"; \"\" is the root logger)");
}

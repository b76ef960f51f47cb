// SPDX-License-Identifier: MIT
// A scope's own level: while a Scope opened with a level is the innermost with one on its
// thread, every logger's records there are judged against it, lower or higher than the
// loggers' levels; other threads, and the thread after the scope closed, keep the loggers'
// levels. Captures carry the level to the thread that re-opens them; async mode decides at the
// call, as sync mode does.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::Level;
using fieldlog::Scope;

namespace {

/// One MemorySink at every level, loggers at info: what the sink holds is what the loggers' and
/// the scopes' levels let through.
std::shared_ptr<fieldlog::MemorySink> info_sink(bool async = false) {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(fieldlog::Config{.level = Level::info,
                                         .async = fieldlog::AsyncConfig{.enabled = async},
                                         .sinks = {fieldlog::SinkConfig{.target = sink}},
                                         .clock = &fieldlog_test::fixed_clock});
    return sink;
}

std::size_t count_with(const std::vector<std::string>& lines, const std::string& part) {
    std::size_t n = 0;
    for (const std::string& line : lines) n += line.find(part) != std::string::npos ? 1 : 0;
    return n;
}

}  // namespace

TEST_CASE("a scope with a lower level lets every logger's records at that level through, only inside it",
          "[scope_level]") {
    const auto sink = info_sink();
    const fieldlog::Logger db = fieldlog::get("db");
    const fieldlog::Logger http = fieldlog::get("http");
    db.debug("before");
    {
        const Scope debug{{{"request_id", "r1"}}, Level::debug};
        CHECK(db.enabled(Level::debug));
        db.debug("inside", {{"n", 1}});
        http.debug("inside", {{"n", 2}});
        http.trace("below the scope's level");
    }
    db.debug("after");
    fieldlog::flush();
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(count_with(lines, R"("level":"debug")") == 2);
    CHECK(count_with(lines, R"("request_id":"r1")") == 2);
    CHECK(db.level() == Level::info);  // no logger's level changed
    CHECK_FALSE(db.enabled(Level::debug));
    fieldlog_test::release_sinks();
}

TEST_CASE("a scope with a higher level holds back records below it, and the innermost level wins",
          "[scope_level]") {
    const auto sink = info_sink();
    const fieldlog::Logger log = fieldlog::get("svc");
    {
        const Scope quiet{Level::warn};
        log.info("held back");
        log.warn("written", {{"n", 1}});
        {
            const Scope loud{Level::debug};
            log.debug("written", {{"n", 2}});
        }
        log.debug("held back");
        log.info("held back");
    }
    log.info("written", {{"n", 3}});
    fieldlog::flush();
    const std::vector<std::string> lines = sink->lines();
    CHECK(lines.size() == 3);
    CHECK(count_with(lines, "held back") == 0);
    fieldlog_test::release_sinks();
}

TEST_CASE("one request at debug among a thousand at info: the counts are exact, in sync and async mode",
          "[scope_level][concurrent]") {
    const bool async = GENERATE(false, true);
    INFO((async ? "async" : "sync"));
    const auto sink = info_sink(async);
    constexpr int kRequests = 1001;
    constexpr int kDebugRequest = 500;
    constexpr int kThreads = 4;
    std::atomic<int> next{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
        workers.emplace_back([&next] {
            const fieldlog::Logger log = fieldlog::get("http");
            const fieldlog::Logger db = fieldlog::get("db");
            for (int id = next++; id < kRequests; id = next++) {
                // The application's choice: here, one request id asks for debug.
                const Scope request = id == kDebugRequest ? Scope{{{"request_id", id}}, Level::debug}
                                                          : Scope{{"request_id", id}};
                db.debug("query", {{"rows", 3}});
                log.info("done");
            }
        });
    }
    for (std::thread& worker : workers) worker.join();
    fieldlog::flush();
    const std::vector<std::string> lines = sink->lines();
    CHECK(count_with(lines, R"("level":"info")") == kRequests);
    CHECK(count_with(lines, R"("level":"debug")") == 1);
    CHECK(count_with(lines, R"("msg":"query","request_id":500,)") == 1);
    CHECK(lines.size() == kRequests + 1);
    fieldlog_test::release_sinks();
}

TEST_CASE("a capture carries the scope's level to the thread that re-opens it", "[scope_level][concurrent]") {
    const auto sink = info_sink();
    fieldlog::ScopeContext captured;
    {
        const Scope debug{{{"job", 7}}, Level::debug};
        captured = Scope::capture();
    }
    CHECK(captured.level() == Level::debug);
    std::thread([&captured] {
        const fieldlog::Logger log = fieldlog::get("worker");
        log.debug("before re-opening");
        {
            const Scope reopened{captured};
            log.debug("in the captured scope");
        }
        log.debug("after");
    }).join();
    fieldlog::flush();
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find(R"("msg":"in the captured scope","job":7)") != std::string::npos);
    fieldlog_test::release_sinks();
}

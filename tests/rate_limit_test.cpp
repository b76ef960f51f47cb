// SPDX-License-Identifier: MIT
// Rate limits: the per-site macros (EVERY_N, EVERY, FIRST_N) and the per-logger sampler, each
// exact in what it writes, in the "suppressed" count the next written record carries, and in
// the per-logger metric; off unless asked for; counted only for enabled calls.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::Config;
using fieldlog::SinkConfig;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<fieldlog::MemorySink> capture(Config config = {}) {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    config.level = fieldlog::Level::trace;
    config.sinks = {SinkConfig{.target = sink}};
    config.clock = &fieldlog_test::fixed_clock;
    fieldlog::configure(config);
    return sink;
}

std::uint64_t suppressed_of(std::string_view logger) {
    for (const fieldlog::LoggerMetrics& m : fieldlog::metrics().loggers) {
        if (m.name == logger) return m.suppressed;
    }
    return 0;
}

/// What follows `"msg":"<msg>"` in `line`, up to the closing brace.
std::string after_message(const std::string& line) {
    const std::size_t at = line.find(R"("msg":)");
    const std::size_t end = line.find('"', line.find('"', at + 6) + 1);
    return line.substr(end + 1, line.size() - end - 2);
}

}  // namespace

TEST_CASE("EVERY_N writes the 1st of every n calls, the next carries what it kept back", "[rate_limit]") {
    const auto sink = capture();
    const fieldlog::Logger log = fieldlog::get("rl.every_n");
    for (int i = 0; i < 7; ++i) FIELDLOG_INFO_EVERY_N(log, 3, "tick", {{"i", i}});
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 3);
    CHECK(after_message(lines[0]) == R"(,"i":0)");
    CHECK(after_message(lines[1]) == R"(,"suppressed":2,"i":3)");
    CHECK(after_message(lines[2]) == R"(,"suppressed":2,"i":6)");
    CHECK(suppressed_of("rl.every_n") == 4);
    fieldlog_test::release_sinks();
}

TEST_CASE("FIRST_N writes the first n calls and then none, the metric counts the rest", "[rate_limit]") {
    const auto sink = capture();
    const fieldlog::Logger log = fieldlog::get("rl.first_n");
    for (int i = 0; i < 10; ++i) FIELDLOG_WARN_FIRST_N(log, 4, "bad row {}", i);
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[3].find(R"("msg":"bad row 3")") != std::string::npos);
    CHECK(suppressed_of("rl.first_n") == 6);
    fieldlog_test::release_sinks();
}

TEST_CASE("EVERY writes at most one call per period", "[rate_limit]") {
    const auto sink = capture();
    const fieldlog::Logger log = fieldlog::get("rl.every");
    const auto log_once = [&] { FIELDLOG_ERROR_EVERY(log, 200ms, "disk almost full"); };
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) log_once();
    // The loop above may straddle no period boundary only if it ran within 200 ms: it did, or
    // the figures below cannot be asserted.
    const bool within_period = std::chrono::steady_clock::now() - start < 200ms;
    std::this_thread::sleep_for(210ms);  // the period itself is the subject: a real wait
    log_once();
    const std::vector<std::string> lines = sink->lines();
    if (within_period) {
        REQUIRE(lines.size() == 2);
        CHECK(after_message(lines[0]).empty());
        CHECK(after_message(lines[1]) == R"(,"suppressed":4)");
        CHECK(suppressed_of("rl.every") == 4);
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("a rate-limited site counts only calls whose level is enabled", "[rate_limit]") {
    const auto sink = capture();
    const fieldlog::Logger log = fieldlog::get("rl.gated");
    log.set_level(fieldlog::Level::info);
    for (int i = 0; i < 5; ++i) {
        FIELDLOG_DEBUG_EVERY_N(log, 2, "hidden");  // disabled: never counted
        FIELDLOG_INFO_EVERY_N(log, 2, "shown");
    }
    log.reset_level();
    CHECK(sink->lines().size() == 3);
    CHECK(suppressed_of("rl.gated") == 2);
    fieldlog_test::release_sinks();
}

TEST_CASE("rate-limited sites keep exact counts across threads", "[rate_limit][concurrent]") {
    const auto sink = capture();
    const fieldlog::Logger log = fieldlog::get("rl.threads");
    constexpr int kThreads = 4;
    constexpr int kCalls = 1000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < kCalls; ++i) FIELDLOG_INFO_EVERY_N(log, 10, "tick");
        });
    }
    for (std::thread& thread : threads) thread.join();
    const std::vector<std::string> lines = sink->lines();
    CHECK(lines.size() == kThreads * kCalls / 10);
    CHECK(suppressed_of("rl.threads") == kThreads * kCalls * 9 / 10);
    std::uint64_t carried = 0;
    for (const std::string& line : lines) {
        if (line.find(R"("suppressed":9)") != std::string::npos) carried += 9;
    }
    CHECK(carried == (lines.size() - 1) * 9);  // every written record but the first carries 9
    fieldlog_test::release_sinks();
}

TEST_CASE("the sampler: first N per interval and message, then every M-th, per logger", "[rate_limit][sampling]") {
    Config config;
    config.sampling["rl.sampled"] = fieldlog::SamplingConfig{.first = 3, .thereafter = 5, .interval = 1h};
    const auto sink = capture(config);
    const fieldlog::Logger sampled = fieldlog::get("rl.sampled.child");  // covered by its parent's entry
    const fieldlog::Logger free = fieldlog::get("rl.free");
    for (int i = 0; i < 20; ++i) {
        sampled.info("hot", {{"i", i}});
        free.info("hot");
    }
    sampled.info("other message");  // its own counter
    std::vector<std::string> kept;
    for (const std::string& line : sink->lines()) {
        if (line.find(R"("logger":"rl.sampled.child")") != std::string::npos) kept.push_back(after_message(line));
    }
    // Calls 1-3 pass, then the 5th after them: 8, 13, 18 (1-based).
    const std::vector<std::string> expected{R"(,"i":0)",  R"(,"i":1)", R"(,"i":2)", R"(,"suppressed":4,"i":7)",
                                            R"(,"suppressed":4,"i":12)", R"(,"suppressed":4,"i":17)", ""};
    CHECK(kept == expected);
    CHECK(suppressed_of("rl.sampled.child") == 14);
    CHECK(suppressed_of("rl.free") == 0);
    std::size_t free_lines = 0;
    for (const std::string& line : sink->lines()) free_lines += line.find(R"("logger":"rl.free")") != std::string::npos;
    CHECK(free_lines == 20);
    fieldlog_test::release_sinks();
}

TEST_CASE("a new sampler interval starts the count again", "[rate_limit][sampling]") {
    Config config;
    config.sampling["*"] = fieldlog::SamplingConfig{.first = 1, .thereafter = 0, .interval = 100ms};
    const auto sink = capture(config);
    const fieldlog::Logger log = fieldlog::get("rl.interval");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i) log.info("m");
    const bool within_interval = std::chrono::steady_clock::now() - start < 100ms;
    std::this_thread::sleep_for(110ms);  // the interval itself is the subject: a real wait
    log.info("m");
    if (within_interval) {
        const std::vector<std::string> lines = sink->lines();
        REQUIRE(lines.size() == 2);
        CHECK(after_message(lines[1]) == R"(,"suppressed":2)");
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("a rate-limited site and the sampler add up in one suppressed count", "[rate_limit][sampling]") {
    Config config;
    config.sampling["rl.both"] = fieldlog::SamplingConfig{.first = 1, .thereafter = 2, .interval = 1h};
    const auto sink = capture(config);
    const fieldlog::Logger log = fieldlog::get("rl.both");
    for (int i = 0; i < 9; ++i) FIELDLOG_INFO_EVERY_N(log, 3, "m");  // the site passes calls 0, 3, 6
    // The sampler sees those 3: it writes the 1st, keeps the 2nd, writes the 3rd.
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(after_message(lines[1]) == R"(,"suppressed":5)");  // calls 1-5: 4 kept by the site, 1 by the sampler
    CHECK(suppressed_of("rl.both") == 7);
    fieldlog_test::release_sinks();
}

TEST_CASE("sampling in TOML, and what is refused", "[rate_limit][sampling][config]") {
    const Config config = Config::parse(R"(
[sampling.http]
first = 10
thereafter = 50
interval = "2s"
[sampling.db.pool]
first = 1
[sampling."*"]
thereafter = 0
[sampling.quiet]
)");
    REQUIRE(config.sampling.size() == 4);
    CHECK(config.sampling.at("quiet") == fieldlog::SamplingConfig{});  // an empty entry: the defaults
    CHECK(config.sampling.at("http") == fieldlog::SamplingConfig{.first = 10, .thereafter = 50, .interval = 2s});
    CHECK(config.sampling.at("db.pool") == fieldlog::SamplingConfig{.first = 1, .thereafter = 100, .interval = 1s});
    CHECK(config.sampling.at("*").thereafter == 0);

    const auto error_of = [](std::string_view toml) {
        try {
            (void)Config::parse(toml, "f.toml");
        } catch (const fieldlog::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of("[sampling.http]\nfirts = 3\n") == "f.toml:2: sampling.http.firts: unknown key for a sampling entry (did you mean \"first\"?)");
    CHECK(error_of("[sampling.http]\ninterval = \"0s\"\n") == "f.toml:2: sampling.http.interval: expected a positive duration like \"1s\", got \"0s\"");
    CHECK(error_of("[sampling.http]\nfirst = -1\n").find("sampling.http.first") != std::string::npos);
    CHECK(error_of("[sampling]\nhttp = 3\n") == "f.toml:2: sampling.http: expected a table of first, thereafter and interval, got 3");
}

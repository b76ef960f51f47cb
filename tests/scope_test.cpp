// SPDX-License-Identifier: MIT
// fieldlog::Scope: fields attached to a thread's records while the scope lives; nesting,
// moves, out-of-order closing, values and field counts of any size (no capacity to run into),
// capture and re-opening on another thread (run this under TSan too), and the corner cases of
// scopes opened or closed from inside a logging call.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using namespace std::chrono_literals;
using fieldlog::Format;
using fieldlog::Scope;
using fieldlog_test::capture;
using fieldlog_test::info_line;
using fieldlog_test::jsonl_errors;

namespace scope_test {

/// Opens a scope while it is being written, i.e. from inside a logging call.
struct OpensScope {};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const OpensScope&) {
    const Scope inner{{"inner", 1}};
    enc.value(1);
}

/// Closes a scope while it is being written.
struct ClosesScope {
    std::optional<Scope>* scope;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const ClosesScope& c) {
    c.scope->reset();
    enc.value(1);
}

struct Throws {};

}  // namespace scope_test

template <>
struct fmt::formatter<scope_test::Throws> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename Context>
    auto format(const scope_test::Throws&, [[maybe_unused]] Context& ctx) const -> decltype(ctx.out()) {
        throw std::runtime_error("no");
    }
};

namespace {

using namespace scope_test;

std::uint64_t dropped() { return fieldlog::metrics().context_fields_dropped; }

}  // namespace

TEST_CASE("scope fields come after bound fields and before call fields, until the scope closes", "[scope]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc").with({{"service", "checkout"}});
    {
        const Scope request{{"request_id", "r-1"}, {"user", 7}};
        log.info("in", {{"status", 200}});
    }
    log.info("out");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == info_line("in", R"(,"service":"checkout","request_id":"r-1","user":7,"status":200)"));
    CHECK(lines[1] == info_line("out", R"(,"service":"checkout")"));
}

TEST_CASE("scopes nest, inner fields after outer, in every format", "[scope]") {
    struct Case {
        Format format;
        std::string both;
        std::string outer;
    };
    const Case cases[] = {
        {Format::json, R"(,"a":1,"b":"two words"})", R"(,"a":1})"},
        {Format::logfmt, R"( a=1 b="two words")", " a=1"},
        {Format::console, R"( a=1 b="two words")", " a=1"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(to_string(c.format)) {
            auto sink = capture(c.format);
            const auto log = fieldlog::get("svc");
            {
                const Scope outer{{"a", 1}};
                {
                    const Scope inner{{"b", "two words"}};
                    log.info("m");
                }
                log.info("m");
            }
            log.info("m");
            const auto lines = sink->lines();
            REQUIRE(lines.size() == 3);
            CHECK(lines[0].ends_with(c.both));
            CHECK(lines[1].ends_with(c.outer));
            CHECK(lines[2].find("a=") == std::string::npos);
            CHECK(lines[2].find("\"a\"") == std::string::npos);
        }
    }
}

TEST_CASE("the most specific value of a repeated key wins: call over scope over bound", "[scope][duplicates]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc").with({{"k", "bound"}, {"b", 1}});
    {
        const Scope outer{{"k", "outer"}, {"o", 1}};
        log.info("1");
        {
            const Scope inner{{"k", "inner"}};
            log.info("2");
            log.info("3", {{"k", "call"}});
        }
        log.info("4");
    }
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == info_line("1", R"(,"b":1,"k":"outer","o":1)"));
    CHECK(lines[1] == info_line("2", R"(,"b":1,"o":1,"k":"inner")"));
    CHECK(lines[2] == info_line("3", R"(,"b":1,"o":1,"k":"call")"));
    CHECK(lines[3] == info_line("4", R"(,"b":1,"k":"outer","o":1)"));
    CHECK(jsonl_errors(lines) == "");
}

TEST_CASE("a moved-from scope is inert and the new owner closes it once", "[scope]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc");
    std::optional<Scope> first;
    first.emplace(fieldlog::Fields{{"k", 1}});
    {
        const Scope second(std::move(*first));
        log.info("moved");
        first.reset();  // destroying the moved-from scope closes nothing
        log.info("still");
    }
    log.info("closed");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == info_line("moved", R"(,"k":1)"));
    CHECK(lines[1] == info_line("still", R"(,"k":1)"));
    CHECK(lines[2] == info_line("closed", ""));
}

TEST_CASE("scopes may close out of order", "[scope]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc");
    std::optional<Scope> outer;
    outer.emplace(fieldlog::Fields{{"o", 1}, {"shared", "outer"}});
    {
        const Scope inner{{"i", 2}};
        outer.reset();
        log.info("a");
        const Scope again{{"shared", "again"}};
        log.info("b");
    }
    log.info("c");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == info_line("a", R"(,"i":2)"));
    CHECK(lines[1] == info_line("b", R"(,"i":2,"shared":"again")"));
    CHECK(lines[2] == info_line("c", ""));
}

TEST_CASE("scope values of any size, any number of fields and any depth are written whole", "[scope][capacity]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc");
    const std::uint64_t before = dropped();
    SECTION("a value larger than a whole record buffer") {
        const std::string agent(40 * 1024, 'a');  // once cut at 512 bytes for all open scopes
        {
            const Scope outer{{"k0", std::string(600, 'v')}};
            const Scope big{{"user_agent", agent}, {"after", 1}};
            log.info("m");
        }
        const auto lines = sink->lines();
        REQUIRE(lines.size() == 1);
        CHECK(lines[0] == info_line("m", ",\"k0\":\"" + std::string(600, 'v') + "\",\"user_agent\":\"" + agent +
                                             "\",\"after\":1"));
        CHECK(jsonl_errors(lines) == "");
    }
    SECTION("many fields") {
        std::vector<std::string> keys;
        for (int i = 0; i < 100; ++i) keys.push_back(fmt::format("f{}", i));
        std::vector<fieldlog::Field> fields;
        std::string expected;
        for (int i = 0; i < 100; ++i) {
            fields.push_back({keys[static_cast<std::size_t>(i)], i});
            expected += fmt::format(",\"f{}\":{}", i, i);
        }
        {
            const Scope many{std::span<const fieldlog::Field>(fields)};
            log.info("m");
        }
        REQUIRE(sink->lines().size() == 1);
        CHECK(sink->lines()[0] == info_line("m", expected));
    }
    SECTION("depth") {
        std::vector<std::optional<Scope>> scopes(100);
        std::string expected;
        for (std::size_t i = 0; i < scopes.size(); ++i) {
            const std::string key = fmt::format("d{}", i);  // (g++ 12 -Wrestrict misfires on "d" + to_string)
            scopes[i].emplace(fieldlog::Fields{{key, 1}});
            expected += fmt::format(",\"d{}\":1", i);
        }
        log.info("m");
        while (!scopes.empty()) scopes.pop_back();  // innermost first
        log.info("n");
        const auto lines = sink->lines();
        REQUIRE(lines.size() == 2);
        CHECK(lines[0] == info_line("m", expected));
        CHECK(lines[1] == info_line("n", ""));
    }
    CHECK(dropped() == before);
}

TEST_CASE("a captured scope re-opens on another thread, inside that thread's own scopes", "[scope][capture][concurrent]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc");
    fieldlog::ScopeContext context;
    CHECK(context.empty());
    {
        const Scope request{{"request_id", "r-2"}, {"user", 7}};
        context = Scope::capture();
    }
    CHECK_FALSE(context.empty());
    std::thread worker([&log, context] {
        log.info("before");
        const Scope job{{"job", 1}, {"user", 0}};
        {
            const Scope request{context};
            log.info("during");
        }
        log.info("after");
    });
    worker.join();
    log.info("origin");  // the capturing thread's scope has closed
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == info_line("before", ""));
    CHECK(lines[1] == info_line("during", R"(,"job":1,"request_id":"r-2","user":7)"));
    CHECK(lines[2] == info_line("after", R"(,"job":1,"user":0)"));
    CHECK(lines[3] == info_line("origin", ""));
    const Scope nothing{fieldlog::ScopeContext{}};
    log.info("empty");
    CHECK(sink->lines().back() == info_line("empty", ""));
}

TEST_CASE("captured scopes handed through a thread pool tag every record with their origin", "[scope][capture][threads][concurrent]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc");
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::function<void()>> tasks;
    bool done = false;
    auto work = [&] {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock lock(mutex);
                ready.wait(lock, [&] { return done || !tasks.empty(); });
                if (tasks.empty()) return;
                task = std::move(tasks.front());
                tasks.pop_front();
            }
            task();
        }
    };
    constexpr int kProducers = 4;
    constexpr int kTasks = 300;
    std::vector<std::thread> workers;
    for (int i = 0; i < 2; ++i) workers.emplace_back(work);
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
        producers.emplace_back([&, p] {
            for (int t = 0; t < kTasks; ++t) {
                const Scope origin{{"producer", p}, {"task", t}};
                auto task = [&log, context = Scope::capture()] {
                    const Scope reopened{context};
                    log.info("task");
                };
                const std::lock_guard lock(mutex);
                tasks.emplace_back(std::move(task));
                ready.notify_one();
            }
        });
    }
    for (std::thread& t : producers) t.join();
    {
        const std::lock_guard lock(mutex);
        done = true;
    }
    ready.notify_all();
    for (std::thread& t : workers) t.join();
    const auto lines = sink->lines();
    REQUIRE(lines.size() == kProducers * kTasks);
    std::vector<std::vector<bool>> seen(kProducers, std::vector<bool>(kTasks, false));
    for (const std::string& line : lines) {
        const auto p = line.find(R"("producer":)");
        const auto t = line.find(R"(,"task":)");
        REQUIRE(p != std::string::npos);
        REQUIRE(t != std::string::npos);
        const int producer = std::stoi(line.substr(p + 11));
        const int task = std::stoi(line.substr(t + 8));
        REQUIRE(producer < kProducers);
        REQUIRE(task < kTasks);
        CHECK_FALSE(seen[producer][task]);
        seen[producer][task] = true;
        CHECK(line == info_line("task", R"(,"producer":)" + std::to_string(producer) + R"(,"task":)" + std::to_string(task)));
    }
}

TEST_CASE("a scope opened inside a logging call is inert and counted", "[scope]") {
    auto sink = capture();
    const std::uint64_t before = dropped();
    fieldlog::get("svc").info("m", {{"v", OpensScope{}}});
    CHECK(dropped() - before == 1);
    fieldlog::get("svc").info("next");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == info_line("m", R"(,"v":1)"));
    CHECK(lines[1] == info_line("next", ""));
}

TEST_CASE("a scope closed inside a logging call leaves that record whole and the next without it", "[scope]") {
    auto sink = capture();
    std::optional<Scope> scope;
    scope.emplace(fieldlog::Fields{{"s", 1}});
    const Scope other{{"o", 2}};
    fieldlog::get("svc").info("closing", {{"v", ClosesScope{&scope}}});
    fieldlog::get("svc").info("closed");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == info_line("closing", R"(,"s":1,"o":2,"v":1)"));
    CHECK(lines[1] == info_line("closed", R"(,"o":2)"));
}

TEST_CASE("a scope whose value throws while encoding opens empty and is counted", "[scope]") {
    auto sink = capture();
    const std::uint64_t before = dropped();
    {
        const Scope failing{{"bad", Throws{}}, {"good", 1}};
        fieldlog::get("svc").info("m");
    }
    CHECK(dropped() - before == 2);
    REQUIRE(sink->lines().size() == 1);
    CHECK(sink->lines()[0] == info_line("m", ""));
}

TEST_CASE("scope values are written with the running duration and timestamp options", "[scope]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .duration = fieldlog::DurationFormat::nanos,
                         .sinks = {{.target = sink}},
                         .clock = &fieldlog_test::fixed_clock});
    {
        const Scope timed{{"d", 5ms}};
        fieldlog::get("svc").info("m");
    }
    REQUIRE(sink->lines().size() == 1);
    CHECK(sink->lines()[0] == info_line("m", R"(,"d":5000000)"));
}

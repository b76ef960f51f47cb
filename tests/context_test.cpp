// SPDX-License-Identifier: MIT
// Request context through every path that attaches it (with(), nested with(), Scope, nested
// scopes, a capture re-opened on another thread, with or without scopes of its own there), in
// every format, before and after a configure() that changes the encoder options; scopes closed
// away from their thread; captures handed through a pool of threads and closed there in random
// order; with() and Scope while a flush() waits on a full async queue.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using namespace std::chrono_literals;
using fieldlog::Format;
using fieldlog::Scope;
using fieldlog_test::info_line;

namespace context_test {

/// A user type writing a nested object with an array inside: recorded as a tape in a node.
struct Point {
    int x;
    int y;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Point& p) {
    enc.begin_object();
    enc.key("x");
    enc.value(p.x);
    enc.key("y");
    enc.value(p.y);
    enc.key("tags");
    enc.begin_array();
    enc.value("a");
    enc.value(std::string_view("b\n"));
    enc.end_array();
    enc.end_object();
}

/// A type known only to fmt: written as the string it formats to.
struct Version {
    int major;
    int minor;
};

}  // namespace context_test

template <>
struct fmt::formatter<context_test::Version> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename Context>
    auto format(const context_test::Version& v, Context& ctx) const {
        return fmt::format_to(ctx.out(), "v{}.{}", v.major, v.minor);
    }
};

namespace {

using namespace context_test;

/// Values of every kind; the fields refer to them (a Field holds no copy), so they live as long
/// as the test.
struct Inputs {
    std::string request_id = "r-\xff\x01\"7";  // invalid UTF-8, a control character, a quote
    std::error_code error = std::make_error_code(std::errc::connection_refused);
    std::array<std::byte, 3> blob{std::byte{1}, std::byte{2}, std::byte{0xff}};
    std::vector<int> ids{1, 2, 3};
    std::map<std::string, int> counts{{"hits", 3}, {"misses", 1}};
    std::optional<int> retry = 2;
    std::optional<int> none;
    std::string long_value = std::string(3000, 'l');
    Point point{3, -4};
    Version version{1, 2};
    std::array<fieldlog::Value, 3> list{fieldlog::Value(1), fieldlog::Value("two"), fieldlog::Value(3ms)};
    std::array<fieldlog::Field, 3> nested{
        {{"k", "v"}, {"d", 2s}, {"list", fieldlog::Array(std::span<const fieldlog::Value>(list))}}};

    std::vector<fieldlog::Field> first() const {
        return {{"request_id", request_id},
                {"took", 1500us},
                {"at", std::chrono::sys_seconds(std::chrono::seconds(1'600'000'000)) + 250ms},
                {"ok", true},
                {"ratio", 0.25},
                {"error", error},
                {"blob", fieldlog::Bytes{blob}}};
    }
    std::vector<fieldlog::Field> second() const {
        return {{"point", point},
                {"version", version},
                {"ids", ids},
                {"counts", counts},
                {"retry", retry},
                {"none", none},
                {"nested", fieldlog::Object(std::span<const fieldlog::Field>(nested))},
                {"long", long_value},
                {"took", 2ms}};  // repeats a key of first(): the later one wins
    }
    std::vector<fieldlog::Field> all() const {
        std::vector<fieldlog::Field> fields = first();
        const std::vector<fieldlog::Field> more = second();
        fields.insert(fields.end(), more.begin(), more.end());
        return fields;
    }
};

/// Three sinks, one per format, with the fixed clock; `options` picks the timestamp and duration forms.
struct Sinks {
    std::shared_ptr<fieldlog::MemorySink> json = std::make_shared<fieldlog::MemorySink>();
    std::shared_ptr<fieldlog::MemorySink> logfmt = std::make_shared<fieldlog::MemorySink>();
    std::shared_ptr<fieldlog::MemorySink> console = std::make_shared<fieldlog::MemorySink>();

    void configure(fieldlog::TimestampFormat timestamp, fieldlog::DurationFormat duration) const {
        fieldlog::configure({.level = fieldlog::Level::trace,
                             .timestamp = timestamp,
                             .duration = duration,
                             .sinks = {{.target = json, .format = Format::json},
                                       {.target = logfmt, .format = Format::logfmt},
                                       {.target = console, .format = Format::console}},
                             .clock = &fieldlog_test::fixed_clock});
    }
    /// The last line of each sink.
    [[nodiscard]] std::array<std::string, 3> last() const {
        return {json->lines().back(), logfmt->lines().back(), console->lines().back()};
    }
};

}  // namespace

TEST_CASE("every context path writes what the same fields inline write, in every format, under the options in force",
          "[context]") {
    const Inputs in;
    const Sinks sinks;
    sinks.configure({}, fieldlog::DurationFormat::string);
    const fieldlog::Logger log = fieldlog::get("svc");
    const std::vector<fieldlog::Field> all = in.all();
    const std::vector<fieldlog::Field> first = in.first();
    const std::vector<fieldlog::Field> second = in.second();

    // Every context object is made under the first options and used under both.
    const fieldlog::Logger child = log.with(all);
    const fieldlog::Logger grandchild = log.with(first).with(second);
    const fieldlog::Logger half = log.with(first);
    fieldlog::ScopeContext captured;
    {
        const Scope outer{std::span<const fieldlog::Field>(first)};
        const Scope inner{std::span<const fieldlog::Field>(second)};
        captured = Scope::capture();
    }

    std::vector<std::array<std::string, 3>> under_first;
    const auto check_every_path = [&](const std::string& phase) {
        log.log(fieldlog::Level::info, "m", all);
        const auto expected = sinks.last();
        std::vector<std::pair<std::string, std::array<std::string, 3>>> got;
        child.info("m");
        got.emplace_back("with", sinks.last());
        grandchild.info("m");
        got.emplace_back("with().with()", sinks.last());
        {
            const Scope scope{std::span<const fieldlog::Field>(all)};
            log.info("m");
            got.emplace_back("scope", sinks.last());
        }
        {
            const Scope outer{std::span<const fieldlog::Field>(first)};
            const Scope inner{std::span<const fieldlog::Field>(second)};
            log.info("m");
            got.emplace_back("nested scopes", sinks.last());
        }
        {
            const Scope scope{std::span<const fieldlog::Field>(second)};
            half.info("m");
            got.emplace_back("with() and scope", sinks.last());
        }
        std::thread([&] {
            const Scope reopened{captured};
            log.info("m");
            got.emplace_back("capture on another thread", sinks.last());
        }).join();
        std::thread([&] {
            const Scope own{{"request_id", "replaced by the capture"}};
            const Scope reopened{captured};
            log.info("m");
            got.emplace_back("capture inside another thread's scope", sinks.last());
        }).join();
        for (const auto& [path, lines] : got) {
            for (std::size_t f = 0; f < 3; ++f) {
                INFO(phase << ", " << path << ", format " << f);
                CHECK(lines[f] == expected[f]);
            }
        }
        under_first.push_back(expected);
    };

    check_every_path("first options");
    CHECK(sinks.json->lines().back() ==
          info_line("m", ",\"request_id\":\"r-\xEF\xBF\xBD\\u0001\\\"7\""  // U+FFFD for the invalid byte
                         R"x(,"at":"2020-09-13T12:26:40.250000000Z","ok":true,)x"
                         R"x("ratio":0.25,"error":"Connection refused (generic:111)","blob":"AQL/",)x"
                         R"x("point":{"x":3,"y":-4,"tags":["a","b\n"]},"version":"v1.2","ids":[1,2,3],)x"
                         R"x("counts":{"hits":3,"misses":1},"retry":2,"none":null,)x"
                         R"x("nested":{"k":"v","d":"2s","list":[1,"two","3ms"]},"long":")x" +
                             in.long_value + R"(","took":"2ms")"));
    sinks.configure({.precision = fieldlog::TimestampPrecision::milli}, fieldlog::DurationFormat::nanos);
    check_every_path("second options");
    // The second options really changed the lines.
    for (std::size_t f = 0; f < 3; ++f) CHECK(under_first[0][f] != under_first[1][f]);
    CHECK(under_first[1][0].find(R"("took":2000000})") != std::string::npos);
    CHECK(under_first[1][0].find(R"("at":"2020-09-13T12:26:40.250Z")") != std::string::npos);
}

TEST_CASE("a context value of any size is written whole through with()", "[context]") {
    auto sink = fieldlog_test::capture();
    const std::string agent(100'000, 'a');
    const auto child = fieldlog::get("svc").with({{"user_agent", agent}, {"after", 1}});
    child.info("m");
    REQUIRE(sink->lines().size() == 1);
    CHECK(sink->lines()[0] == info_line("m", R"(,"user_agent":")" + agent + R"(","after":1)"));
}

TEST_CASE("a with() or a Scope of no fields adds nothing, alone and under others", "[context]") {
    auto sink = fieldlog_test::capture();
    const auto log = fieldlog::get("svc");
    const std::span<const fieldlog::Field> none;
    const auto empty = log.with(none);
    empty.info("a");
    const auto under = log.with({{"k", 1}}).with(none);
    {
        const Scope nothing{none};
        under.info("b");
        const Scope inner{{"s", 2}};
        const Scope again{none};
        empty.info("c");
    }
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == info_line("a", ""));
    CHECK(lines[1] == info_line("b", R"(,"k":1)"));
    CHECK(lines[2] == info_line("c", R"(,"s":2)"));
}

TEST_CASE("a recycled context node carries nothing of its previous request", "[context]") {
    auto sink = fieldlog_test::capture();
    const auto log = fieldlog::get("svc");
    for (int i = 0; i < 100; ++i) {
        const std::string id = fmt::format("r-{}", i);
        if (i % 2 == 0) {
            const auto request = log.with({{"request_id", id}, {"a", 1}, {"b", 2}, {"c", std::string(200, 'c')}});
            const Scope scope{{"step", i}, {"d", 4}};
            request.info("m");
        } else {
            const auto request = log.with({{"request_id", id}});
            const Scope scope{{"step", i}};
            request.info("m");
        }
    }
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 100);
    for (int i = 0; i < 100; ++i) {
        const std::string expected =
            i % 2 == 0 ? fmt::format(R"(,"request_id":"r-{}","a":1,"b":2,"c":"{}","step":{},"d":4)", i, std::string(200, 'c'), i)
                       : fmt::format(R"(,"request_id":"r-{}","step":{})", i, i);
        CHECK(lines[static_cast<std::size_t>(i)] == info_line("m", expected));
    }
}

TEST_CASE("a scope closed on another thread is closed on its own thread before that thread's next record",
          "[context][scope][concurrent]") {
    auto sink = fieldlog_test::capture();
    const auto log = fieldlog::get("svc");
    std::optional<Scope> request;
    request.emplace(fieldlog::Fields{{"request_id", "r-1"}});
    log.info("open");
    std::thread resumed_elsewhere([&] {
        log.info("elsewhere");  // never carried it: it is open on the other thread
        request.reset();
        log.info("closed here");
    });
    resumed_elsewhere.join();
    log.info("after");
    {
        const Scope next{{"request_id", "r-2"}};
        log.info("next");
    }
    // A scope whose thread exited before it closed: its fields went with the thread.
    std::optional<Scope> orphan;
    std::thread([&] {
        orphan.emplace(fieldlog::Fields{{"k", 1}});
        log.info("in thread");
    }).join();
    orphan.reset();
    log.info("last");
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 7);
    CHECK(lines[0] == info_line("open", R"(,"request_id":"r-1")"));
    CHECK(lines[1] == info_line("elsewhere", ""));
    CHECK(lines[2] == info_line("closed here", ""));
    CHECK(lines[3] == info_line("after", ""));
    CHECK(lines[4] == info_line("next", R"(,"request_id":"r-2")"));
    CHECK(lines[5] == info_line("in thread", R"(,"k":1)"));
    CHECK(lines[6] == info_line("last", ""));
}

TEST_CASE("captures handed to 8 pool threads and closed there in random order never mix requests",
          "[context][capture][threads][concurrent]") {
    auto sink = fieldlog_test::capture();
    const auto log = fieldlog::get("svc");
    struct Task {
        fieldlog::ScopeContext context;
        int request;
    };
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<Task> tasks;
    bool done = false;
    constexpr int kProducers = 2;
    constexpr int kRequests = 2'000;  // per producer

    std::vector<std::thread> pool;
    for (int t = 0; t < 8; ++t) {
        pool.emplace_back([&, t] {
            std::mt19937 random(static_cast<unsigned>(t) + 1);
            for (;;) {
                Task task;
                {
                    std::unique_lock lock(mutex);
                    changed.wait(lock, [&] { return !tasks.empty() || done; });
                    if (tasks.empty()) return;
                    task = std::move(tasks.front());
                    tasks.pop_front();
                }
                std::vector<std::optional<Scope>> open(4);
                open[0].emplace(task.context);
                log.info("task", {{"expect", task.request}});
                for (std::size_t i = 1; i < open.size(); ++i) {
                    if (random() % 2 == 0) open[i].emplace(fieldlog::Fields{{"layer", static_cast<int>(i)}});
                }
                std::vector<std::size_t> order{0, 1, 2, 3};
                std::shuffle(order.begin(), order.end(), random);
                for (const std::size_t i : order) {
                    const bool request_open = open[0].has_value();
                    log.info(request_open ? "inside" : "outside", {{"expect", request_open ? task.request : -1}});
                    open[i].reset();
                }
                log.info("outside", {{"expect", -1}});
            }
        });
    }
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
        producers.emplace_back([&, p] {
            for (int i = 0; i < kRequests; ++i) {
                const int request = p * kRequests + i;
                const Scope scope{{"request_id", request}};
                Task task{Scope::capture(), request};
                const std::lock_guard lock(mutex);
                tasks.push_back(std::move(task));
                changed.notify_one();
            }
        });
    }
    for (std::thread& t : producers) t.join();
    {
        const std::lock_guard lock(mutex);
        done = true;
        changed.notify_all();
    }
    for (std::thread& t : pool) t.join();

    const auto lines = sink->lines();
    REQUIRE(lines.size() == static_cast<std::size_t>(kProducers * kRequests * 6));
    std::size_t mixed = 0;
    for (const std::string& line : lines) {
        const std::size_t at = line.find(R"("expect":)");
        REQUIRE(at != std::string::npos);
        const int expect = std::stoi(line.substr(at + 9));
        const std::size_t id_at = line.find(R"("request_id":)");
        const int carried = id_at == std::string::npos ? -1 : std::stoi(line.substr(id_at + 13));
        if (carried != expect) ++mixed;
    }
    CHECK(mixed == 0);
    CHECK(fieldlog_test::jsonl_errors(lines) == "");
}

namespace {

/// A sink whose writes wait at a gate: the async writer stops on it, so the queue fills and
/// flush() waits.
class GateSink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView&) override {
        std::unique_lock lock(mutex_);
        ++entered_;
        changed_.notify_all();
        changed_.wait(lock, [&] { return open_; });
    }
    void flush() override {}
    void open() {
        const std::lock_guard lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }
    bool wait_entered() {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, 10s, [&] { return entered_ > 0; });
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    int entered_ = 0;
    bool open_ = false;
};

}  // namespace

TEST_CASE("with() and Scope return while another thread's flush() waits on a full async queue",
          "[context][async][concurrent]") {
    auto gate = std::make_shared<GateSink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .async = {.enabled = true, .queue_bytes = 4096, .overflow = fieldlog::OverflowPolicy::drop},
                         .sinks = {{.target = gate}}});
    const auto log = fieldlog::get("svc");
    log.info("first");
    REQUIRE(gate->wait_entered());  // the writer is stuck in the sink
    for (int i = 0; i < 200; ++i) log.info("fill the queue", {{"i", i}});
    std::atomic<bool> flushed{false};
    std::thread flusher([&] {
        fieldlog::flush();
        flushed = true;
    });
    std::this_thread::sleep_for(50ms);  // let flush() start waiting (were it not yet, the test would only pass early)
    std::atomic<bool> made{false};
    std::thread requester([&] {
        const auto child = log.with({{"request_id", "r-1"}});
        const Scope scope{{"user", 7}};
        const auto captured = Scope::capture();
        made = true;
    });
    const bool returned = fieldlog_test::wait_until([&] { return made.load(); }, 10s);
    CHECK(returned);
    CHECK_FALSE(flushed.load());
    gate->open();
    requester.join();
    flusher.join();
    CHECK(flushed.load());
}

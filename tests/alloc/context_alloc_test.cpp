// SPDX-License-Identifier: MIT
// The context features never touch the heap once a thread is warmed up: scopes opened and
// closed per record, captured scopes re-opened, nested child loggers, user types, maps,
// optionals, fmt messages with fields, repeated keys, through json, logfmt and console sinks;
// trace contexts parsed, formatted, made children of and opened as scopes.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "alloc/alloc_counter.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;

namespace context_alloc {

struct Account {
    std::string_view owner;
    std::int64_t balance;
    std::chrono::sys_seconds opened;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Account& a) {
    enc.begin_object();
    enc.key("owner");
    enc.value(a.owner);
    enc.key("balance");
    enc.value(a.balance);
    enc.key("opened");
    enc.value(a.opened);
    enc.key("balance");  // repeated: replaces the first
    enc.value(a.balance + 1);
    enc.end_object();
}

struct Point {
    int x;
    int y;
};

}  // namespace context_alloc

template <>
struct fmt::formatter<context_alloc::Point> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename Context>
    auto format(const context_alloc::Point& p, Context& ctx) const {
        return fmt::format_to(ctx.out(), "({}, {})", p.x, p.y);
    }
};

namespace {

using namespace context_alloc;

struct Inputs {
    std::string request_id = "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11";
    Account account{"Jane Doe", 1200, std::chrono::sys_seconds(std::chrono::seconds(1'600'000'000))};
    std::vector<Account> accounts = std::vector<Account>(3, account);
    std::map<std::string, int> counts{{"hits", 3}, {"misses", 1}};
    std::optional<int> retry = 2;
    std::string big = std::string(600, 'b');  // more than scopes once held together
};

/// One request's worth of logging; `child` already carries two levels of bound fields.
void handle_request(const fieldlog::Logger& child, const Inputs& in, int i) {
    const fieldlog::Scope request{{"request_id", in.request_id}, {"attempt", i}, {"latency", 1250us}};
    child.info("start", {{"request_id", "call overrides scope"}, {"service", "call overrides bound"}});
    {
        const fieldlog::Scope inner{{"account", in.account}, {"big", in.big}};
        child.info(fieldlog::format("user {} paid {}", in.account.owner, i),
                   {{"accounts", in.accounts}, {"counts", in.counts}, {"retry", in.retry}, {"at", Point{i, -i}}});
    }
    const fieldlog::ScopeContext context = fieldlog::Scope::capture();
    const fieldlog::Scope reopened{context};
    child.warn("took {} ms over {}", i, in.request_id);
}

}  // namespace

TEST_CASE("scopes, captured scopes, child loggers, user types and fmt messages allocate nothing", "[alloc][scope]") {
    auto json = std::make_shared<fieldlog::NullSink>();
    auto logfmt = std::make_shared<fieldlog::NullSink>();
    auto console = std::make_shared<fieldlog::NullSink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .sinks = {{.target = json},
                                   {.target = logfmt, .format = fieldlog::Format::logfmt},
                                   {.target = console, .format = fieldlog::Format::console}}});
    const Inputs in;
    const auto child = fieldlog::get("alloc").with({{"service", "checkout"}, {"version", 3}}).with({{"region", "eu"}});

    auto run = [&](int records) {
        handle_request(child, in, 0);  // warm-up: this thread's context exists from now on
        const std::uint64_t before = fieldlog_test::allocations();
        for (int i = 0; i < records; ++i) handle_request(child, in, i);
        return fieldlog_test::allocations() - before;
    };
    CHECK(run(20'000) == 0);
    std::uint64_t on_thread = 1;
    std::thread other([&] { on_thread = run(5'000); });
    other.join();
    CHECK(on_thread == 0);
    CHECK(json->counters().records > 3 * 20'000);
    CHECK(logfmt->counters().records == json->counters().records);
    CHECK(console->counters().records == json->counters().records);
}

TEST_CASE("backtraces keep, write and discard records without allocating, on any thread", "[alloc][backtrace]") {
    auto json = std::make_shared<fieldlog::NullSink>();
    auto logfmt = std::make_shared<fieldlog::NullSink>();
    fieldlog::configure({.level = fieldlog::Level::info,
                         .sinks = {{.target = json}, {.target = logfmt, .format = fieldlog::Format::logfmt}}});
    const Inputs in;
    const auto log = fieldlog::get("alloc").with({{"service", "checkout"}});
    // Every second request fails: its kept records are written, the others' discarded; each
    // keeps more than its bound, so the oldest go too.
    auto request = [&](int i) {
        const fieldlog::Scope scope{{{"request_id", in.request_id}}, fieldlog::Backtrace{.records = 4}};
        for (int step = 0; step < 6; ++step) {
            log.debug("step", {{"step", step}, {"account", in.account}, {"counts", in.counts}, {"big", in.big}});
            log.debug(fieldlog::format("step {} of {}", step, in.request_id));
        }
        {
            const fieldlog::Scope reopened{fieldlog::Scope::capture()};
            log.debug("inner", {{"retry", in.retry}});
        }
        if (i % 2 == 0) log.error("failed", {{"attempt", i}});
    };
    auto run = [&](int requests) {
        request(0);  // warm-up: this thread's context and pool exist from now on
        const std::uint64_t before = fieldlog_test::allocations();
        for (int i = 0; i < requests; ++i) request(i);
        return fieldlog_test::allocations() - before;
    };
    const auto written_before = fieldlog::metrics().backtrace_written;
    CHECK(run(10'000) == 0);
    std::uint64_t on_thread = 1;
    std::thread other([&] { on_thread = run(2'000); });
    other.join();
    CHECK(on_thread == 0);
    // Failed requests (half, and the two warm-ups) wrote the 4 records their backtrace kept.
    CHECK(fieldlog::metrics().backtrace_written - written_before == 4 * (5'000 + 1'000 + 2));
    CHECK(json->counters().records == 5 * (5'000 + 1'000 + 2));
    CHECK(logfmt->counters().records == json->counters().records);
}

TEST_CASE("a logger's backtrace keeps and writes the records of two threads without allocating", "[alloc][backtrace]") {
    auto json = std::make_shared<fieldlog::NullSink>();
    fieldlog::configure({.level = fieldlog::Level::info, .sinks = {{.target = json}}});
    const Inputs in;
    const auto log = fieldlog::get("alloc.logger_backtrace");
    log.keep_backtrace(fieldlog::Backtrace{.records = 8});
    // The two threads take turns (so that each run is the same run): in each, a request that
    // keeps records in the one backtrace, in blocks of its thread's pool; every third turn's
    // error writes and gives back what both kept.
    std::atomic<int> turn{0};
    auto run = [&](int me, int turns) {
        std::uint64_t allocations = 0;
        for (int t = 0; t < turns; ++t) {
            while (turn.load(std::memory_order_acquire) % 2 != me) std::this_thread::yield();
            const std::uint64_t before = fieldlog_test::allocations();
            {
                const fieldlog::Scope request{{"request_id", in.request_id}};
                for (int step = 0; step < 3; ++step)
                    log.debug("step", {{"step", step}, {"account", in.account}, {"counts", in.counts}, {"big", in.big}});
                if (t % 3 == 2) log.error("failed", {{"attempt", t}});
            }
            if (t >= 100) allocations += fieldlog_test::allocations() - before;  // after the warm-up
            turn.fetch_add(1, std::memory_order_release);
        }
        return allocations;
    };
    std::uint64_t on_thread = 1;
    std::thread other([&] { on_thread = run(1, 10'000); });
    const std::uint64_t here = run(0, 10'000);
    other.join();
    log.keep_backtrace(fieldlog::Backtrace{.records = 0});
    CHECK(here == 0);
    CHECK(on_thread == 0);
    // Every three turns each: two errors, the first after the newest 8 of 18 kept records, the
    // second after the 3 kept since.
    CHECK(json->counters().records == (10'000 / 3) * (2 + 8 + 3));
}

TEST_CASE("trace contexts parsed, formatted, made children of and opened as scopes allocate nothing", "[alloc][trace]") {
    auto json = std::make_shared<fieldlog::NullSink>();
    auto logfmt = std::make_shared<fieldlog::NullSink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .sinks = {{.target = json}, {.target = logfmt, .format = fieldlog::Format::logfmt}}});
    const auto log = fieldlog::get("alloc");
    const std::string traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const std::string tracestate = " rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE";
    auto request = [&](int i) {
        const auto incoming = fieldlog::TraceContext::parse(i % 2 == 0 ? traceparent : std::string_view("bad"), tracestate);
        const fieldlog::TraceContext ours = incoming ? incoming->child() : fieldlog::TraceContext::root();
        const fieldlog::Scope trace{ours};
        const fieldlog::Scope parsed{incoming};
        log.info("call", {{"traceparent", ours.child().traceparent().view()}, {"tracestate", ours.tracestate()}});
    };
    request(0);  // warm-up: this thread's context and id generator exist from now on
    const std::uint64_t before = fieldlog_test::allocations();
    for (int i = 0; i < 10'000; ++i) request(i);
    CHECK(fieldlog_test::allocations() - before == 0);
    CHECK(json->counters().records == 10'001);
}

namespace {

/// A bounded hand-off of captured contexts between two threads that never allocates.
struct Handoff {
    static constexpr std::size_t kSlots = 64;
    std::array<fieldlog::ScopeContext, kSlots> items;
    std::size_t head = 0;
    std::size_t tail = 0;
    bool held = true;  ///< wait_released() waits until release()
    bool done = false;
    std::mutex mutex;
    std::condition_variable changed;

    void push(fieldlog::ScopeContext context) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return tail - head < kSlots; });
        items[tail++ % kSlots] = std::move(context);
        changed.notify_all();
    }
    /// Takes the next context into `out`; false once closed and empty.
    bool pop(fieldlog::ScopeContext& out) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return head != tail || done; });
        if (head == tail) return false;
        out = std::move(items[head++ % kSlots]);
        changed.notify_all();
        return true;
    }
    void wait_released() {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return !held; });
    }
    void release() {
        const std::lock_guard lock(mutex);
        held = false;
        changed.notify_all();
    }
    void close() {
        const std::lock_guard lock(mutex);
        done = true;
        changed.notify_all();
    }
};

}  // namespace

TEST_CASE("a million requests across threads allocate nothing in steady state and the pools stay bounded",
          "[alloc][scope][concurrent]") {
    auto json = std::make_shared<fieldlog::NullSink>();
    fieldlog::configure({.level = fieldlog::Level::trace, .sinks = {{.target = json}}});
    const auto log = fieldlog::get("alloc");
    const std::string path = "/api/v1/orders/5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11";
    constexpr int kWarmUp = 20'000;
    constexpr int kRequests = 1'000'000;
    Handoff handoff;
    std::atomic<std::uint64_t> worker_records{0};

    // Each request: a with() child and a Scope on the accepting thread; its capture re-opened on
    // a worker, which drops the last references (its nodes go back to the accepting thread's pool).
    std::thread worker([&] {
        fieldlog::ScopeContext context;
        bool first = true;
        while (handoff.pop(context)) {
            if (first) handoff.wait_released();
            first = false;
            {
                const fieldlog::Scope job{context};
                log.info("job", {{"step", 2}});
            }
            context = fieldlog::ScopeContext();
            worker_records.fetch_add(1, std::memory_order_relaxed);
        }
    });
    std::uint64_t before = 0;
    fieldlog::Metrics pools_before;
    for (int i = 0; i < kWarmUp + kRequests; ++i) {
        if (i == kWarmUp) {
            pools_before = fieldlog::metrics();
            before = fieldlog_test::allocations();
        }
        const auto request = log.with({{"request_id", i}, {"method", "GET"}, {"path", path}});
        const fieldlog::Scope scope{{"user", i}, {"path", path}};
        request.info("accepted");
        // The most requests ever in flight — one at the worker, every slot full, this one —
        // happen once in the warm-up (the worker holds the first until then), so the pools hold
        // what the steady state needs before counting starts.
        if (i == static_cast<int>(Handoff::kSlots) + 1) handoff.release();
        handoff.push(fieldlog::Scope::capture());
        request.info("queued", {{"depth", 1}});
    }
    handoff.close();
    worker.join();
    const std::uint64_t allocated = fieldlog_test::allocations() - before;
    CHECK(allocated == 0);
    CHECK(worker_records.load() == static_cast<std::uint64_t>(kWarmUp + kRequests));
    CHECK(json->counters().records == 3ULL * (kWarmUp + kRequests));
    // Two threads used the pools (the worker's is kept, emptied, for the next thread).
    const fieldlog::Metrics pools_after = fieldlog::metrics();
    CHECK(pools_after.context_pool_bytes <= 2 * 256 * 1024);
    // The pools' own count says the same: every block of the steady state came from a free list.
    CHECK(pools_after.context_pool_misses == pools_before.context_pool_misses);
    CHECK(pools_after.context_pool_hits - pools_before.context_pool_hits >= static_cast<std::uint64_t>(kRequests));
    CHECK(fieldlog::metrics_text().find("fieldlog_context_pool_hits_total ") != std::string::npos);
}

TEST_CASE("in async mode a thread's pool keeps as much free context as its ring can hold", "[alloc][scope][async]") {
    // The writer hands a ring's worth of context back at once: a smaller bound would free it,
    // only for the thread to allocate it again.
    auto sink = std::make_shared<fieldlog::NullSink>();
    constexpr std::size_t kRing = 1024 * 1024;
    const auto kept_after_release = [&](bool async) {
        fieldlog::configure({.level = fieldlog::Level::trace,
                             .async = {.enabled = async, .queue_bytes = kRing},
                             .sinks = {{.target = sink}}});
        std::uint64_t kept = 0;
        std::thread([&kept] {
            const auto log = fieldlog::get("pool");
            const std::uint64_t before = fieldlog::metrics().context_pool_bytes;
            {
                std::vector<fieldlog::Logger> children;
                for (int i = 0; i < 20'000; ++i) children.push_back(log.with({{"i", i}}));
            }  // every node goes back to this thread's pool here
            kept = fieldlog::metrics().context_pool_bytes - before;
        }).join();
        return kept;
    };
    const std::uint64_t sync = kept_after_release(false);
    const std::uint64_t async = kept_after_release(true);
    fieldlog::configure({});
    CHECK(sync > 0);
    CHECK(sync <= 256 * 1024);
    CHECK(async > 256 * 1024);
    CHECK(async <= kRing);
}

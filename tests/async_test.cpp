// SPDX-License-Identifier: MIT
// The async writer: exact delivery from many threads, the overflow policies, flush(),
// records too large for the queue, order across threads, metrics, reconfiguration while
// logging, shutdown() and fork(). Every test here also runs under TSan in CI.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "base/thread_id.hpp"
#include "dispatch/pipeline.hpp"
#include "record/thread_context.hpp"
#include "support/test_support.hpp"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define FIELDLOG_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define FIELDLOG_TEST_SANITIZED 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define FIELDLOG_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FIELDLOG_TEST_TSAN 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#define FIELDLOG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIELDLOG_TEST_ASAN 1
#endif
#endif

// AddressSanitizer's allocator before LLVM 18 (GCC 12's and clang 14's runtimes among them) takes
// no lock around fork(): a child of a multithreaded process can inherit one of its allocator
// locks held by a parent thread and hang in the allocator — in the thread start of the writer
// the child needs. Plain malloc is fork-safe (glibc locks it around fork()), so the fork tests
// run in the plain and TSan builds and say why they skip under ASan.
#ifdef FIELDLOG_TEST_ASAN
#define FIELDLOG_SKIP_FORK_UNDER_ASAN() \
    FIELDLOG_TEST_SKIP("fork() from a multithreaded process can hang in this AddressSanitizer runtime's allocator")
#else
#define FIELDLOG_SKIP_FORK_UNDER_ASAN() static_cast<void>(0)
#endif

// TSan's allocator before LLVM 19 takes no lock around fork() either: a child forked while a
// parent thread allocates may hang in its own first allocation. The library allocates as a
// thread makes its first record and as the writer first takes it (the thread's ring, a spare
// ring, buffers), then no more: under TSan the fork tests fork once that is done (a flush after
// each thread's first record). The plain build forks at once, while the threads start.
#ifdef FIELDLOG_TEST_TSAN
constexpr bool kForkOnceAllocated = true;
#else
constexpr bool kForkOnceAllocated = false;
#endif

#ifdef FIELDLOG_TEST_TSAN
// The fork test's child starts the writer thread again; TSan allows that only when asked.
extern "C" const char* __tsan_default_options() { return "die_after_fork=0"; }
#endif

namespace {

using namespace std::chrono_literals;
using fieldlog::Level;

#ifdef FIELDLOG_TEST_SANITIZED
constexpr std::uint64_t kScale = 10;  // sanitizers are ~10x slower: a tenth of the records
#else
constexpr std::uint64_t kScale = 1;
#endif

std::uint64_t number_after(std::string_view line, std::string_view key) {
    std::size_t at = line.find(key);
    if (at == std::string_view::npos) return UINT64_MAX;
    at += key.size();
    std::uint64_t n = 0;
    while (at < line.size() && line[at] >= '0' && line[at] <= '9') n = n * 10 + static_cast<std::uint64_t>(line[at++] - '0');
    return n;
}

/// Checks each thread's numbers as they arrive (records carry "t" and "n"): strictly
/// consecutive (exactly once, in order) or, when gaps are allowed, strictly increasing.
class SequenceSink final : public fieldlog::Sink {
public:
    SequenceSink(std::size_t threads, bool gaps_allowed) : next_(threads, 0), received_(threads, 0), gaps_(gaps_allowed) {}

    void write(const fieldlog::RecordView& record) override {
        const std::string_view line(record.bytes.data(), record.bytes.size());
        const std::uint64_t t = number_after(line, "\"t\":");
        const std::uint64_t n = number_after(line, "\"n\":");
        const std::lock_guard lock(mutex_);
        if (t >= next_.size()) {
            ++bad_;
            return;
        }
        if (gaps_ ? n < next_[t] : n != next_[t]) ++bad_;
        next_[t] = n + 1;
        ++received_[t];
        if (slow_every_ != 0 && ++writes_ % slow_every_ == 0) std::this_thread::sleep_for(50us);
    }
    void flush() override {}

    /// Sleeps 50 µs every `n` records: a sink slower than the callers.
    void slow_down(std::uint64_t every) { slow_every_ = every; }
    std::uint64_t bad() const {
        const std::lock_guard lock(mutex_);
        return bad_;
    }
    std::uint64_t received(std::size_t t) const {
        const std::lock_guard lock(mutex_);
        return received_[t];
    }
    std::uint64_t received() const {
        const std::lock_guard lock(mutex_);
        std::uint64_t sum = 0;
        for (const std::uint64_t n : received_) sum += n;
        return sum;
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::uint64_t> next_;
    std::vector<std::uint64_t> received_;
    std::uint64_t bad_ = 0;
    std::uint64_t writes_ = 0;
    std::uint64_t slow_every_ = 0;
    bool gaps_;
};

/// Keeps lines like MemorySink; its first write waits until release() (the writer is then
/// busy, so whatever is logged meanwhile lands in one later batch). Counts batch sizes.
class GateSink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& record) override {
        std::unique_lock lock(mutex_);
        lines_.emplace_back(record.bytes.data(), record.bytes.size() - 1);
        entered_ = true;
        changed_.notify_all();
        changed_.wait(lock, [this] { return released_; });
    }
    void write_batch(std::span<const fieldlog::RecordView> records) override {
        {
            const std::lock_guard lock(mutex_);
            largest_batch_ = std::max(largest_batch_, records.size());
        }
        for (const fieldlog::RecordView& r : records) write(r);
    }
    void flush() override {}

    void wait_until_entered() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return entered_; });
    }
    void release() {
        const std::lock_guard lock(mutex_);
        released_ = true;
        changed_.notify_all();
    }
    std::vector<std::string> lines() const {
        const std::lock_guard lock(mutex_);
        return lines_;
    }
    std::size_t largest_batch() const {
        const std::lock_guard lock(mutex_);
        return largest_batch_;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::string> lines_;
    std::size_t largest_batch_ = 0;
    bool entered_ = false;
    bool released_ = false;
};

fieldlog::Config async_config(std::shared_ptr<fieldlog::Sink> sink, std::size_t queue_bytes,
                              fieldlog::OverflowPolicy overflow = fieldlog::OverflowPolicy::block) {
    return fieldlog::Config{.level = Level::trace,
                            .async = {.enabled = true, .queue_bytes = queue_bytes, .overflow = overflow},
                            .sinks = {fieldlog::SinkConfig{.target = std::move(sink)}}};
}

/// Leaves no async pipeline (and no test sink) behind for the next test.
struct ResetAfter {
    ResetAfter() = default;
    ResetAfter(const ResetAfter&) = delete;
    ResetAfter& operator=(const ResetAfter&) = delete;
    ~ResetAfter() { fieldlog_test::release_sinks(); }
};

/// `threads` threads, each logging `records` numbered records ("t", "n") to `log`.
void log_numbered(const fieldlog::Logger& log, std::size_t threads, std::uint64_t records, std::string_view pad = {}) {
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < threads; ++t) {
        workers.emplace_back([&log, t, records, pad] {
            for (std::uint64_t n = 0; n < records; ++n) log.info("record", {{"t", t}, {"n", n}, {"pad", pad}});
        });
    }
    for (std::thread& worker : workers) worker.join();
}

thread_local fieldlog::Timestamp t_now{};
fieldlog::Timestamp thread_clock() noexcept { return t_now; }

/// The /proc directories of this process's threads named fieldlog-writer.
std::vector<std::filesystem::path> writer_tasks() {
    std::vector<std::filesystem::path> writers;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string name;
        if (std::getline(comm, name) && name == "fieldlog-writer") writers.push_back(task.path());
    }
    return writers;
}

/// The context switches so far of every thread named fieldlog-writer: one per wake-up of a
/// sleeping thread.
long writer_switches() {
    long total = 0;
    for (const std::filesystem::path& task : writer_tasks()) {
        std::ifstream status(task / "status");
        for (std::string line; std::getline(status, line);) {
            const std::size_t colon = line.find(':');
            if (colon != std::string::npos && line.substr(0, colon).ends_with("voluntary_ctxt_switches")) {
                total += std::stol(line.substr(colon + 1));
            }
        }
    }
    return total;
}

/// Waits, at most 10 s, for a 200 ms span in which the writer wakes at most twice (a writer
/// that polled every millisecond would wake about 200 times), then for its next wake-up: it
/// then has just begun a long sleep.
bool writer_begins_long_sleep() {
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    long seen = writer_switches();
    for (bool resting = false; std::chrono::steady_clock::now() < give_up;) {
        std::this_thread::sleep_for(resting ? 1ms : 200ms);
        const long now = writer_switches();
        if (resting && now != seen) return true;
        resting = resting || now - seen <= 2;
        seen = now;
    }
    return false;
}

}  // namespace

TEST_CASE("Every record from 1, 2, 4 and 16 threads is written exactly once, in its thread's order", "[async][concurrent]") {
    const ResetAfter reset;
    const std::uint64_t records = 200'000 / kScale;
    for (const std::size_t threads : {1, 2, 4, 16}) {
        DYNAMIC_SECTION(threads << " threads x " << records << " records, policy block") {
            auto sink = std::make_shared<SequenceSink>(threads, false);
            fieldlog::configure(async_config(sink, 256 * 1024));
            const fieldlog::Metrics before = fieldlog::metrics();
            log_numbered(fieldlog::get("load"), threads, records);
            fieldlog::flush();
            const fieldlog::Metrics after = fieldlog::metrics();
            CHECK(sink->bad() == 0);
            for (std::size_t t = 0; t < threads; ++t) CHECK(sink->received(t) == records);
            CHECK(after.async.accepted_records - before.async.accepted_records == threads * records);
            CHECK(after.async.dropped_records == before.async.dropped_records);
            CHECK(after.async.queue_high_water <= after.async.queue_capacity);
        }
    }
}

TEST_CASE("Records of threads that start and exit during the run are written exactly once, in order", "[async][concurrent]") {
    const ResetAfter reset;
    constexpr std::uint64_t records = 200'000 / kScale;
    constexpr std::uint64_t per_thread = records / 16;
    for (const std::size_t streams : {1, 2, 4, 16}) {
        DYNAMIC_SECTION(streams << " streams x " << records << " records, a new thread every " << per_thread) {
            // Each stream is a chain of threads: one logs its share and exits, the next (which
            // joined it) goes on with the numbers, so a stream's order spans threads and rings.
            auto sink = std::make_shared<SequenceSink>(streams, false);
            fieldlog::configure(async_config(sink, 64 * 1024));
            const fieldlog::Logger log = fieldlog::get("churn");
            std::vector<std::thread> chains;
            for (std::size_t t = 0; t < streams; ++t) {
                chains.emplace_back([&log, t] {
                    for (std::uint64_t from = 0; from < records; from += per_thread) {
                        std::thread([&log, t, from] {
                            for (std::uint64_t n = from; n < from + per_thread; ++n) log.info("record", {{"t", t}, {"n", n}});
                        }).join();
                    }
                });
            }
            for (std::thread& chain : chains) chain.join();
            fieldlog::flush();
            CHECK(sink->bad() == 0);
            for (std::size_t t = 0; t < streams; ++t) CHECK(sink->received(t) == records);
        }
    }
}

TEST_CASE("With policy drop, delivered plus dropped equals sent and callers never wait", "[async][concurrent]") {
    const ResetAfter reset;
    const std::uint64_t records = 50'000 / kScale;
    const std::size_t threads = 4;
    auto sink = std::make_shared<SequenceSink>(threads, true);
    sink->slow_down(16);
    fieldlog::configure(async_config(sink, 4096, fieldlog::OverflowPolicy::drop));
    const fieldlog::Metrics before = fieldlog::metrics();
    log_numbered(fieldlog::get("drop"), threads, records);
    fieldlog::flush();
    const fieldlog::Metrics after = fieldlog::metrics();
    const std::uint64_t dropped = after.async.dropped_records - before.async.dropped_records;
    CHECK(sink->bad() == 0);  // what arrives is in order, without repeats
    CHECK(sink->received() + dropped == threads * records);
    CHECK(dropped > 0);
    CHECK(after.async.blocked_nanos == before.async.blocked_nanos);
}

TEST_CASE("the writer thread is named, so that top -H and perf tell it from the service's", "[async]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(1, false);
    fieldlog::configure(async_config(sink, 64 * 1024));
    fieldlog::get("named").info("record", {{"t", 0}, {"n", 0}});
    fieldlog::flush();
    CHECK(!writer_tasks().empty());  // more than one: a writer an earlier test replaced may be on its way out
}

TEST_CASE("an idle writer sleeps until the next record wakes it", "[async]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(1, false);
    fieldlog::configure(async_config(sink, 64 * 1024));
    const fieldlog::Logger log = fieldlog::get("idle");
    log.info("record", {{"t", 0}, {"n", 0}});
    fieldlog::flush();
    auto fastest = std::chrono::steady_clock::duration::max();
    for (std::uint64_t n = 1; n <= 3; ++n) {
        REQUIRE(writer_begins_long_sleep());
        const auto logged = std::chrono::steady_clock::now();
        log.info("record", {{"t", 0}, {"n", n}});  // no flush(): the record's commit has to wake the writer
        while (sink->received(0) == n && std::chrono::steady_clock::now() - logged < 5s) std::this_thread::sleep_for(100us);
        REQUIRE(sink->received(0) == n + 1);
        fastest = std::min(fastest, std::chrono::steady_clock::now() - logged);
    }
    // Left asleep, the record would wait for the end of the long sleep, a second away.
    CHECK(fastest < 400ms);
    CHECK(sink->bad() == 0);
}

TEST_CASE("a thread's first pass through its ring takes no page fault", "[async]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(1, false);
    constexpr std::size_t kRing = 1024 * 1024;  // 256 pages of 4 KiB
    fieldlog::configure(async_config(sink, kRing));
    long faults = -1;
    std::thread([&faults] {
        const fieldlog::Logger log = fieldlog::get("faults");
        log.info("record", {{"t", 0}, {"n", 0}});  // makes the thread's context and takes its ring
        const std::string text(200, 'x');
        rusage before{};
        ::getrusage(RUSAGE_THREAD, &before);
        for (std::uint64_t n = 1; n < 5000; ++n) log.info("record", {{"t", 0}, {"n", n}, {"text", text}});
        rusage after{};
        ::getrusage(RUSAGE_THREAD, &after);
        faults = after.ru_minflt - before.ru_minflt;
    }).join();
    fieldlog::flush();
    CHECK(sink->received(0) == 5000);
    CHECK(sink->bad() == 0);
    // Over 2 MB of records, twice round the ring: a page fault per page written first would be 256.
    CHECK(faults >= 0);
    CHECK(faults < 64);
}

TEST_CASE("flush() returns only after every record logged before it is written", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(1, false);
    sink->slow_down(8);
    fieldlog::configure(async_config(sink, 64 * 1024));
    const fieldlog::Logger log = fieldlog::get("flush");
    std::uint64_t sent = 0;
    for (int round = 0; round < 20; ++round) {
        for (int i = 0; i < 50 * round; ++i, ++sent) log.info("record", {{"t", 0}, {"n", sent}});
        fieldlog::flush();
        INFO("round " << round);
        REQUIRE(sink->received(0) == sent);
    }
    CHECK(sink->bad() == 0);
}

TEST_CASE("shutdown() writes every queued record before it closes the sinks", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(2, false);
    sink->slow_down(4);
    fieldlog::configure(async_config(sink, 16 * 1024));
    log_numbered(fieldlog::get("shutdown"), 2, 5'000 / kScale);
    fieldlog::shutdown();
    CHECK(sink->received(0) == 5'000 / kScale);
    CHECK(sink->received(1) == 5'000 / kScale);
    CHECK(sink->bad() == 0);
}

TEST_CASE("A record larger than half the queue is written by its caller, after that thread's earlier records",
          "[async][concurrent]") {
    const ResetAfter reset;
    SECTION("policy block: written in order") {
        auto sink = std::make_shared<SequenceSink>(2, false);
        fieldlog::configure(async_config(sink, 4096));
        const fieldlog::Logger log = fieldlog::get("large");
        const std::string large(3000, 'x');
        std::thread other([&log] {
            for (std::uint64_t n = 0; n < 2'000; ++n) log.info("record", {{"t", 1}, {"n", n}});
        });
        for (std::uint64_t n = 0; n < 600; ++n) log.info("record", {{"t", 0}, {"n", n}, {"pad", n % 3 == 0 ? large : ""}});
        other.join();
        fieldlog::flush();
        CHECK(sink->bad() == 0);
        CHECK(sink->received(0) == 600);
        CHECK(sink->received(1) == 2'000);
    }
    SECTION("policy drop: dropped and counted") {
        auto sink = std::make_shared<SequenceSink>(1, true);
        fieldlog::configure(async_config(sink, 4096, fieldlog::OverflowPolicy::drop));
        const fieldlog::Metrics before = fieldlog::metrics();
        fieldlog::get("large").info("record", {{"t", 0}, {"n", 0}, {"pad", std::string(3000, 'x')}});
        fieldlog::get("large").info("record", {{"t", 0}, {"n", 1}});
        fieldlog::flush();
        CHECK(fieldlog::metrics().async.dropped_records - before.async.dropped_records == 1);
        CHECK(sink->received(0) == 1);
    }
}

TEST_CASE("Records of one batch are written in timestamp order, and a thread's own order always holds", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<GateSink>();
    fieldlog::Config config = async_config(sink, 64 * 1024);
    config.clock = &thread_clock;
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get("order");

    t_now = fieldlog::Timestamp(1'000, 0);
    log.info("first");
    sink->wait_until_entered();  // the writer is busy: the next three go out in one batch
    std::thread([&log] {
        t_now = fieldlog::Timestamp(3'000, 0);
        log.info("a1");
    }).join();
    std::thread([&log] {
        t_now = fieldlog::Timestamp(2'000, 0);
        log.info("b1");
    }).join();
    std::thread([&log] {
        t_now = fieldlog::Timestamp(3'000, 5);
        log.info("c1");
        t_now = fieldlog::Timestamp(1'500, 0);  // this thread's clock steps back
        log.info("c2");
    }).join();
    sink->release();
    fieldlog::flush();

    std::vector<std::string> messages;
    for (const std::string& line : sink->lines()) {
        const std::size_t at = line.find("\"msg\":\"") + 7;
        messages.push_back(line.substr(at, line.find('"', at) - at));
    }
    CHECK(messages == std::vector<std::string>{"first", "b1", "a1", "c1", "c2"});
    CHECK(sink->largest_batch() == 4);
}

TEST_CASE("A batch that ends at a ring's share keeps the time order of every ring's records", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<GateSink>();
    fieldlog::Config config = async_config(sink, 16 * 1024);  // a batch takes at most 4 KiB of a ring
    config.clock = &thread_clock;
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get("share");
    log.info("first");
    sink->wait_until_entered();  // the writer is busy: one look then sees both threads' records
    // The first thread's records are larger: its ring gives its share first.
    auto log_every_other_second = [&](int from) {
        const std::string pad(from == 0 ? 300 : 20, 'x');
        for (int i = 0; i < 20; ++i) {  // 20 of the larger ones fill less than the ring
            t_now = fieldlog::Timestamp(2'000 + 2 * i + from, 0);
            log.info("r", {{"second", 2 * i + from}, {"pad", pad}});
        }
    };
    std::thread(log_every_other_second, 0).join();
    std::thread(log_every_other_second, 1).join();
    sink->release();
    fieldlog::flush();

    std::vector<int> seconds;
    for (const std::string& line : sink->lines()) {
        const std::size_t at = line.find("\"second\":");
        if (at != std::string::npos) seconds.push_back(std::stoi(line.substr(at + 9)));
    }
    std::vector<int> in_order(40);
    std::iota(in_order.begin(), in_order.end(), 0);
    CHECK(seconds == in_order);
    CHECK(sink->largest_batch() < 40);  // the shares cut the batches
}

TEST_CASE("The writer hands each sink whole batches, not one record at a time", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<GateSink>();
    fieldlog::configure(async_config(sink, 1024 * 1024));  // the writer takes up to a quarter at one look
    const fieldlog::Logger log = fieldlog::get("batch");
    log.info("first");
    sink->wait_until_entered();
    for (int i = 0; i < 500; ++i) log.info("queued", {{"i", i}});
    sink->release();
    fieldlog::flush();
    CHECK(sink->lines().size() == 501);
    CHECK(sink->largest_batch() == 500);
}

TEST_CASE("Metrics report capacity, high water, accepted records and the time callers waited", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(2, false);
    sink->slow_down(2);
    fieldlog::configure(async_config(sink, 5000));  // rounded down to 4096
    const fieldlog::Metrics before = fieldlog::metrics();
    log_numbered(fieldlog::get("metrics"), 2, 2'000, "some padding to fill the queue quickly");
    fieldlog::flush();
    const fieldlog::Metrics after = fieldlog::metrics();
    CHECK(after.async.queue_capacity == 4096);
    CHECK(after.async.queue_high_water > 2048);
    CHECK(after.async.queue_high_water <= 4096);
    CHECK(after.async.accepted_records - before.async.accepted_records == 4'000);
    CHECK(after.async.accepted_bytes - before.async.accepted_bytes > 4'000 * 50);
    CHECK(after.async.blocked_nanos > before.async.blocked_nanos);
    const std::string text = fieldlog::metrics_text();
    CHECK(text.find("fieldlog_async_queue_capacity_bytes 4096\n") != std::string::npos);
}

/// Polls the metrics until `done` holds for them (the writer recycles rings when it next looks).
template <typename Predicate>
fieldlog::AsyncMetrics wait_for_async_metrics(Predicate done) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    fieldlog::AsyncMetrics m = fieldlog::metrics().async;
    while (!done(m) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
        m = fieldlog::metrics().async;
    }
    return m;
}

TEST_CASE("Each thread's ring reports its own high water and the time its thread waited", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(1, false);
    sink->slow_down(2);
    fieldlog::configure(async_config(sink, 4096));
    std::mutex mutex;
    std::condition_variable changed;
    bool logged = false;
    bool may_exit = false;
    std::uint64_t tid = 0;
    std::thread writer_of_ring([&] {
        tid = static_cast<std::uint64_t>(fieldlog::detail::kernel_thread_id());
        for (std::uint64_t n = 0; n < 1'000; ++n) fieldlog::get("rings").info("record", {{"t", 0}, {"n", n}, {"pad", "to fill the ring"}});
        std::unique_lock lock(mutex);
        logged = true;
        changed.notify_all();
        changed.wait(lock, [&] { return may_exit; });
    });
    {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return logged; });
    }
    fieldlog::flush();
    const fieldlog::Metrics m = fieldlog::metrics();
    REQUIRE(m.async.rings.size() == 1);
    CHECK(m.async.rings[0].thread_id == tid);
    CHECK(m.async.rings[0].high_water > 2048);
    CHECK(m.async.rings[0].high_water <= 4096);
    CHECK(m.async.rings[0].blocked_nanos > 0);
    const std::string text = fieldlog::metrics_text();
    CHECK(text.find("fieldlog_async_ring_high_water_bytes{thread=\"" + std::to_string(tid) + "\"} ") != std::string::npos);
    CHECK(text.find("fieldlog_async_ring_blocked_seconds_total{thread=\"" + std::to_string(tid) + "\"} ") != std::string::npos);
    {
        const std::lock_guard lock(mutex);
        may_exit = true;
        changed.notify_all();
    }
    writer_of_ring.join();
    CHECK(sink->bad() == 0);
    CHECK(sink->received(0) == 1'000);
}

TEST_CASE("A thread that exits with records still in its ring loses none of them", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<GateSink>();
    fieldlog::configure(async_config(sink, 128 * 1024));
    const fieldlog::Logger log = fieldlog::get("exited");
    log.info("first");
    sink->wait_until_entered();  // the writer is busy: what the thread logs stays in its ring
    std::thread([&log] {
        for (int i = 0; i < 300; ++i) log.info("from a thread that exits", {{"i", i}});
    }).join();
    REQUIRE(fieldlog::metrics().async.rings.size() == 2);  // this thread's and the exited one's
    sink->release();
    fieldlog::flush();
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 301);
    for (int i = 0; i < 300; ++i) CHECK(lines[static_cast<std::size_t>(i) + 1].ends_with("\"i\":" + std::to_string(i) + "}"));
    const fieldlog::AsyncMetrics m = wait_for_async_metrics([](const fieldlog::AsyncMetrics& a) { return a.rings.size() == 1; });
    CHECK(m.rings.size() == 1);  // the exited thread's ring was drained and recycled
    CHECK(m.spare_rings == 2);   // it, and the one made ready when this thread took the first
}

TEST_CASE("Rings of exited threads are kept as spares up to the bound, and new threads take them", "[async][concurrent]") {
    const ResetAfter reset;
    auto sink = std::make_shared<SequenceSink>(12, false);
    fieldlog::configure(async_config(sink, 16 * 1024));
    {
        // 12 threads, each holding a ring until all have logged: a thread that exited earlier
        // could hand its ring, as a spare, to one that starts later, and fewer rings exist.
        std::latch all_logged(12);
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < 12; ++t) {
            threads.emplace_back([&all_logged, t] {
                for (std::uint64_t n = 0; n < 200; ++n) fieldlog::get("spares").info("record", {{"t", t}, {"n", n}});
                all_logged.arrive_and_wait();
            });
        }
        for (std::thread& thread : threads) thread.join();
    }
    fieldlog::flush();
    fieldlog::AsyncMetrics m = wait_for_async_metrics([](const fieldlog::AsyncMetrics& a) { return a.rings.empty(); });
    CHECK(m.rings.empty());
    CHECK(m.spare_rings == 4);  // RingSet::kSpareRings; the other 8 were freed

    std::mutex mutex;
    std::condition_variable changed;
    int logged = 0;
    bool may_exit = false;
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < 3; ++t) {
        threads.emplace_back([&, t] {
            for (std::uint64_t n = 200; n < 300; ++n) fieldlog::get("spares").info("record", {{"t", t}, {"n", n}});
            std::unique_lock lock(mutex);
            ++logged;
            changed.notify_all();
            changed.wait(lock, [&] { return may_exit; });
        });
    }
    {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return logged == 3; });
    }
    m = fieldlog::metrics().async;
    CHECK(m.rings.size() == 3);
    CHECK(m.spare_rings == 1);  // the three took spares
    {
        const std::lock_guard lock(mutex);
        may_exit = true;
        changed.notify_all();
    }
    for (std::thread& thread : threads) thread.join();
    fieldlog::flush();
    m = wait_for_async_metrics([](const fieldlog::AsyncMetrics& a) { return a.rings.empty(); });
    CHECK(m.rings.empty());
    CHECK(m.spare_rings == 4);
    CHECK(sink->bad() == 0);
    for (std::size_t t = 0; t < 3; ++t) CHECK(sink->received(t) == 300);
}

TEST_CASE("Reconfiguring while threads log keeps each thread's order in a sink both pipelines share",
          "[async][concurrent]") {
    const ResetAfter reset;
    const std::uint64_t records = 40'000 / kScale;
    auto sink = std::make_shared<SequenceSink>(2, false);
    fieldlog::configure(async_config(sink, 64 * 1024));
    std::atomic<bool> done{false};
    std::thread swapper([&] {
        for (int i = 0; !done.load(); ++i) {
            fieldlog::Config config = async_config(sink, i % 2 == 0 ? 8 * 1024 : 128 * 1024);
            config.async.enabled = i % 3 != 2;  // async → async, async → sync, sync → async
            fieldlog::configure(config);
            std::this_thread::sleep_for(200us);
        }
    });
    log_numbered(fieldlog::get("swap"), 2, records);
    done = true;
    swapper.join();
    fieldlog::flush();
    CHECK(sink->bad() == 0);
    CHECK(sink->received(0) == records);
    CHECK(sink->received(1) == records);
}

TEST_CASE("After fork() the child logs through a writer of its own and the parent loses nothing", "[async][fork][concurrent]") {
    FIELDLOG_SKIP_FORK_UNDER_ASAN();
    FIELDLOG_SKIP_THREADED_FORK_UNDER_EMULATION();
    const ResetAfter reset;
    const fieldlog_test::TempDir dir;
    const std::string path = dir.file("fork.log");
    fieldlog::Config config = async_config(nullptr, 64 * 1024);
    config.sinks = {fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = path}}};
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get("fork");

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> parent_sent{0};
    std::thread parent_logger([&] {  // busy in the parent while it forks
        for (std::uint64_t n = 0; !stop.load(); ++n) {
            log.info("record", {{"t", 0}, {"n", n}});
            parent_sent.store(n + 1);
        }
    });
    while (parent_sent.load() < 1'000) std::this_thread::yield();
    if (kForkOnceAllocated) fieldlog::flush();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        for (std::uint64_t n = 0; n < 1'000; ++n) log.info("record", {{"t", 1}, {"n", n}});
        fieldlog::shutdown();
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    stop = true;
    parent_logger.join();
    fieldlog::flush();

    std::vector<std::uint64_t> next(2, 0);
    std::uint64_t bad = 0;
    for (const std::string& line : fieldlog_test::read_lines(path)) {
        const std::uint64_t t = number_after(line, "\"t\":");
        const std::uint64_t n = number_after(line, "\"n\":");
        if (t > 1 || n != next[t]) ++bad;
        if (t <= 1) next[t] = n + 1;
    }
    CHECK(bad == 0);
    CHECK(next[0] == parent_sent.load());
    CHECK(next[1] == 1'000);
}

/// What each thread of a hung `child` is doing, from /proc: its name, where it waits and (as
/// root) its kernel stack; and, where gdb is installed, each thread's own stack. Read before the
/// child is killed, for the failure's message.
std::string hung_threads(pid_t child) {
    std::string report;
    const std::filesystem::path tasks = "/proc/" + std::to_string(child) + "/task";
    std::error_code error;
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
        const auto read = [&](const char* name) {
            std::ifstream in(task.path() / name);
            return std::string(std::istreambuf_iterator<char>(in), {});
        };
        report += "thread " + task.path().filename().string() + " " + read("comm") + "  wchan " + read("wchan") +
                  "\n" + read("stack");
    }
    if (std::filesystem::exists("/usr/bin/gdb")) {
        const std::string command =
            "timeout 60 /usr/bin/gdb -p " + std::to_string(child) + " -batch -ex 'thread apply all bt' 2>&1";
        if (FILE* const gdb = ::popen(command.c_str(), "r")) {
            char chunk[4096];
            for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, gdb)) > 0;) report.append(chunk, n);
            ::pclose(gdb);
        }
    }
    return report;
}

/// Waits for `child` up to `limit`; kills it and returns false when it is still running then.
bool child_exited_cleanly(pid_t child, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    for (;;) {
        const pid_t done = ::waitpid(child, &status, WNOHANG);
        if (done == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (std::chrono::steady_clock::now() > deadline) {
            WARN("child " << child << " hung:\n" << hung_threads(child));
            ::kill(child, SIGKILL);
            ::waitpid(child, &status, 0);
            return false;
        }
        std::this_thread::sleep_for(200us);
    }
}

// Hidden from the default run (CI runs it by its tag, with a time bound): a pre-fork server's
// life. Two threads log all along, a file sink flushes every millisecond on the background
// ticker, and every child logs, shuts down and exits; none may hang, the parent loses nothing.
// FIELDLOG_FORK_STRESS sets the number of forks (default 1000).
TEST_CASE("Forking 1000 times while other threads log never hangs a child and loses nothing", "[.][fork_stress]") {
    FIELDLOG_SKIP_FORK_UNDER_ASAN();
    FIELDLOG_SKIP_THREADED_FORK_UNDER_EMULATION();
    const ResetAfter reset;
    const fieldlog_test::TempDir dir;
    const std::string path = dir.file("parent.log");
    fieldlog::Config config = async_config(nullptr, 64 * 1024);
    config.sinks = {fieldlog::SinkConfig{
        .target = fieldlog::FileSinkOptions{.path = path, .flush_interval = std::chrono::milliseconds(1)}}};
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get("fork");

    const char* forks_text = std::getenv("FIELDLOG_FORK_STRESS");
    const int forks = forks_text != nullptr ? std::atoi(forks_text) : 1000;
    std::atomic<bool> stop{false};
    std::vector<std::uint64_t> sent(2, 0);
    std::atomic<std::size_t> started{0};  // threads that made their first record
    std::vector<std::thread> loggers;
    for (std::size_t t = 0; t < sent.size(); ++t) {
        loggers.emplace_back([&, t] {
            for (std::uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
                log.info("record", {{"t", t}, {"n", n}});
                if (n == 0) started.fetch_add(1);
                sent[t] = n + 1;
                std::this_thread::sleep_for(20us);  // busy, but the file stays small
            }
        });
    }
    if (kForkOnceAllocated) {
        while (started.load() < loggers.size()) std::this_thread::yield();
        fieldlog::flush();
    }
    int hung_or_failed = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < forks; ++i) {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            const fieldlog::Logger child_log = fieldlog::get("child");
            for (int n = 0; n < 10; ++n) child_log.info("child record", {{"n", n}});
            fieldlog::flush();
            fieldlog::shutdown();
            ::_exit(0);
        }
        if (!child_exited_cleanly(child, std::chrono::seconds(20))) ++hung_or_failed;
    }
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stop = true;
    for (std::thread& t : loggers) t.join();
    fieldlog::flush();
    WARN(forks << " forks in " << seconds << " s; the parent logged " << sent[0] + sent[1] << " records meanwhile");
    CHECK(hung_or_failed == 0);

    std::vector<std::uint64_t> next(sent.size(), 0);
    std::uint64_t bad = 0;
    std::uint64_t from_children = 0;
    for (const std::string& line : fieldlog_test::read_lines(path)) {
        if (line.find("\"child record\"") != std::string::npos) {
            ++from_children;
            continue;
        }
        const std::uint64_t t = number_after(line, "\"t\":");
        const std::uint64_t n = number_after(line, "\"n\":");
        if (t >= next.size() || n != next[t]) ++bad;
        if (t < next.size()) next[t] = n + 1;
    }
    CHECK(bad == 0);
    CHECK(next[0] == sent[0]);
    CHECK(next[1] == sent[1]);
    CHECK(from_children == static_cast<std::uint64_t>(forks) * 10);
}

TEST_CASE("fork() waits while a logger's filter bits are interned, and the child interns its own", "[routing][fork]") {
    FIELDLOG_SKIP_FORK_UNDER_ASAN();
    FIELDLOG_SKIP_THREADED_FORK_UNDER_EMULATION();
    const ResetAfter reset;
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(fieldlog::Config{.sinks = {fieldlog::SinkConfig{.target = sink, .exclude = {"no.such.logger"}}}});
    fieldlog::detail::Pipeline* pipeline = fieldlog::detail::g_current_pipeline.load();
    REQUIRE(pipeline != nullptr);
    // Another thread holds the pipeline's interning lock, as one does inside Pipeline::work_out_rules.
    std::latch held(1);
    std::thread holder([&] {
        pipeline->filter_sets.lock_for_fork();
        held.count_down();
        std::this_thread::sleep_for(200ms);  // the fork below begins meanwhile, and must wait
        pipeline->filter_sets.unlock_after_fork();
    });
    held.wait();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        fieldlog::get("child.new").info("m");  // a new logger: its filter bits are interned here
        ::_exit(sink->lines().size() == 1 ? 0 : 1);
    }
    holder.join();
    CHECK(child_exited_cleanly(child, std::chrono::seconds(20)));
}

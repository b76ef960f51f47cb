// SPDX-License-Identifier: MIT
// Async mode never touches the heap per record, on the callers or on the writer thread: after
// a warm-up, 2 threads x 50,000 records, each thread in its own ring (rings wrapping, callers
// waiting for space, batches merged from both rings to the file and null sinks, flush)
// allocate nothing anywhere in the process. A thread's ring is taken on its first record.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "alloc/alloc_counter.hpp"
#include "support/test_support.hpp"

namespace {

const std::string g_text = "an owned string value that needs \"escaping\"\n";  // made before any measuring

void log_records(const fieldlog::Logger& log, int thread, int count) {
    const std::string& text = g_text;
    for (int i = 0; i < count; ++i) {
        log.info("request done", {{"thread", thread},
                                  {"i", i},
                                  {"status", 200},
                                  {"latency", std::chrono::microseconds(1250 + i)},
                                  {"path", "/api/v1/items"},
                                  {"text", text},
                                  {"ratio", 0.25 * i},
                                  {"ok", i % 2 == 0}});
    }
}

void log_on_threads(const fieldlog::Logger& log, int count) {
    std::thread other(log_records, std::cref(log), 1, count);
    log_records(log, 0, count);
    other.join();
}

}  // namespace

TEST_CASE("Async logging allocates nothing per record, on the callers or the writer thread", "[async][alloc]") {
    const fieldlog_test::TempDir dir;
    const auto null_sink = std::make_shared<fieldlog::NullSink>();
    const fieldlog::Config config{
        .level = fieldlog::Level::info,
        .async = {.enabled = true, .queue_bytes = 64 * 1024, .overflow = fieldlog::OverflowPolicy::block},
        .sinks = {fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = dir.file("async.log")}},
                  fieldlog::SinkConfig{.target = null_sink}}};
    fieldlog::configure(config);
    const fieldlog::Logger log = fieldlog::get("alloc");
    log_on_threads(log, 1'000);  // warm-up: thread contexts, the writer's first batches
    fieldlog::flush();

    // Threads are made outside the measured stretch (std::thread allocates its state).
    const std::uint64_t before = fieldlog_test::allocations();
    log_records(log, 0, 50'000);
    fieldlog::flush();
    const std::uint64_t after = fieldlog_test::allocations();
    CHECK(after - before == 0);

    std::uint64_t on_other_thread = 0;
    std::thread other([&] {
        log_records(log, 1, 100);  // this thread's first records set up its context
        fieldlog::flush();
        const std::uint64_t start = fieldlog_test::allocations();
        log_records(log, 1, 50'000);
        fieldlog::flush();
        on_other_thread = fieldlog_test::allocations() - start;
    });
    log_records(log, 0, 50'000);
    other.join();
    fieldlog::flush();
    CHECK(on_other_thread == 0);
    CHECK(null_sink->counters().records == 2'000 + 3 * 50'000 + 100);
    fieldlog::shutdown();
}

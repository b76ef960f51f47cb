// SPDX-License-Identifier: MIT
// The sink contract as a user's sink sees it: two functions, counted by the dispatcher with no
// call of its own, named by info() (which may also fix the one format it takes), and one
// exception policy in sync and async mode alike (a throw loses that record for that sink,
// counted, reported on stderr at most once a second, and never reaches the caller).
#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using fieldlog_test::read_lines;
using fieldlog_test::StderrTo;
using fieldlog_test::TempDir;
using namespace std::chrono_literals;

namespace {

/// The README's "Writing a sink" example, keeping lines instead of writing to fd 2.
class LineSink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& r) override { lines.emplace_back(r.bytes.data(), r.bytes.size()); }
    void flush() override { ++flushes; }
    std::vector<std::string> lines;
    int flushes = 0;
};

/// Throws on every third record it is given (the 3rd, 6th, …); keeps the others.
class EveryThirdThrows final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& r) override {
        if (++calls % 3 == 0) throw std::runtime_error("every third record fails");
        kept.emplace_back(r.bytes.data(), r.bytes.size());
    }
    void flush() override {}
    int calls = 0;
    std::vector<std::string> kept;
};

/// Batches of its own, each of which throws.
class BatchesThrow final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView&) override { throw std::logic_error("single write"); }
    void write_batch(std::span<const fieldlog::RecordView>) override {
        ++batches;
        throw std::runtime_error("the whole batch fails");
    }
    void flush() override {}
    int batches = 0;
};

/// A sink that reads its lines as JSON, and says so in info().
class JsonOnlySink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& r) override { lines.emplace_back(r.bytes.data(), r.bytes.size()); }
    void flush() override {}
    [[nodiscard]] fieldlog::SinkInfo info() const override { return {.format = fieldlog::Format::json}; }
    std::vector<std::string> lines;
};

fieldlog::Config config_for(const std::shared_ptr<fieldlog::Sink>& sink, bool async) {
    return {.level = fieldlog::Level::info,
            .async = {.enabled = async, .queue_bytes = 64 * 1024},
            .sinks = {{.target = sink}},
            .clock = &fieldlog_test::fixed_clock};
}

void throwing_sink_loses_only_its_records(bool async) {
    const TempDir dir;
    const std::string report = dir.file("stderr.txt");
    auto sink = std::make_shared<EveryThirdThrows>();
    {
        const StderrTo capture(report);
        fieldlog::configure(config_for(sink, async));
        const fieldlog::Logger log = fieldlog::get("contract");
        for (int n = 0; n < 30; ++n) CHECK_NOTHROW(log.info("record", {{"n", n}}));
        fieldlog::flush();
        // The reports share one limit: a second apart, the next throw is reported again, with
        // how many the last second swallowed.
        std::this_thread::sleep_for(1100ms);
        CHECK_NOTHROW(log.info("record", {{"n", 30}}));
        CHECK_NOTHROW(log.info("record", {{"n", 31}}));
        CHECK_NOTHROW(log.info("record", {{"n", 32}}));  // the 33rd: thrown
        fieldlog::flush();
        fieldlog_test::release_sinks();
    }
    REQUIRE(sink->kept.size() == 22);
    std::size_t kept = 0;
    for (int n = 0; n < 33; ++n) {
        if ((n + 1) % 3 == 0) continue;  // the 3rd, 6th, … calls threw
        CHECK(sink->kept[kept++].find("\"n\":" + std::to_string(n) + "}") != std::string::npos);
    }
    const fieldlog::SinkCounters counters = sink->counters();
    CHECK(counters.records == 33);
    CHECK(counters.dropped == 11);
    CHECK(counters.errors == 11);
    const std::vector<std::string> lines = read_lines(report);
    REQUIRE(!lines.empty());
    CHECK(lines.size() <= 2);  // at most one a second
    for (const std::string& line : lines) {
        CHECK(line.starts_with("fieldlog: custom sink: write threw (1 record lost): every third record fails"));
    }
    CHECK(lines.back().find("more failures in the last second") != std::string::npos);
}

}  // namespace

TEST_CASE("a sink of two functions shows up in metrics with no call of its own", "[sink_contract]") {
    auto sink = std::make_shared<LineSink>();
    fieldlog::configure({.level = fieldlog::Level::info, .sinks = {{.target = sink}}, .clock = &fieldlog_test::fixed_clock});
    const fieldlog::Logger log = fieldlog::get("contract");
    for (int n = 0; n < 5; ++n) log.info("hello", {{"n", n}});
    fieldlog::flush();
    const fieldlog::Metrics m = fieldlog::metrics();
    fieldlog_test::release_sinks();
    REQUIRE(m.sinks.size() == 1);
    CHECK(m.sinks[0].kind == "custom");
    CHECK(m.sinks[0].target.empty());
    CHECK(m.sinks[0].counters.records == 5);
    std::uint64_t bytes = 0;
    for (const std::string& line : sink->lines) bytes += line.size();
    CHECK(m.sinks[0].counters.bytes == bytes);
    CHECK(m.sinks[0].counters.dropped == 0);
    CHECK(sink->flushes >= 1);
    REQUIRE(sink->lines.size() == 5);
    CHECK(sink->lines[4] == fieldlog_test::info_line("hello", R"(,"n":4)", "contract") + "\n");
}

TEST_CASE("each sink names its kind and target through info()", "[sink_contract]") {
    const TempDir dir;
    fieldlog::configure({.sinks = {{.target = fieldlog::StdoutSinkOptions{.stream = fieldlog::StdStream::err}},
                                   {.target = fieldlog::FileSinkOptions{.path = dir.file("a.log")}},
                                   {.target = std::make_shared<fieldlog::NullSink>()},
                                   {.target = std::make_shared<fieldlog::MemorySink>()},
                                   {.target = std::make_shared<fieldlog::CallbackSink>([](std::string_view) {})},
                                   {.target = std::make_shared<LineSink>()}}});
    const fieldlog::Metrics m = fieldlog::metrics();
    fieldlog_test::release_sinks();
    REQUIRE(m.sinks.size() == 6);
    const std::vector<std::string> kinds = {m.sinks[0].kind, m.sinks[1].kind, m.sinks[2].kind,
                                            m.sinks[3].kind, m.sinks[4].kind, m.sinks[5].kind};
    CHECK(kinds == std::vector<std::string>{"stderr", "file", "null", "memory", "callback", "custom"});
    CHECK(m.sinks[1].target == dir.file("a.log"));
}

TEST_CASE("a sink that takes one format gets it whatever the configuration's, and refuses another", "[sink_contract]") {
    auto sink = std::make_shared<JsonOnlySink>();
    auto beside = std::make_shared<LineSink>();
    fieldlog::configure({.format = fieldlog::Format::logfmt,
                         .sinks = {{.target = sink}, {.target = beside}},
                         .clock = &fieldlog_test::fixed_clock});
    fieldlog::get("contract").info("hello");
    REQUIRE(sink->lines.size() == 1);
    CHECK(sink->lines[0] == fieldlog_test::info_line("hello", "", "contract") + "\n");
    REQUIRE(beside->lines.size() == 1);
    CHECK(beside->lines[0].starts_with("ts=2026-11-30T08:38:11.123456789Z level=info"));  // the others: logfmt

    std::string error;
    try {
        fieldlog::configure({.sinks = {{.target = beside}, {.target = sink, .format = fieldlog::Format::console}}});
    } catch (const fieldlog::ConfigError& e) {
        error = e.what();
    }
    CHECK(error == "sinks[1]: a custom sink takes json records only, not console");
    fieldlog::get("contract").info("still the first configuration");
    CHECK(sink->lines.size() == 2);
    fieldlog_test::release_sinks();
}

TEST_CASE("a sink that throws every third record loses those records alone (sync)", "[sink_contract]") {
    throwing_sink_loses_only_its_records(false);
}

TEST_CASE("a sink that throws every third record loses those records alone (async)", "[sink_contract][async]") {
    throwing_sink_loses_only_its_records(true);
}

TEST_CASE("a write_batch of a sink's own that throws loses that batch, counted", "[sink_contract][async]") {
    auto sink = std::make_shared<BatchesThrow>();
    {
        const StderrTo quiet;
        fieldlog::configure(config_for(sink, true));
        const fieldlog::Logger log = fieldlog::get("contract");
        for (int n = 0; n < 100; ++n) CHECK_NOTHROW(log.info("record", {{"n", n}}));
        fieldlog::flush();
        fieldlog_test::release_sinks();
    }
    const fieldlog::SinkCounters counters = sink->counters();
    CHECK(counters.records == 100);
    CHECK(counters.dropped == 100);
    CHECK(sink->batches >= 1);
    CHECK(counters.errors == static_cast<std::uint64_t>(sink->batches));  // one per batch that threw
}

TEST_CASE("a flush that throws is counted as an error and loses no record", "[sink_contract]") {
    struct FlushThrows final : fieldlog::Sink {
        void write(const fieldlog::RecordView&) override {}
        void flush() override { throw std::runtime_error("flush failed"); }
    };
    auto sink = std::make_shared<FlushThrows>();
    const StderrTo quiet;
    fieldlog::configure(config_for(sink, false));
    fieldlog::get("contract").info("one");
    CHECK_NOTHROW(fieldlog::flush());
    const fieldlog::SinkCounters counters = sink->counters();
    fieldlog_test::release_sinks();
    CHECK(counters.records == 1);
    CHECK(counters.dropped == 0);
    CHECK(counters.errors >= 1);
}

TEST_CASE("a memory sink can be read while another thread logs to it", "[sink_contract][concurrent]") {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::info, .sinks = {{.target = sink}}});
    std::thread writer([] {
        const fieldlog::Logger log = fieldlog::get("contract");
        for (int n = 0; n < 2000; ++n) log.info("record", {{"n", n}});
    });
    std::size_t seen = 0;
    while (seen < 2000) {
        const std::vector<std::string> lines = sink->lines();  // under the sink's one mutex
        CHECK(lines.size() >= seen);                           // only ever grows
        seen = lines.size();
    }
    writer.join();
    fieldlog_test::release_sinks();
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 2000);
    CHECK(lines[1999].find("\"n\":1999") != std::string::npos);
}

// SPDX-License-Identifier: MIT
// The OTLP sink's calling thread never touches the heap once warm: records of every field kind,
// in a trace scope, are encoded (protobuf and OTLP/JSON) into the sink's own buffer and queued.
// The sink's thread waits meanwhile (a long linger, a large batch), so every allocation counted
// is the caller's.
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "alloc/alloc_counter.hpp"
#include "fieldlog/sinks/otlp_sink.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;

namespace {

struct Account {
    std::string name;
    std::vector<int> limits;
};

void fieldlog_encode(fieldlog::ValueEncoder& enc, const Account& a) {
    enc.value(fieldlog::Object{{"name", a.name}, {"limits", a.limits}});
}

void log_every_kind(const fieldlog::Logger& log, const Account& account, int i) {
    const std::array<std::byte, 4> raw{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
    const std::error_code error = std::make_error_code(std::errc::timed_out);
    log.info("every kind", {{"i", i},
                            {"u", 42u},
                            {"big", UINT64_MAX},
                            {"d", 3.25},
                            {"b", true},
                            {"null", nullptr},
                            {"text", "some text \xff with a bad byte"},
                            {"dur", 1250us},
                            {"when", std::chrono::system_clock::now()},
                            {"err", error},
                            {"bytes", fieldlog::Bytes{raw}},
                            {"obj", fieldlog::Object{{"k", 1}, {"nested", fieldlog::Array{1, "x", 2.5}}}},
                            {"account", account},
                            {"i", i + 1}});
    log.warn("formatted {} of {}", i, account.name);
}

}  // namespace

TEST_CASE("the OTLP sink's caller encodes and queues every field kind without allocating", "[alloc][otlp]") {
    for (const fieldlog::OtlpEncoding encoding : {fieldlog::OtlpEncoding::protobuf, fieldlog::OtlpEncoding::json}) {
        std::shared_ptr<fieldlog::OtlpSink> sink;
        try {
            // Nothing listens on port 9 of loopback; nothing is sent before close() anyway.
            sink = fieldlog::make_otlp_sink({.endpoint = "http://127.0.0.1:9/v1/logs",
                                             .encoding = encoding,
                                             .batch_size = 1'000'000,
                                             .linger = 1h,
                                             .queue_bytes = 64 * 1024 * 1024,
                                             .flush_timeout = 0ms,
                                             .shutdown_timeout = 0ms});
        } catch (const std::invalid_argument& e) {
            WARN("test skipped: " << e.what());
            return;
        }
        fieldlog::configure({.level = fieldlog::Level::info, .sinks = {{.target = sink}}});
        const fieldlog::Logger log = fieldlog::get("alloc").with({{"service", "checkout"}, {"version", 3}});
        const Account account{"an account with a long enough name", {1, 2, 3, 4}};
        const fieldlog::Scope trace{fieldlog::TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")};
        const fieldlog::Scope request{{"request_id", "r1"}};
        constexpr int kRecords = 20'000;
        log_every_kind(log, account, -1);  // warm-up: thread context, the sink's buffers
        const std::uint64_t before = fieldlog_test::allocations();
        for (int i = 0; i < kRecords; ++i) log_every_kind(log, account, i);
        CHECK(fieldlog_test::allocations() - before == 0);
        fieldlog_test::release_sinks();
        sink->close();
        // Every record was queued (none dropped for want of room), and close() dropped them all.
        const fieldlog::OtlpSinkStats stats = sink->stats();
        CHECK(stats.overflowed == 0);
        CHECK(stats.expired == 2u * (kRecords + 1));
    }
}

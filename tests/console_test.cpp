// The console format for people: each sink's own timestamp layout, colour chosen by `color`
// and the NO_COLOR / FORCE_COLOR / CLICOLOR_FORCE conventions, the logger column, the colour
// scheme, and multi-line messages and values shown as indented lines.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::Format;

namespace {

/// A memory sink that says it is a terminal (as a TTY stdout does).
class TerminalSink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& record) override { lines.emplace_back(record.bytes.data(), record.bytes.size() - 1); }
    void flush() override {}
    [[nodiscard]] fieldlog::SinkInfo info() const override { return {.terminal = true}; }
    std::vector<std::string> lines;
};

}  // namespace

TEST_CASE("each sink writes the record's time in its own layout, in the configuration's zone", "[console]") {
    auto short_time = std::make_shared<fieldlog::MemorySink>();
    auto full = std::make_shared<fieldlog::MemorySink>();
    auto json = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.format = Format::console,
                         .timestamp = {.precision = fieldlog::TimestampPrecision::milli,
                                       .zone = fieldlog::TimeZone::named("Asia/Kolkata")},
                         .sinks = {{.target = short_time, .timestamp = fieldlog::TimestampPrecision::short_time},
                                   {.target = full},
                                   {.target = json, .format = Format::json, .timestamp = fieldlog::TimestampPrecision::seconds}},
                         .clock = &fieldlog_test::fixed_clock});
    const fieldlog::Timestamp field_time{1'796'027'891, 5'000'000};  // the clock's second
    fieldlog::get("").info("m", {{"at", field_time}});
    CHECK(short_time->lines() == std::vector<std::string>{"14:08:11.123 INFO  m" + std::string(39, ' ') +
                                                          " at=2026-11-30T14:08:11.005+05:30"});
    CHECK(full->lines() == std::vector<std::string>{"2026-11-30T14:08:11.123+05:30 INFO  m" + std::string(39, ' ') +
                                                    " at=2026-11-30T14:08:11.005+05:30"});
    CHECK(json->lines() == std::vector<std::string>{R"({"ts":"2026-11-30T14:08:11+05:30","level":"info","logger":"","msg":"m","at":"2026-11-30T14:08:11+05:30"})"});
}

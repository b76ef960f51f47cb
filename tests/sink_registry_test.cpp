// SPDX-License-Identifier: MIT
// The open sink registry: a program's own sink type, named in a TOML file, read through
// SinkSettings with the reader's errors, configured, kept across configurations and logging
// like a built-in one; and the registrations the registry refuses.
#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "fieldlog/config.hpp"
#include "fieldlog/log.hpp"
#include "fieldlog/sink_registry.hpp"
#include "support/test_support.hpp"

namespace registry_test {

/// Keeps each line it is given (without its '\n'), after its prefix.
class RecordingSink final : public fieldlog::Sink {
public:
    explicit RecordingSink(std::string prefix) : prefix_(std::move(prefix)) {}
    void write(const fieldlog::RecordView& record) override {
        lines_.push_back(prefix_ + std::string(record.bytes.data(), record.bytes.size() - 1));
    }
    void flush() override {}
    [[nodiscard]] fieldlog::SinkInfo info() const override { return {.kind = "recording"}; }
    [[nodiscard]] std::vector<std::string> lines() const {
        const std::lock_guard lock(mutex());
        return lines_;
    }

private:
    std::string prefix_;
    std::vector<std::string> lines_;
};

/// A recording sink's options: configure() makes the sink from them, and keeps it while they stay equal.
struct RecordingOptions {
    std::string prefix;
    std::uint64_t capacity = 0;
    friend bool operator==(const RecordingOptions&, const RecordingOptions&) = default;
};

/// Every recording sink configure() made, in order.
std::vector<std::shared_ptr<RecordingSink>> made;

std::shared_ptr<fieldlog::Sink> make_sink(const RecordingOptions& options) {
    made.push_back(std::make_shared<RecordingSink>(options.prefix));
    return made.back();
}

fieldlog::SinkDestination sink_destination(const RecordingOptions& options) {
    return {.kind = "recording", .target = options.prefix};
}

/// "recording" (options, made by configure()) and "recording-now" (a sink the factory makes).
void register_types() {
    static const bool registered = [] {
        fieldlog::register_sink_type("recording", {"prefix", "capacity"}, [](fieldlog::SinkSettings& settings) {
            return fieldlog::SinkTarget(RecordingOptions{.prefix = settings.text("prefix", "a prefix like \"> \""),
                                                         .capacity = settings.size("capacity", 1024, "1KiB")});
        });
        fieldlog::register_sink_type("recording-now", {}, [](fieldlog::SinkSettings&) {
            return fieldlog::SinkTarget(std::make_shared<RecordingSink>("now: "));
        });
        return true;
    }();
    static_cast<void>(registered);
}

std::string parse_error(const std::string& text) {
    try {
        static_cast<void>(fieldlog::Config::parse(text, "app.toml"));
    } catch (const fieldlog::ConfigError& e) {
        return e.what();
    }
    return "(no ConfigError)";
}

}  // namespace registry_test

using registry_test::parse_error;

TEST_CASE("a registered sink type is named in a TOML file: a typo'd key is refused with its line and a hint, the right one "
          "configures it, and it takes records",
          "[sink_registry][config]") {
    registry_test::register_types();
    CHECK(parse_error("level = \"info\"\n[[sinks]]\ntype = \"recording\"\nprefx = \"> \"\n") ==
          "app.toml:4: sinks[0].prefx: unknown key for a recording sink (did you mean \"prefix\"?)");

    fieldlog::Config config = fieldlog::Config::parse("[[sinks]]\ntype = \"recording\"\nprefix = \"> \"\n", "app.toml");
    config.clock = &fieldlog_test::fixed_clock;
    REQUIRE(config.sinks.size() == 1);
    CHECK(config.sinks[0].defined_at == "app.toml:1: sinks[0]");
    const auto* options = config.sinks[0].target.options<registry_test::RecordingOptions>();
    REQUIRE(options != nullptr);
    CHECK(*options == registry_test::RecordingOptions{.prefix = "> ", .capacity = 1024});

    registry_test::made.clear();
    fieldlog::configure(config);
    fieldlog::configure(config);  // equal options: the sink made first is kept, not made again
    fieldlog::get("app").info("hello", {{"n", 1}});
    fieldlog::flush();
    REQUIRE(registry_test::made.size() == 1);
    const std::vector<std::string> lines = registry_test::made[0]->lines();
    fieldlog::shutdown();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == R"(> {"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"app","msg":"hello","n":1})");
}

TEST_CASE("a registered sink type's values of the wrong type are refused like a built-in sink's", "[sink_registry][config]") {
    registry_test::register_types();
    CHECK(parse_error("[[sinks]]\ntype = \"recording\"\nprefix = \"> \"\ncapacity = \"lots\"\n") ==
          "app.toml:4: sinks[0].capacity: expected a size like \"1KiB\", got \"lots\"");
    CHECK(parse_error("[[sinks]]\ntype = \"recording\"\nprefix = 5\n") ==
          "app.toml:3: sinks[0].prefix: expected a prefix like \"> \", got 5");
    CHECK(parse_error("[[sinks]]\ntype = \"kafka\"\n").starts_with(
        "app.toml:2: sinks[0].type: expected stdout, stderr, file, udp, journald, syslog, null, otlp, "));
}

TEST_CASE("a sink type's factory may make the sink itself", "[sink_registry][config]") {
    registry_test::register_types();
    const fieldlog::Config config = fieldlog::Config::parse("[[sinks]]\ntype = \"recording-now\"\n", "app.toml");
    REQUIRE(config.sinks.size() == 1);
    CHECK(std::dynamic_pointer_cast<registry_test::RecordingSink>(config.sinks[0].target.sink()) != nullptr);
}

TEST_CASE("the registry refuses a taken name, an empty one and a key every sink takes", "[sink_registry]") {
    registry_test::register_types();
    const fieldlog::SinkFactory factory = [](fieldlog::SinkSettings&) { return fieldlog::SinkTarget(); };
    CHECK_THROWS_AS(fieldlog::register_sink_type("file", {}, factory), std::invalid_argument);
    CHECK_THROWS_AS(fieldlog::register_sink_type("recording", {}, factory), std::invalid_argument);
    CHECK_THROWS_AS(fieldlog::register_sink_type("", {}, factory), std::invalid_argument);
    CHECK_THROWS_AS(fieldlog::register_sink_type("leveled", {"level"}, factory), std::invalid_argument);
}

TEST_CASE("SinkSettings keeps a sink type's key list and its factory in step", "[sink_registry]") {
    const auto settings = [](std::vector<fieldlog::Setting> given) {
        return fieldlog::SinkSettings("app.toml", "sinks[0]", 1, std::move(given), {"prefix"});
    };
    const fieldlog::SettingValue text{.kind = fieldlog::SettingValue::Kind::text, .text = "x", .shown = "\"x\"", .line = 3};
    // A key the type never declared cannot be read.
    CHECK_THROWS_AS(settings({}).text("prefx", "a prefix"), std::logic_error);
    // A declared key the table gives and the factory never read is a slip too.
    CHECK_THROWS_AS(settings({{"prefix", text}}).check_every_key_read(), std::logic_error);
    const fieldlog::SinkSettings read = settings({{"prefix", text}});
    CHECK(read.text("prefix", "a prefix") == "x");
    CHECK_NOTHROW(read.check_every_key_read());
    CHECK(settings({}).text("prefix", "a prefix", "fallback") == "fallback");
}

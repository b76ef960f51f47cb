// SPDX-License-Identifier: MIT
// Per-logger sink routing: a sink takes only the loggers `loggers` names and none that `exclude`
// names, in sync and async mode and on the crash path's terms; patterns and their errors; a
// record goes to no encoder that no sink of its logger needs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::Config;
using fieldlog::Format;
using fieldlog::SinkConfig;

namespace {

/// The logger names of `lines` (JSON records), in order.
std::vector<std::string> loggers_of(const std::vector<std::string>& lines) {
    std::vector<std::string> names;
    for (const std::string& line : lines) {
        const std::size_t at = line.find(R"("logger":")");
        REQUIRE(at != std::string::npos);
        const std::size_t from = at + 10;
        names.push_back(line.substr(from, line.find('"', from) - from));
    }
    return names;
}

/// Logs one info record from each of `names` (the root logger for "").
void log_from(const std::vector<std::string>& names) {
    for (const std::string& name : names) fieldlog::get(name).info("m");
}

const std::vector<std::string> kNames{"", "audit", "audit.http", "auditor", "payments", "payments.card", "db"};

}  // namespace

TEST_CASE("a sink takes the loggers it names, with their children, and exclude wins over them", "[routing]") {
    struct Case {
        std::vector<std::string> loggers;
        std::vector<std::string> exclude;
        std::vector<std::string> expected;
    };
    const Case cases[] = {
        {{"audit"}, {}, {"audit", "audit.http"}},
        {{"payments.*"}, {}, {"payments.card"}},
        {{"audit", "payments.*"}, {}, {"audit", "audit.http", "payments.card"}},
        {{"*"}, {}, kNames},
        {{}, {"audit"}, {"", "auditor", "payments", "payments.card", "db"}},
        {{"*"}, {"audit.*", "payments"}, {"", "audit", "auditor", "db"}},
        {{"audit"}, {"audit"}, {}},
        {{"audit.http.deeper"}, {}, {}},
    };
    for (const Case& c : cases) {
        auto filtered = std::make_shared<fieldlog::MemorySink>();
        auto everything = std::make_shared<fieldlog::MemorySink>();
        fieldlog::configure(Config{.level = fieldlog::Level::trace,
                                   .sinks = {SinkConfig{.target = filtered, .loggers = c.loggers, .exclude = c.exclude},
                                             SinkConfig{.target = everything}}});
        log_from(kNames);
        CAPTURE(c.loggers, c.exclude);
        CHECK(loggers_of(filtered->lines()) == c.expected);
        CHECK(loggers_of(everything->lines()) == kNames);
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("routing holds in async mode, with levels, and across a configure() that changes it", "[routing][concurrent]") {
    auto audit = std::make_shared<fieldlog::MemorySink>();
    auto rest = std::make_shared<fieldlog::MemorySink>();
    const auto configure = [&](std::vector<std::string> take, bool async) {
        Config config{.level = fieldlog::Level::trace,
                      .sinks = {SinkConfig{.target = audit, .level = fieldlog::Level::debug, .loggers = take},
                                SinkConfig{.target = rest, .level = fieldlog::Level::info, .exclude = take}}};
        config.async.enabled = async;
        fieldlog::configure(config);
    };
    for (const bool async : {false, true}) {
        audit->clear();
        rest->clear();
        configure({"audit"}, async);
        const fieldlog::Logger a = fieldlog::get("audit.login");
        const fieldlog::Logger other = fieldlog::get("http");
        a.trace("below both");
        a.debug("audit debug");
        a.info("audit info");
        other.debug("http debug");  // below rest's level
        other.info("http info");
        configure({"http"}, async);  // the same loggers, routed the other way now
        a.info("audit after");
        other.debug("http debug after");
        fieldlog::flush();
        CAPTURE(async);
        const std::vector<std::string> audit_lines = audit->lines();
        const std::vector<std::string> rest_lines = rest->lines();
        REQUIRE(audit_lines.size() == 3);
        CHECK(audit_lines[0].find(R"("msg":"audit debug")") != std::string::npos);
        CHECK(audit_lines[1].find(R"("msg":"audit info")") != std::string::npos);
        CHECK(audit_lines[2].find(R"("msg":"http debug after")") != std::string::npos);
        REQUIRE(rest_lines.size() == 2);
        CHECK(rest_lines[0].find(R"("msg":"http info")") != std::string::npos);
        CHECK(rest_lines[1].find(R"("msg":"audit after")") != std::string::npos);
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("any number of sinks may name loggers: each of 130 takes its logger's records, sync and async",
          "[routing][concurrent]") {
    constexpr int kSinks = 130;  // three words of filter bits
    const auto name = [](int i) { return "svc." + std::to_string(i); };
    for (const bool async : {false, true}) {
        std::vector<std::shared_ptr<fieldlog::MemorySink>> sinks;
        Config config{.level = fieldlog::Level::trace};
        for (int i = 0; i < kSinks; ++i) {
            sinks.push_back(std::make_shared<fieldlog::MemorySink>());
            // Even sinks take their own logger, odd ones every logger but theirs.
            config.sinks.push_back(i % 2 == 0 ? SinkConfig{.target = sinks.back(), .loggers = {name(i)}}
                                              : SinkConfig{.target = sinks.back(), .exclude = {name(i)}});
        }
        config.async.enabled = async;
        fieldlog::configure(config);
        for (int i = 0; i < kSinks; ++i) fieldlog::get(name(i)).info("m");
        fieldlog::flush();
        for (int i = 0; i < kSinks; ++i) {
            CAPTURE(async, i);
            const std::vector<std::string> got = loggers_of(sinks[static_cast<std::size_t>(i)]->lines());
            if (i % 2 == 0) {
                CHECK(got == std::vector<std::string>{name(i)});
            } else {
                CHECK(got.size() == kSinks - 1);
                CHECK(std::find(got.begin(), got.end(), name(i)) == got.end());
            }
        }
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("a record is encoded only in the formats its logger's sinks use", "[routing]") {
    auto json = std::make_shared<fieldlog::MemorySink>();
    auto logfmt = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(Config{.level = fieldlog::Level::trace,
                               .sinks = {SinkConfig{.target = json, .format = Format::json, .loggers = {"audit"}},
                                         SinkConfig{.target = logfmt, .format = Format::logfmt, .exclude = {"audit"}}}});
    const std::uint64_t before = fieldlog::metrics().encoded_bytes;
    fieldlog::get("audit").info("m");
    const std::uint64_t after = fieldlog::metrics().encoded_bytes;
    REQUIRE(json->lines().size() == 1);
    CHECK(logfmt->lines().empty());
    CHECK(after - before == json->lines()[0].size() + 1);  // its newline; the logfmt line was never made
    fieldlog_test::release_sinks();
}

TEST_CASE("routing patterns: the TOML keys, and what is refused", "[routing][config]") {
    const Config config = Config::parse(R"(
[[sinks]]
type = "null"
loggers = ["audit", "payments.*"]
exclude = ["audit.debug"]
)");
    REQUIRE(config.sinks.size() == 1);
    CHECK(config.sinks[0].loggers == std::vector<std::string>{"audit", "payments.*"});
    CHECK(config.sinks[0].exclude == std::vector<std::string>{"audit.debug"});

    const auto error_of = [](std::string_view toml) {
        try {
            (void)Config::parse(toml, "f.toml");
        } catch (const fieldlog::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error_of("[[sinks]]\ntype = \"null\"\nloggers = []\n") ==
          "f.toml:3: sinks[0].loggers: is empty: name at least one logger (\"*\" is every logger), or leave the key out");
    CHECK(error_of("[[sinks]]\ntype = \"null\"\nloggers = \"audit\"\n") ==
          "f.toml:3: sinks[0].loggers: expected an array of logger names like [\"audit\", \"payments.*\"], got \"audit\"");
    CHECK(error_of("[[sinks]]\ntype = \"null\"\nexclude = [\"a*\"]\n") ==
          "f.toml:3: sinks[0].exclude[0]: \"a*\" has a '*' other than a final \".*\" or a lone \"*\"");
    CHECK(error_of("[[sinks]]\ntype = \"null\"\nloggers = [\"db..pool\"]\n") ==
          "f.toml:3: sinks[0].loggers[0]: \"db..pool\" is not a dotted logger name (like \"db\", \"db.pool\" or \"db.*\")");

    // The same rules for sinks made in code.
    const auto configure_error = [](std::vector<std::string> take) {
        try {
            fieldlog::configure(Config{.sinks = {SinkConfig{.target = std::make_shared<fieldlog::NullSink>(), .loggers = take}}});
        } catch (const fieldlog::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(configure_error({"ok", ""}) == "sinks[0]: loggers[1] \"\" is empty (\"*\" takes every logger)");
    CHECK(configure_error({".x"}).find("is not a dotted logger name") != std::string::npos);
    fieldlog_test::release_sinks();
}

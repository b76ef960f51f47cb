// SPDX-License-Identifier: MIT
// Redaction (Config::redact) and the value-size cap (Config::max_value_bytes): a secret under a
// named key never reaches a sink's bytes or the typed observer, at every depth (call fields,
// nested objects, arrays of objects, maps, user types, with(), Scope, captures), in every
// format, sync and async, through a backtrace; the glob; no rules leaves lines as they were;
// a reconfigure re-encodes bound fields; the cap cuts at a UTF-8 boundary; the TOML keys.
#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "encode/redact.hpp"
#include "fieldlog/testing/observer.hpp"
#include "support/test_support.hpp"

using fieldlog::Format;
using fieldlog::Level;
using fieldlog::testing::Observer;

namespace redact_test {

constexpr std::string_view kSecret = "hunter2-XyZZy";
const std::vector<std::string> kRules{"password", "authorization", "*token*", "*secret*"};

/// A user type that streams a secret under a key the rules name, next to a plain member.
struct Credentials {
    std::string user;
    std::string password;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Credentials& c) {
    enc.begin_object();
    enc.key("user");
    enc.value(c.user);
    enc.key("Password");
    enc.value(c.password);
    enc.key("session_token");
    enc.begin_array();
    enc.formatted("{}", fmt::make_format_args(c.password));
    enc.end_array();
    enc.end_object();
}

constexpr std::array<Format, 4> kFormats{Format::json, Format::logfmt, Format::console, Format::otel};

/// One memory sink per format and a typed observer, all under the same rules.
struct Sinks {
    std::array<std::shared_ptr<fieldlog::MemorySink>, kFormats.size()> lines;
    std::shared_ptr<Observer> observer = std::make_shared<Observer>();

    /// Every line of every sink, and the observer's fields as text.
    [[nodiscard]] std::string all_output() const {
        std::string all;
        for (const auto& sink : lines) {
            for (const std::string& line : sink->lines()) all += line + '\n';
        }
        for (const auto& record : observer->all()) {
            for (const auto& member : record.fields) all += member.key + '=' + member.value.to_string() + '\n';
        }
        return all;
    }
    [[nodiscard]] std::vector<std::string> json() const { return lines[0]->lines(); }
};

fieldlog::Config config_for(Sinks& sinks, std::vector<std::string> rules, bool async = false,
                            std::size_t max_value_bytes = 0) {
    fieldlog::Config config{.level = Level::trace,
                            .async = {.enabled = async},
                            .redact = std::move(rules),
                            .max_value_bytes = max_value_bytes,
                            .clock = &fieldlog_test::fixed_clock};
    for (std::size_t i = 0; i < kFormats.size(); ++i) {
        if (!sinks.lines[i]) sinks.lines[i] = std::make_shared<fieldlog::MemorySink>();
        config.sinks.push_back(fieldlog::SinkConfig{.target = sinks.lines[i], .format = kFormats[i]});
    }
    config.sinks.push_back(fieldlog::SinkConfig{.target = sinks.observer});
    return config;
}

Sinks configure_redacting(bool async = false, std::size_t max_value_bytes = 0) {
    Sinks sinks;
    fieldlog::configure(config_for(sinks, kRules, async, max_value_bytes));
    return sinks;
}

std::size_t count_of(std::string_view text, std::string_view part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

/// Logs the secret at every depth: bound, scope, captured scope, call fields, nested objects,
/// an array of objects, a map, a user type.
void log_secret_everywhere() {
    const std::string secret(kSecret);
    const auto log = fieldlog::get("svc").with({{"api_token", secret}, {"service", "checkout"}});
    const fieldlog::Scope request{{{"authorization", secret}, {"request_id", "r-1"}}};
    const fieldlog::ScopeContext captured = fieldlog::Scope::capture();
    const std::map<std::string, std::string> headers{{"Authorization", secret}, {"accept", "json"}};
    const Credentials credentials{"ann", secret};
    const std::array<fieldlog::Field, 2> first{{{"name", "a"}, {"secret", secret}}};
    const std::array<fieldlog::Field, 2> second{{{"name", "b"}, {"PASSWORD", secret}}};
    log.info("login", {{"password", secret},
                       {"user", fieldlog::Object{{"name", "ann"}, {"client_secret", secret}}},
                       {"keys", fieldlog::Array{fieldlog::Object(std::span(first)), fieldlog::Object(std::span(second))}},
                       {"headers", headers},
                       {"credentials", credentials},
                       {"status", 200}});
    std::thread([&] {
        const fieldlog::Scope reopened{captured};
        log.warn("elsewhere", {{"reset_token", secret}});
    }).join();
}

}  // namespace redact_test

using namespace redact_test;

TEST_CASE("a secret under a named key reaches no sink at any depth in any format, and its key stays", "[redact]") {
    const Sinks sinks = configure_redacting();
    log_secret_everywhere();
    fieldlog::flush();
    const std::string all = sinks.all_output();
    CHECK(all.find(kSecret) == std::string::npos);
    const std::vector<std::string> json = sinks.json();
    REQUIRE(json.size() == 2);
    CHECK(json[0] == fieldlog_test::info_line(
                         "login",
                         R"(,"api_token":"[REDACTED]","service":"checkout","authorization":"[REDACTED]","request_id":"r-1")"
                         R"(,"password":"[REDACTED]","user":{"name":"ann","client_secret":"[REDACTED]"})"
                         R"(,"keys":[{"name":"a","secret":"[REDACTED]"},{"name":"b","PASSWORD":"[REDACTED]"}])"
                         R"(,"headers":{"Authorization":"[REDACTED]","accept":"json"})"
                         R"(,"credentials":{"user":"ann","Password":"[REDACTED]","session_token":"[REDACTED]"},"status":200)"));
    CHECK(count_of(json[1], "[REDACTED]") == 3);  // bound, captured scope, call field
    for (const auto& sink : sinks.lines) {
        const std::vector<std::string> lines = sink->lines();
        REQUIRE(lines.size() == 2);
        CHECK(count_of(lines[0], "[REDACTED]") == 9);
        CHECK(lines[0].find("ann") != std::string::npos);
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("the typed observer sees a redacted value as the string [REDACTED], nested members too", "[redact][observer]") {
    const Sinks sinks = configure_redacting();
    log_secret_everywhere();
    const auto records = sinks.observer->all();
    REQUIRE(records.size() == 2);
    const auto& login = records[0];
    CHECK(login.field("password") == "[REDACTED]");
    CHECK(login.field("api_token") == "[REDACTED]");
    CHECK(login.field("authorization") == "[REDACTED]");
    CHECK(login.field("request_id") == "r-1");
    CHECK(login.field("status") == 200);
    const fieldlog::testing::ObservedValue* user = nullptr;
    for (const auto& member : login.fields) {
        if (member.key == "user") user = &member.value;
    }
    REQUIRE(user != nullptr);
    REQUIRE(user->find("client_secret") != nullptr);
    CHECK(*user->find("client_secret") == "[REDACTED]");
    CHECK(*user->find("name") == "ann");
    CHECK(records[1].field("reset_token") == "[REDACTED]");
    CHECK(sinks.all_output().find(kSecret) == std::string::npos);
    fieldlog_test::release_sinks();
}

TEST_CASE("in async mode the writer's lines, made from the records' typed copies, carry no secret", "[redact][async]") {
    const Sinks sinks = configure_redacting(true);
    log_secret_everywhere();
    fieldlog::flush();
    const std::string all = sinks.all_output();
    CHECK(all.find(kSecret) == std::string::npos);
    // Two threads' records at one fixed time: the writer may take either first.
    std::vector<std::string> json = sinks.json();
    REQUIRE(json.size() == 2);
    if (json[0].find("\"msg\":\"login\"") == std::string::npos) std::swap(json[0], json[1]);
    CHECK(count_of(json[0], "[REDACTED]") == 9);
    CHECK(count_of(json[1], "[REDACTED]") == 3);
    fieldlog_test::release_sinks();
}

TEST_CASE("records kept by a backtrace are written redacted when it is flushed", "[redact][backtrace]") {
    Sinks sinks;
    fieldlog::Config config = config_for(sinks, kRules);
    config.level = Level::info;
    fieldlog::configure(config);
    const std::string secret(kSecret);
    {
        const fieldlog::Scope request{{{"db_password", secret}}, fieldlog::Backtrace{.records = 8}};
        fieldlog::get("svc").debug("kept", {{"password", secret}, {"secret_key", fieldlog::Object{{"x", secret}}}});
        fieldlog::get("svc").error("failed");
    }
    fieldlog::flush();
    const std::vector<std::string> json = sinks.json();
    REQUIRE(json.size() == 2);
    CHECK(json[0].find("\"backtrace\":true") != std::string::npos);
    CHECK(count_of(json[0], "[REDACTED]") == 2);  // password, secret_key; db_password is no rule's
    CHECK(json[0].find("\"db_password\":\"" + secret + '"') != std::string::npos);
    CHECK(json[1].find("\"db_password\":\"" + secret + '"') != std::string::npos);
    for (const auto& sink : sinks.lines) {
        for (const std::string& line : sink->lines()) CHECK(count_of(line, secret) == 1);
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("the glob: exact names and * runs, ASCII case-insensitive, matched against the whole key", "[redact]") {
    using fieldlog::detail::glob_matches;
    CHECK(glob_matches("password", "password"));
    CHECK(glob_matches("password", "PassWord"));
    CHECK_FALSE(glob_matches("password", "passwords"));
    CHECK_FALSE(glob_matches("password", "my_password"));
    CHECK(glob_matches("*token*", "token"));
    CHECK(glob_matches("*token*", "X-Auth-TOKEN-id"));
    CHECK_FALSE(glob_matches("*token*", "tokn"));
    CHECK(glob_matches("*_key", "api_key"));
    CHECK_FALSE(glob_matches("*_key", "api_key2"));
    CHECK(glob_matches("a*b*c", "aXXbYYbc"));
    CHECK_FALSE(glob_matches("a*b*c", "aXXbYYb"));
    CHECK(glob_matches("*", ""));
    CHECK(glob_matches("*", "anything"));
    CHECK(glob_matches("", ""));
    CHECK_FALSE(glob_matches("", "a"));
    CHECK(glob_matches("**x**", "x"));
    CHECK_FALSE(glob_matches("\xC3\x84", "\xC3\xA4"));  // beyond ASCII, bytes compare as they are
    CHECK(glob_matches("*secret*", "client_SECRET"));
}

TEST_CASE("with no rules every line is as it was: a key named password keeps its value", "[redact]") {
    Sinks sinks;
    fieldlog::configure(config_for(sinks, {}));
    fieldlog::get("svc").info("login", {{"password", "open"}, {"user", fieldlog::Object{{"token", 7}}}});
    CHECK(sinks.json() ==
          std::vector<std::string>{fieldlog_test::info_line("login", R"(,"password":"open","user":{"token":7})")});
    fieldlog_test::release_sinks();
}

TEST_CASE("rules that name no key of a record leave its lines in every format as they were without rules",
          "[redact]") {
    const auto lines_under = [](std::vector<std::string> rules) {
        Sinks sinks;
        fieldlog::configure(config_for(sinks, std::move(rules)));
        log_secret_everywhere();
        std::vector<std::string> all;
        for (const auto& sink : sinks.lines) {
            for (const std::string& line : sink->lines()) all.push_back(line);
        }
        return all;
    };
    const std::vector<std::string> plain = lines_under({});
    REQUIRE(plain.size() == 8);
    CHECK(lines_under({"no-such-key", "*nothing*"}) == plain);
    fieldlog_test::release_sinks();
}

TEST_CASE("a reconfigure that adds a rule applies to an existing child logger's bound fields and open scopes",
          "[redact][context]") {
    Sinks sinks;
    fieldlog::configure(config_for(sinks, {}));
    const std::string secret(kSecret);
    const auto child = fieldlog::get("svc").with({{"api_key", secret}});
    const fieldlog::Scope scope{{{"session", secret}}};
    child.info("before");
    fieldlog::configure(config_for(sinks, {"api_key", "SESSION"}));
    child.info("after");
    fieldlog::configure(config_for(sinks, {}));
    child.info("again");
    const std::vector<std::string> json = sinks.json();
    REQUIRE(json.size() == 3);
    const std::string plain = R"(,"api_key":")" + secret + R"(","session":")" + secret + '"';
    CHECK(json[0] == fieldlog_test::info_line("before", plain));
    CHECK(json[1] == fieldlog_test::info_line("after", R"(,"api_key":"[REDACTED]","session":"[REDACTED]")"));
    CHECK(json[2] == fieldlog_test::info_line("again", plain));
    for (const auto& sink : sinks.lines) {
        const std::vector<std::string> lines = sink->lines();
        REQUIRE(lines.size() == 3);
        CHECK(lines[1].find(secret) == std::string::npos);
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("max_value_bytes cuts a long string at a UTF-8 boundary and says how much was cut", "[redact][cap]") {
    using fieldlog::detail::cut_at_utf8_boundary;
    CHECK(cut_at_utf8_boundary("abc", 5) == "abc");
    CHECK(cut_at_utf8_boundary("abcdef", 4) == "abcd");
    CHECK(cut_at_utf8_boundary("ab\xE2\x82\xAC", 4) == "ab");          // inside the euro sign
    CHECK(cut_at_utf8_boundary("ab\xE2\x82\xAC", 5) == "ab\xE2\x82\xAC");  // exactly at its end
    CHECK(cut_at_utf8_boundary("\xF0\x9F\x98\x80z", 3).empty());
    CHECK(cut_at_utf8_boundary("\x80\x80\x80\x80\x80", 2) == "\x80\x80");  // not UTF-8: cut at the cap

    const Sinks sinks = configure_redacting(false, 8);
    // 6 ASCII bytes, then two 3-byte euro signs: the cap of 8 falls inside the first one.
    fieldlog::get("svc").info("long", {{"text", "abcdef\xE2\x82\xAC\xE2\x82\xAC"},
                                       {"short", "12345678"},
                                       {"nested", fieldlog::Object{{"s", "0123456789"}}}});
    const std::vector<std::string> json = sinks.json();
    REQUIRE(json.size() == 1);
    CHECK(json[0] ==
          fieldlog_test::info_line("long", R"(,"text":"abcdef…[truncated 6 bytes]","short":"12345678")"
                                           R"(,"nested":{"s":"01234567…[truncated 2 bytes]"})"));
    const std::vector<std::string> logfmt = sinks.lines[1]->lines();
    REQUIRE(logfmt.size() == 1);
    CHECK(logfmt[0].find(R"( text="abcdef…[truncated 6 bytes]" short=12345678)") != std::string::npos);
    fieldlog_test::release_sinks();
}

TEST_CASE("TOML: redact is an array of names or globs, max_value_bytes a size, and a bad value names file, line and key",
          "[redact][config]") {
    const fieldlog::Config config = fieldlog::Config::parse(
        "redact = [\"password\", \"*token*\"]\nmax_value_bytes = \"4KiB\"\n", "t.toml");
    CHECK(config.redact == std::vector<std::string>{"password", "*token*"});
    CHECK(config.max_value_bytes == 4096);
    CHECK(fieldlog::Config::parse("max_value_bytes = 100\n").max_value_bytes == 100);
    const auto error_of = [](std::string_view toml) {
        try {
            static_cast<void>(fieldlog::Config::parse(toml, "t.toml"));
        } catch (const fieldlog::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("(no ConfigError)");
    };
    CHECK_THAT(error_of("redact = \"password\"\n"), Catch::Contains("t.toml:1") && Catch::Contains("redact"));
    CHECK_THAT(error_of("redact = [\"a\", 3]\n"), Catch::Contains("t.toml:1") && Catch::Contains("redact[1]"));
    CHECK_THAT(error_of("redact = [\"\"]\n"), Catch::Contains("redact[0]") && Catch::Contains("empty"));
    CHECK_THAT(error_of("\nmax_value_bytes = \"lots\"\n"), Catch::Contains("t.toml:2") && Catch::Contains("max_value_bytes"));
    CHECK_THAT(error_of("max_value_bytes = -1\n"), Catch::Contains("max_value_bytes"));
}

// SPDX-License-Identifier: MIT
// The otel format: exact golden lines in the OpenTelemetry logs data model's names (times as
// OTLP/JSON's nanosecond strings, the spec's severity numbers, the logger as the
// instrumentation scope, the resource from the configuration); fields under `attributes` with
// the JSON format's rules (duplicate and reserved keys, escaping, NaN, exceptions, a 1 MiB
// value); a TraceContext scope's ids at the top level, any other field of those names left
// under attributes; call facts by the semantic conventions; [resource] in TOML, and
// OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME over it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/platform.hpp"
#include "base/thread_id.hpp"
#include "support/test_support.hpp"

using fieldlog::Format;
using fieldlog_test::jsonl_errors;

namespace {

const std::string kNanos = "1796027891123456789";  // fieldlog_test::fixed_clock()
const std::string kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// One MemorySink in the otel format at level trace, on the fixed clock, with `resource`.
std::shared_ptr<fieldlog::MemorySink> capture_otel(std::vector<fieldlog::ResourceAttribute> resource = {
                                                       {"service.name", std::string("checkout")}},
                                                   fieldlog::Caller caller = fieldlog::Caller::off, bool tid = false) {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .format = Format::otel,
                         .caller = caller,
                         .tid = tid,
                         .resource = std::move(resource),
                         .sinks = {{.target = sink}},
                         .clock = &fieldlog_test::fixed_clock});
    return sink;
}

/// The otel line of a record at the fixed clock, resource {"service.name":"checkout"}.
std::string otel_line(std::string_view level, int number, std::string_view body, std::string_view attributes,
                      std::string_view top = "", std::string_view logger = "svc") {
    return R"({"timestamp":")" + kNanos + R"(","observed_timestamp":")" + kNanos + R"(","severity_text":")" +
           std::string(level) + R"(","severity_number":)" + std::to_string(number) + R"(,"body":")" +
           std::string(body) + '"' + std::string(top) + R"(,"attributes":{)" + std::string(attributes) +
           R"(},"resource":{"service.name":"checkout"},"instrumentation_scope":{"name":")" + std::string(logger) +
           R"("}})";
}

/// The single line `sink` holds.
std::string only_line(const fieldlog::MemorySink& sink) {
    const std::vector<std::string> lines = sink.lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
}

}  // namespace

TEST_CASE("an otel record names its members as the OpenTelemetry logs data model does", "[otel]") {
    auto sink = capture_otel({{"service.name", std::string("checkout")},
                              {"service.version", std::string("1.4.2")},
                              {"service.instance.id", std::int64_t{7}},
                              {"sampling.ratio", 0.25},
                              {"weight", 1.0},
                              {"nan", std::nan("")},
                              {"canary", true}});
    const auto log = fieldlog::get("http").with({{"region", "eu"}});
    log.info("request done", {{"status", 200}, {"path", "/a b"}});
    CHECK(only_line(*sink) ==
          R"({"timestamp":")" + kNanos + R"(","observed_timestamp":")" + kNanos +
              R"(","severity_text":"info","severity_number":9,"body":"request done",)"
              R"("attributes":{"region":"eu","status":200,"path":"/a b"},)"
              R"("resource":{"service.name":"checkout","service.version":"1.4.2","service.instance.id":7,)"
              R"("sampling.ratio":0.25,"weight":1.0,"nan":"NaN","canary":true},"instrumentation_scope":{"name":"http"}})");
    fieldlog_test::release_sinks();
}

TEST_CASE("otel severity numbers are the first of each level's range in the data model", "[otel]") {
    auto sink = capture_otel();
    const auto log = fieldlog::get("svc");
    log.trace("m");
    log.debug("m");
    log.info("m");
    log.warn("m");
    log.error("m");
    log.fatal("m");
    const std::vector<std::string> expected = {otel_line("trace", 1, "m", ""),  otel_line("debug", 5, "m", ""),
                                               otel_line("info", 9, "m", ""),   otel_line("warn", 13, "m", ""),
                                               otel_line("error", 17, "m", ""), otel_line("fatal", 21, "m", "")};
    CHECK(sink->lines() == expected);
    fieldlog_test::release_sinks();
}

TEST_CASE("a TraceContext scope's ids are top-level otel members, its other fields attributes", "[otel][trace]") {
    auto sink = capture_otel();
    const auto log = fieldlog::get("svc");
    const std::string top = R"(,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","trace_flags":"01")";
    {
        const fieldlog::Scope trace{fieldlog::TraceContext::parse(kTraceparent)};
        log.info("one");
        const fieldlog::Scope request{{"request_id", "r1"}};
        log.info("two", {{"n", 1}});
    }
    log.info("three");
    const std::vector<std::string> expected = {otel_line("info", 9, "one", "", top),
                                               otel_line("info", 9, "two", R"("request_id":"r1","n":1)", top),
                                               otel_line("info", 9, "three", "")};
    CHECK(sink->lines() == expected);
    fieldlog_test::release_sinks();
}

TEST_CASE("trace_id, span_id and trace_flags that no TraceContext scope holds stay attributes", "[otel][trace]") {
    auto sink = capture_otel();
    const std::string_view id = "4bf92f3577b34da6a3ce929d0e0e4736";
    SECTION("from with() and the call") {
        fieldlog::get("svc").with({{"trace_id", id}}).info("m", {{"span_id", "00f067aa0ba902b7"}});
        CHECK(only_line(*sink) ==
              otel_line("info", 9, "m", R"("trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7")"));
    }
    SECTION("in a scope, not of the W3C form") {
        const fieldlog::Scope scope{{"trace_id", "4BF92F3577B34DA6A3CE929D0E0E4736"},
                                    {"span_id", "0000000000000000"},
                                    {"trace_flags", 1}};
        fieldlog::get("svc").info("m");
        CHECK(only_line(*sink) == otel_line("info", 9, "m",
                                            R"("trace_id":"4BF92F3577B34DA6A3CE929D0E0E4736",)"
                                            R"("span_id":"0000000000000000","trace_flags":1)"));
    }
    SECTION("a scope inside a trace scope that gives trace_id another value") {
        const fieldlog::Scope trace{fieldlog::TraceContext::parse(kTraceparent)};
        const fieldlog::Scope other{{"trace_id", "mine"}};
        fieldlog::get("svc").info("m");
        CHECK(only_line(*sink) ==
              otel_line("info", 9, "m", R"("trace_id":"mine")", R"(,"span_id":"00f067aa0ba902b7","trace_flags":"01")"));
    }
    fieldlog_test::release_sinks();
}

TEST_CASE("otel attributes keep the JSON format's duplicate-key and reserved-key rules", "[otel]") {
    auto sink = capture_otel();
    const fieldlog::Scope trace{fieldlog::TraceContext::parse(kTraceparent)};
    const fieldlog::Scope scope{{"user", "scope"}, {"region", "scope"}};
    const auto log = fieldlog::get("svc").with({{"region", "bound"}, {"version", 3}});
    log.info("m", {{"user", "call"}, {"msg", "mine"}, {"level", 1}, {"attributes", 2}, {"a", 1}, {"a", 2}});
    CHECK(only_line(*sink) ==
          otel_line("info", 9, "m",
                    R"("version":3,"region":"scope","user":"call","fields.msg":"mine","fields.level":1,"attributes":2,"a":2)",
                    R"(,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","trace_flags":"01")"));
    fieldlog_test::release_sinks();
}

TEST_CASE("otel lines stay valid JSON: invalid UTF-8, control characters, NaN, exceptions, a 1 MiB value", "[otel]") {
    auto sink = capture_otel();
    const auto log = fieldlog::get("svc");
    log.info("bad \xC3\x28 utf-8 \"quoted\"\n", {{"bytes\xFF", "x\xE2\x82"}});
    log.info("floats", {{"nan", std::nan("")}, {"inf", HUGE_VAL}, {"ninf", -HUGE_VAL}});
    log.error("failed", {{"error", std::runtime_error("disk full")}});
    const std::string huge(1 << 20, 'x');
    log.info("huge", {{"blob", huge}});
    log.info("fmt {} of {}", 1, 2);
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 5);
    CHECK(jsonl_errors(lines).empty());
    CHECK(lines[0] == otel_line("info", 9, "bad \xEF\xBF\xBD( utf-8 \\\"quoted\\\"\\n",
                                 "\"bytes\xEF\xBF\xBD\":\"x\xEF\xBF\xBD\""));
    CHECK(lines[1] == otel_line("info", 9, "floats", R"("nan":"NaN","inf":"+Inf","ninf":"-Inf")"));
    CHECK(lines[2] == otel_line("error", 17, "failed", R"("error":{"type":"std::runtime_error","what":"disk full"})"));
    CHECK(lines[3] == otel_line("info", 9, "huge", R"("blob":")" + huge + '"'));
    CHECK(lines[4] == otel_line("info", 9, "fmt 1 of 2", ""));
    fieldlog_test::release_sinks();
}

TEST_CASE("otel call facts are attributes named by the semantic conventions", "[otel]") {
    auto sink = capture_otel({{"service.name", std::string("checkout")}}, fieldlog::Caller::with_function, true);
    const auto log = fieldlog::get("svc");
    const int line = __LINE__ + 1;
    log.info("m");
    log.info("m", {{"code.line.number", "mine"}});
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(jsonl_errors(lines).empty());
    // The keys of the current conventions, the file as the compiler was given it (an absolute
    // path in a CMake build: the conventions prefer one), the function as __func__ names it.
    const std::string file = std::string(R"("code.file.path":")") + __FILE__ + '"';
    const std::string function = std::string(R"("code.function.name":")") + __func__ + '"';
    const std::string tid = R"("thread.id":)" + std::to_string(fieldlog::detail::kernel_thread_id());
    CHECK_THAT(lines[0], Catch::Contains(R"(,"attributes":{)" + file + R"(,"code.line.number":)" + std::to_string(line) + "," +
                                         function + "," + tid + R"(},"resource":)"));
    // A field of the same key replaces the fact, as any later key replaces an earlier one.
    CHECK_THAT(lines[1], Catch::Contains(R"(,"attributes":{)" + file + "," + function + "," + tid +
                                         R"(,"code.line.number":"mine"},"resource":)"));
    fieldlog_test::release_sinks();
}

TEST_CASE("an otel resource without service.name gets the SDKs' unknown_service:<program>", "[otel]") {
    auto sink = capture_otel({{"deployment.environment", std::string("test")}});
    fieldlog::get("svc").info("m");
    // The portable core knows no program name on glibc: then "unknown_service" (platform_test.cpp).
    const std::string expected = FIELDLOG_LINUX_FACILITIES ? "unknown_service:" + std::string(program_invocation_short_name)
                                                           : "unknown_service";
    CHECK(only_line(*sink).find(R"(,"resource":{"service.name":")" + expected +
                                R"(","deployment.environment":"test"},)") != std::string::npos);
    fieldlog_test::release_sinks();
}

TEST_CASE("an otel resource writes service.name first, the others in their order", "[otel]") {
    auto sink = capture_otel({{"b", std::int64_t{2}}, {"service.name", std::string("checkout")}, {"a", std::int64_t{1}}});
    fieldlog::get("svc").info("m");
    CHECK(only_line(*sink).find(R"(,"resource":{"service.name":"checkout","b":2,"a":1},)") != std::string::npos);
    fieldlog_test::release_sinks();
}

TEST_CASE("a resource with an empty or repeated key is a ConfigError and changes nothing", "[otel][config]") {
    auto sink = capture_otel();
    const auto refused = [&](std::vector<fieldlog::ResourceAttribute> resource) {
        fieldlog::configure({.format = Format::otel, .resource = std::move(resource),
                             .sinks = {{.target = std::make_shared<fieldlog::NullSink>()}}});
    };
    CHECK_THROWS_WITH(refused({{"a", std::string("1")}, {"a", std::int64_t{2}}}), "resource.\"a\": given twice");
    CHECK_THROWS_WITH(refused({{"", std::string("1")}}), "resource: an attribute with an empty key");
    fieldlog::get("svc").info("still here");
    CHECK(only_line(*sink) == otel_line("info", 9, "still here", ""));
    fieldlog_test::release_sinks();
}

TEST_CASE("an otel sink beside a json sink: each gets its own line of the one record", "[otel]") {
    auto json = std::make_shared<fieldlog::MemorySink>();
    auto otel = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = fieldlog::Level::trace,
                         .resource = {{"service.name", std::string("checkout")}},
                         .sinks = {{.target = json}, {.target = otel, .format = Format::otel}},
                         .clock = &fieldlog_test::fixed_clock});
    const fieldlog::Scope trace{fieldlog::TraceContext::parse(kTraceparent)};
    fieldlog::get("svc").with({{"k", "v"}}).info("m", {{"n", 1}});
    CHECK(json->lines() == std::vector<std::string>{fieldlog_test::info_line(
                               "m", R"(,"k":"v","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736",)"
                                    R"("span_id":"00f067aa0ba902b7","trace_flags":"01","n":1)")});
    CHECK(otel->lines() ==
          std::vector<std::string>{otel_line("info", 9, "m", R"("k":"v","n":1)",
                                             R"(,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736",)"
                                             R"("span_id":"00f067aa0ba902b7","trace_flags":"01")")});
    fieldlog_test::release_sinks();
}

TEST_CASE("TOML: format = \"otel\" and [resource] with quoted and dotted keys", "[otel][config]") {
    const fieldlog::Config config = fieldlog::Config::parse(R"(
[resource]
"service.name" = "checkout"
service.version = "1.4.2"
deployment.environment = "prod"
process.pid = 42
sampling = 0.5
canary = false

[[sinks]]
type = "stdout"
format = "otel"
)",
                                                            "app.toml");
    REQUIRE(config.sinks.size() == 1);
    CHECK(config.sinks[0].format == Format::otel);
    // In key order: toml++ keeps a table's keys sorted (configure() puts service.name first).
    const std::vector<fieldlog::ResourceAttribute> expected = {
        {"canary", false}, {"deployment.environment", std::string("prod")}, {"process.pid", std::int64_t{42}},
        {"sampling", 0.5}, {"service.version", std::string("1.4.2")}, {"service.name", std::string("checkout")}};
    CHECK(config.resource == expected);
    const fieldlog_test::ScopedEnv format("FIELDLOG_FORMAT", "otel");
    CHECK(fieldlog::Config::parse("", "app.toml").apply_env().format == Format::otel);
}

TEST_CASE("TOML: a bad [resource] is refused naming the file, line and key", "[otel][config]") {
    const auto error_of = [](std::string_view text) -> std::string {
        try {
            (void)fieldlog::Config::parse(text, "app.toml");
        } catch (const fieldlog::ConfigError& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK(error_of("resource = 1") == "app.toml:1: resource: expected a table ([resource]) of attribute = value, got 1");
    CHECK(error_of("[resource]\nhosts = [\"a\"]").rfind("app.toml:2: resource.hosts: expected a string, integer, float or boolean", 0) == 0);
    CHECK(error_of("[resource]\n\"service.name\" = \"a\"\nservice.name = \"b\"") ==
          "app.toml:2: resource.service.name: given twice (a quoted and a dotted key name one attribute)");
}

namespace {

using fieldlog::ResourceAttribute;
using fieldlog_test::ScopedEnv;

/// A file's [resource] (toml++ keeps its keys sorted) with the environment applied on top.
std::vector<ResourceAttribute> resource_with_env() {
    return fieldlog::Config::parse(R"(
[resource]
region = "eu"
"service.name" = "from-file"
team.size = 4
)",
                                   "app.toml")
        .apply_env()
        .resource;
}

const std::vector<ResourceAttribute> kFileResource = {
    {"region", std::string("eu")}, {"service.name", std::string("from-file")}, {"team.size", std::int64_t{4}}};

}  // namespace

TEST_CASE("OTEL_RESOURCE_ATTRIBUTES: key=value pairs, trimmed, values percent-decoded, over the file's keys it names",
          "[otel][config][env]") {
    const ScopedEnv service("OTEL_SERVICE_NAME", std::nullopt);
    SECTION("unset or empty: the file's resource as it is") {
        const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", std::nullopt);
        CHECK(resource_with_env() == kFileResource);
        const ScopedEnv empty("OTEL_RESOURCE_ATTRIBUTES", "");
        CHECK(resource_with_env() == kFileResource);
        const ScopedEnv blank("OTEL_RESOURCE_ATTRIBUTES", " , ,");
        CHECK(resource_with_env() == kFileResource);
    }
    SECTION("a key the file has takes the value in place, as a string; a new key comes after the file's") {
        const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", " team.size = 5 ,host.name=web-1,, deployment.environment= prod ");
        CHECK(resource_with_env() == std::vector<ResourceAttribute>{{"region", std::string("eu")},
                                                                    {"service.name", std::string("from-file")},
                                                                    {"team.size", std::string("5")},
                                                                    {"host.name", std::string("web-1")},
                                                                    {"deployment.environment", std::string("prod")}});
    }
    SECTION("percent escapes, in either case, make any byte; a value may be empty; the last of a key wins") {
        const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES",
                                   "note=a%2Cb%3dc%25%20d,city=K%C3%B6ln,empty=,region=us,region=ap%2dsouth");
        CHECK(resource_with_env() == std::vector<ResourceAttribute>{{"region", std::string("ap-south")},
                                                                    {"service.name", std::string("from-file")},
                                                                    {"team.size", std::int64_t{4}},
                                                                    {"note", std::string("a,b=c% d")},
                                                                    {"city", std::string("K\xC3\xB6ln")},
                                                                    {"empty", std::string()}});
    }
}

TEST_CASE("OTEL_RESOURCE_ATTRIBUTES: a malformed value is ignored whole and said on stderr, never thrown",
          "[otel][config][env]") {
    const ScopedEnv service("OTEL_SERVICE_NAME", std::nullopt);
    struct Case {
        const char* value;
        const char* message;
    };
    const Case cases[] = {
        {"a=1,b", R"(OTEL_RESOURCE_ATTRIBUTES: "b" is not key=value; the variable is ignored)"},
        {"a=1, =2", R"(OTEL_RESOURCE_ATTRIBUTES: "=2" has no key before '='; the variable is ignored)"},
        {"a=%zz", R"(OTEL_RESOURCE_ATTRIBUTES: "a=%zz" has a '%' not followed by two hex digits)"},
        {"a=%4", R"("a=%4" has a '%' not followed by two hex digits)"},
        {"a=1,b=50%", R"("b=50%" has a '%' not followed by two hex digits (a ',' or '=' in a value is %2C or %3D); the variable is ignored)"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.value) {
            const fieldlog_test::TempDir dir;
            const std::string errors = dir.file("stderr");
            const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", c.value);
            std::vector<ResourceAttribute> resource;
            {
                const fieldlog_test::StderrTo to(errors);
                REQUIRE_NOTHROW(resource = resource_with_env());
            }
            CHECK(resource == kFileResource);  // not even the entries before the bad one
            CHECK_THAT(fieldlog_test::read_file(errors), Catch::StartsWith("fieldlog: ") && Catch::Contains(c.message));
        }
    }
}

TEST_CASE("OTEL_SERVICE_NAME wins over service.name in OTEL_RESOURCE_ATTRIBUTES, which wins over the file's",
          "[otel][config][env]") {
    const auto service_name = [] {
        for (const ResourceAttribute& attribute : resource_with_env()) {
            if (attribute.key == "service.name") return std::get<std::string>(attribute.value);
        }
        return std::string("(none)");
    };
    {
        const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes");
        const ScopedEnv service("OTEL_SERVICE_NAME", std::nullopt);
        CHECK(service_name() == "from-attributes");
    }
    {
        const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes");
        const ScopedEnv service("OTEL_SERVICE_NAME", "from-name");
        CHECK(service_name() == "from-name");
    }
    {
        const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", "service.name=%zz");  // ignored: the name still holds
        const ScopedEnv service("OTEL_SERVICE_NAME", "from-name");
        const fieldlog_test::StderrTo quiet;
        CHECK(service_name() == "from-name");
    }
    {
        const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", std::nullopt);
        const ScopedEnv service("OTEL_SERVICE_NAME", "");  // empty: unset
        CHECK(service_name() == "from-file");
    }
}

TEST_CASE("an otel sink writes the environment's resource: OTEL_SERVICE_NAME first, as its service.name",
          "[otel][config][env]") {
    const ScopedEnv attributes("OTEL_RESOURCE_ATTRIBUTES", "host.name=web-1,service.version=2.0");
    const ScopedEnv service("OTEL_SERVICE_NAME", "checkout");
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::Config config = fieldlog::Config::parse("[resource]\nteam = \"core\"\n", "app.toml").apply_env();
    config.level = fieldlog::Level::trace;
    config.format = Format::otel;
    config.sinks = {{.target = sink}};
    config.clock = &fieldlog_test::fixed_clock;
    fieldlog::configure(config);
    fieldlog::get("svc").info("m");
    CHECK(only_line(*sink).find(R"(,"resource":{"service.name":"checkout","team":"core","host.name":"web-1","service.version":"2.0"},)") !=
          std::string::npos);
    fieldlog_test::release_sinks();
}

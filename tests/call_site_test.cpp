// SPDX-License-Identifier: MIT
// Call-site facts: the caller (file:line, and the function when asked) from every way of
// logging, the kernel thread id (per thread, and new in a forked child), each per sink or for
// all, in every format; the keys are reserved, also for the crash path's `fatal` record; the TOML
// keys and their errors.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "base/platform.hpp"
#include "base/thread_id.hpp"
#include "encode/final_record.hpp"
#include "encode/text.hpp"
#include "support/test_support.hpp"

using fieldlog::Caller;
using fieldlog::Config;
using fieldlog::Format;
using fieldlog::SinkConfig;

namespace {

const std::string kHead = R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"site","msg":"m")";

/// One MemorySink in `format` with the call-site options given.
std::shared_ptr<fieldlog::MemorySink> capture_with(Caller caller, bool tid, Format format = Format::json) {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(Config{.level = fieldlog::Level::trace,
                               .format = format,
                               .caller = caller,
                               .tid = tid,
                               .sinks = {SinkConfig{.target = sink}},
                               .clock = &fieldlog_test::fixed_clock});
    return sink;
}

std::string caller_member(int line) { return R"(,"caller":"tests/call_site_test.cpp:)" + std::to_string(line) + "\""; }

int kernel_tid() { return fieldlog::detail::kernel_thread_id(); }

[[gnu::noinline]] void log_from_named_function(const fieldlog::Logger& log) { log.info("m"); }

}  // namespace

TEST_CASE("the caller is the line of the logging call, whichever way it logs", "[call_site]") {
    const auto sink = capture_with(Caller::on, false);
    const fieldlog::Logger log = fieldlog::get("site");
    std::vector<int> lines;
    const std::vector<fieldlog::Field> runtime_fields{{"k", 1}};
    // clang-format off
    log.info("m");                                          lines.push_back(__LINE__);
    log.info("m", {{"k", 1}});                              lines.push_back(__LINE__);
    log.info("m {}", 1);                                    lines.push_back(__LINE__);
    log.info(fieldlog::format("m {}", 1), {{"k", 1}});      lines.push_back(__LINE__);
    log.info("m", runtime_fields);                          lines.push_back(__LINE__);
    log.log(fieldlog::Level::info, "m");                    lines.push_back(__LINE__);
    log.log(fieldlog::Level::info, "m {}", 1);              lines.push_back(__LINE__);
    FIELDLOG_INFO(log, "m");                                lines.push_back(__LINE__);
    FIELDLOG_INFO(log, "m {}", 1);                          lines.push_back(__LINE__);
    FIELDLOG_INFO(log, "m", {{"k", 1}});                    lines.push_back(__LINE__);
    log.with({{"w", 1}}).info("m");                         lines.push_back(__LINE__);
    // clang-format on
    const auto got = sink->lines();
    REQUIRE(got.size() == lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        INFO(got[i]);
        CHECK(got[i].find(caller_member(lines[i])) != std::string::npos);
    }
    CHECK(got[0] == kHead + caller_member(lines[0]) + "}");
    CHECK(got[1] == kHead + caller_member(lines[1]) + R"(,"k":1})");
    // After the message and before bound, scope and call fields.
    CHECK(got[10] == kHead + caller_member(lines[10]) + R"(,"w":1})");
}

TEST_CASE("caller = function adds the function's name", "[call_site]") {
    const auto sink = capture_with(Caller::with_function, false);
    log_from_named_function(fieldlog::get("site"));
    const auto got = sink->lines();
    REQUIRE(got.size() == 1);
    CHECK(got[0].find(R"(,"function":"log_from_named_function")") !=
          std::string::npos);
    CHECK(got[0].find(R"(,"caller":"tests/call_site_test.cpp:)") < got[0].find(R"(,"function":)"));
}

TEST_CASE("tid is the kernel's id of the logging thread", "[call_site][concurrent]") {
    const auto sink = capture_with(Caller::off, true);
    const fieldlog::Logger log = fieldlog::get("site");
    log.info("m");
    int other = 0;
    std::thread thread([&] {
        other = kernel_tid();
        log.info("m");
    });
    thread.join();
    const auto got = sink->lines();
    REQUIRE(got.size() == 2);
    CHECK(got[0] == kHead + R"(,"tid":)" + std::to_string(kernel_tid()) + "}");
    CHECK(got[1] == kHead + R"(,"tid":)" + std::to_string(other) + "}");
    CHECK(other != kernel_tid());
}

TEST_CASE("a forked child's thread id is its own, not the forking thread's cached one", "[call_site]") {
    const int parent_id = fieldlog::detail::cached_thread_id();  // cached in the parent
    REQUIRE(parent_id == kernel_tid());
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const int id = fieldlog::detail::cached_thread_id();
        // On Linux the kernel's: the child's one thread has the child's pid as its id.
        const bool own = id != parent_id && id == kernel_tid() && (!FIELDLOG_LINUX_FACILITIES || id == ::getpid());
        _exit(own ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("logfmt and console write caller and tid as their first members", "[call_site]") {
    const std::string tid = std::to_string(kernel_tid());
    {
        const auto sink = capture_with(Caller::on, true, Format::logfmt);
        fieldlog::get("site").info("m", {{"k", 1}});
        const int line = __LINE__ - 1;
        REQUIRE(sink->lines().size() == 1);
        CHECK(sink->lines()[0] == "ts=2026-11-30T08:38:11.123456789Z level=info logger=site msg=m caller=tests/call_site_test.cpp:" +
                                      std::to_string(line) + " tid=" + tid + " k=1");
    }
    {
        const auto sink = capture_with(Caller::on, true, Format::console);
        fieldlog::get("site").info("m");
        const int line = __LINE__ - 1;
        REQUIRE(sink->lines().size() == 1);
        const std::string line_text = sink->lines()[0];
        CHECK(line_text.find(" caller=tests/call_site_test.cpp:" + std::to_string(line) + " tid=" + tid) !=
              std::string::npos);
    }
}

TEST_CASE("each sink has the call-site facts it asked for, from one call", "[call_site]") {
    auto plain = std::make_shared<fieldlog::MemorySink>();
    auto located = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(Config{.level = fieldlog::Level::trace,
                               .tid = true,
                               .sinks = {SinkConfig{.target = plain, .tid = false},
                                         SinkConfig{.target = located, .caller = Caller::on}},
                               .clock = &fieldlog_test::fixed_clock});
    fieldlog::get("site").info("m");
    const int line = __LINE__ - 1;
    REQUIRE(plain->lines().size() == 1);
    REQUIRE(located->lines().size() == 1);
    CHECK(plain->lines()[0] == kHead + "}");
    CHECK(located->lines()[0] == kHead + caller_member(line) + R"(,"tid":)" + std::to_string(kernel_tid()) + "}");
}

TEST_CASE("user fields called caller, function or tid are written as fields.<key>", "[call_site][duplicates]") {
    const auto sink = capture_with(Caller::off, false);
    fieldlog::get("site").info("m", {{"caller", 1}, {"function", 2}, {"tid", 3}, {"callers", 4}});
    REQUIRE(sink->lines().size() == 1);
    CHECK(sink->lines()[0] == kHead + R"(,"fields.caller":1,"fields.function":2,"fields.tid":3,"callers":4})");
}

TEST_CASE("a source path is cut to its last two components", "[call_site]") {
    using fieldlog::detail::source_file_tail;
    CHECK(source_file_tail("/home/u/src/http/server.cpp") == "http/server.cpp");
    CHECK(source_file_tail("http/server.cpp") == "http/server.cpp");
    CHECK(source_file_tail("server.cpp") == "server.cpp");
    CHECK(source_file_tail("/server.cpp") == "/server.cpp");
    CHECK(source_file_tail("") == "");
}

TEST_CASE("caller and tid are read from TOML, globally and per sink", "[call_site][config]") {
    const Config config = Config::parse(R"(caller = "function"
tid = true
[[sinks]]
type = "stdout"
caller = false
tid = false
[[sinks]]
type = "stderr"
caller = true
)",
                                        "app.toml");
    CHECK(config.caller == Caller::with_function);
    CHECK(config.tid);
    REQUIRE(config.sinks.size() == 2);
    CHECK(config.sinks[0].caller == Caller::off);
    CHECK(config.sinks[0].tid == false);
    CHECK(config.sinks[1].caller == Caller::on);
    CHECK_FALSE(config.sinks[1].tid.has_value());
    CHECK(Config::parse("").caller == Caller::off);
    CHECK_THROWS_WITH(Config::parse("caller = \"yes\"", "app.toml"),
                      "app.toml:1: caller: expected true, false or \"function\", got \"yes\"");
    CHECK_THROWS_WITH(Config::parse("tid = 1", "app.toml"), "app.toml:1: tid: expected true or false, got 1");
}

TEST_CASE("a level value past fatal is written as fatal in every format, by every entry", "[call_site][levels]") {
    const auto past_fatal = static_cast<fieldlog::Level>(200);
    const std::vector<fieldlog::Field> runtime_fields{{"k", 1}};
    for (const Format format : {Format::json, Format::logfmt, Format::console}) {
        const auto sink = capture_with(Caller::off, false, format);
        const fieldlog::Logger log = fieldlog::get("site");
        log.log(past_fatal, "m");
        log.log(past_fatal, "m", runtime_fields);
        log.log(past_fatal, "m {}", 1);
        FIELDLOG_LOG(log, past_fatal, "m");
        FIELDLOG_LOG(log, past_fatal, "m", runtime_fields);
        FIELDLOG_LOG(log, past_fatal, "m {}", 1);
        FIELDLOG_LOG_EVERY_N(log, past_fatal, 1, "m");
        REQUIRE(sink->lines().size() == 7);
        for (const std::string& line : sink->lines()) {
            INFO(line);
            CHECK(line.find(format == Format::json     ? R"("level":"fatal")"
                            : format == Format::logfmt ? "level=fatal"
                                                       : "FATAL") != std::string::npos);
        }
    }
}

TEST_CASE("the crash record names its thread as every record does, once, never as fields.tid",
          "[call_site][crash]") {
    const fieldlog::detail::FinalNote note{.signo = 11, .code = 1, .address = nullptr, .fault = true, .thread_id = 4711};
    for (const Format format : {Format::json, Format::logfmt, Format::console, Format::otel}) {
        for (const std::uint8_t facts : {fieldlog::thread_id_fact, fieldlog::CallFact(fieldlog::thread_id_fact | fieldlog::caller_fact)}) {
            // The crash path's options always have the thread id on (tests/exit_paths_test.cpp
            // sees it in the `fatal` line of a sink without `tid`).
            const fieldlog::EncoderOptions options{.format = format, .call_facts = facts};
            fieldlog::detail::Buffer out;
            fieldlog::detail::Buffer scratch;
            fieldlog::detail::encode_final_record(options, out, scratch, note);
            const std::string line(out.view());
            INFO(line);
            const std::string member = format == Format::json     ? R"("tid":4711)"
                                       : format == Format::otel   ? R"("thread.id":4711)"
                                                                  : "tid=4711";
            CHECK(line.find(member) != std::string::npos);
            CHECK(line.find(member, line.find(member) + 1) == std::string::npos);
            CHECK(line.find("fields.") == std::string::npos);
            CHECK(line.find("SIGSEGV") != std::string::npos);
        }
    }
}

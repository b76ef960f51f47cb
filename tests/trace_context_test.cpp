// SPDX-License-Identifier: MIT
// fieldlog::TraceContext: the traceparent grammar rule by rule (level 1, and a later version's
// rules), tracestate's list grammar, limits and truncation, fresh ids from root() and child()
// (per thread, and again after fork), and a Scope opened from a context in every format.
// tests/trace/otel_crosscheck.py compares the same parsing with the OpenTelemetry Go SDK.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::Format;
using fieldlog::Scope;
using fieldlog::TraceContext;
using fieldlog::TraceparentError;
using fieldlog_test::capture;

namespace {

const std::string trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
const std::string parent_id = "00f067aa0ba902b7";

std::string header(std::string_view version, std::string_view trace, std::string_view parent, std::string_view flags) {
    return std::string(version) + "-" + std::string(trace) + "-" + std::string(parent) + "-" + std::string(flags);
}

std::string member(char key, std::size_t value_size) { return fmt::format("{}={}", key, std::string(value_size, 'v')); }

std::string tracestate_of(std::string_view tracestate) {
    const auto context = TraceContext::parse(header("00", trace_id, parent_id, "01"), tracestate);
    REQUIRE(context);
    return std::string(context->tracestate());
}

}  // namespace

TEST_CASE("a valid traceparent gives its ids and the sampled flag, and formats back canonical", "[trace]") {
    struct Case {
        std::string input;
        std::string flags;  ///< expected trace-flags after parsing
        std::string canonical;
    };
    const std::string v00 = header("00", trace_id, parent_id, "01");
    const Case cases[] = {
        {v00, "01", v00},
        {header("00", trace_id, parent_id, "00"), "00", header("00", trace_id, parent_id, "00")},
        // Unknown flags are ignored and sent as zero.
        {header("00", trace_id, parent_id, "ff"), "01", v00},
        {header("00", trace_id, parent_id, "02"), "00", header("00", trace_id, parent_id, "00")},
        // A later version: its four fields are used, what follows them ignored, sent as 00.
        {header("cc", trace_id, parent_id, "01"), "01", v00},
        {header("cc", trace_id, parent_id, "09") + "-what-the-future-holds", "01", v00},
        {header("fe", trace_id, parent_id, "01") + "-", "01", v00},
        // HTTP's optional whitespace around the value.
        {" \t" + v00 + "\t ", "01", v00},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.input) {
            CHECK(TraceContext::check(c.input) == TraceparentError::none);
            const auto context = TraceContext::parse(c.input);
            REQUIRE(context);
            CHECK(context->trace_id_hex().view() == trace_id);
            CHECK(context->span_id_hex().view() == parent_id);
            CHECK(context->flags_hex().view() == c.flags);
            CHECK(context->is_sampled() == (c.flags == "01"));
            CHECK(context->traceparent().view() == c.canonical);
            char out[TraceContext::traceparent_size + 1];
            out[TraceContext::traceparent_size] = '#';
            CHECK(context->format(out) == out + TraceContext::traceparent_size);
            CHECK(out[TraceContext::traceparent_size] == '#');
            CHECK(std::string_view(out, TraceContext::traceparent_size) == c.canonical);
            CHECK(context->tracestate().empty());
        }
    }
}

TEST_CASE("a malformed traceparent is refused with the rule it breaks", "[trace]") {
    struct Case {
        std::string input;
        TraceparentError error;
    };
    const std::string upper_trace = "4BF92F3577B34DA6A3CE929D0E0E4736";
    const Case cases[] = {
        {"", TraceparentError::bad_version},
        {"0", TraceparentError::bad_version},
        {"0-" + trace_id, TraceparentError::bad_version},
        {header("0A", trace_id, parent_id, "01"), TraceparentError::bad_version},
        {header("g0", trace_id, parent_id, "01"), TraceparentError::bad_version},
        {"00_" + trace_id + "-" + parent_id + "-01", TraceparentError::bad_version},
        {header("ff", trace_id, parent_id, "01"), TraceparentError::version_ff},
        {header("00", trace_id, parent_id, "01") + "-", TraceparentError::bad_length},
        {header("00", trace_id, parent_id, "01") + "-extra", TraceparentError::bad_length},
        {header("00", trace_id, parent_id, "1"), TraceparentError::bad_length},
        {header("00", trace_id.substr(1), parent_id, "01"), TraceparentError::bad_length},
        {header("cc", trace_id, parent_id, "1"), TraceparentError::bad_length},
        {header("00", upper_trace, parent_id, "01"), TraceparentError::bad_trace_id},
        {header("00", trace_id.substr(0, 31) + "g", parent_id, "01"), TraceparentError::bad_trace_id},
        {"00-" + trace_id + "_" + parent_id + "-01", TraceparentError::bad_trace_id},
        {header("00", std::string(32, '0'), parent_id, "01"), TraceparentError::zero_trace_id},
        {header("00", trace_id, "00F067AA0BA902B7", "01"), TraceparentError::bad_parent_id},
        {"00-" + trace_id + "-" + parent_id + "_01", TraceparentError::bad_parent_id},
        {header("00", trace_id, std::string(16, '0'), "01"), TraceparentError::zero_parent_id},
        {header("00", trace_id, parent_id, "0G"), TraceparentError::bad_flags},
        {header("00", trace_id, parent_id, "-1"), TraceparentError::bad_flags},
        {header("00", trace_id, parent_id, "AB"), TraceparentError::bad_flags},
        {header("cc", trace_id, parent_id, "01") + ".what-the-future-holds", TraceparentError::bad_flags},
        {"00 " + trace_id.substr(1) + "-" + parent_id + "-01", TraceparentError::bad_version},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.input) {
            CHECK(TraceContext::check(c.input) == c.error);
            CHECK_FALSE(TraceContext::parse(c.input, "congo=t61rcWkgMzE"));
            CHECK(to_string(c.error) != to_string(TraceparentError::none));
        }
    }
}

TEST_CASE("tracestate is kept canonical: no optional whitespace, no empty members", "[trace][tracestate]") {
    CHECK(tracestate_of("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE") == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    CHECK(tracestate_of(" rojo=1 ,\t congo=2\t") == "rojo=1,congo=2");
    CHECK(tracestate_of(",, ,rojo=1,,\t,congo=2,") == "rojo=1,congo=2");
    CHECK(tracestate_of("") == "");
    CHECK(tracestate_of(" , ") == "");
    // Leading spaces belong to the value, trailing ones are optional whitespace.
    CHECK(tracestate_of("rojo=  two words  ") == "rojo=  two words");
    CHECK(tracestate_of("tenant7@sys=x,a_-*/0=y") == "tenant7@sys=x,a_-*/0=y");
}

TEST_CASE("an invalid tracestate is dropped whole and the traceparent kept", "[trace][tracestate]") {
    std::string thirty_two;
    std::string thirty_three;
    for (int i = 0; i < 33; ++i) {
        const std::string m = fmt::format("k{}=v", i);  // (g++ 12 -Wrestrict misfires on "k" + to_string)
        if (i < 32) thirty_two += (i > 0 ? "," : "") + m;
        thirty_three += (i > 0 ? "," : "") + m;
    }
    CHECK(tracestate_of(thirty_two) == thirty_two);
    const std::string invalid[] = {
        thirty_three,                                   // more than 32 members
        "rojo=1,congo=2,rojo=3",                        // a key twice
        "Rojo=1",                                       // uppercase key
        "1rojo=1",                                      // a simple key starts with a letter
        "ro jo=1",                                      // space in a key
        "rojo=",                                        // empty value
        "=1",                                           // empty key
        "rojo",                                         // no '='
        "rojo=a=b",                                     // '=' in the value
        "rojo=a\tb",                                    // tab in the value
        "rojo=caf\xc3\xa9",                             // non-ASCII in the value
        "rojo=" + std::string(257, 'v'),                // value over 256 characters
        std::string(257, 'k') + "=1",                   // key over 256 characters
        std::string(242, 't') + "@sys=1",               // tenant over 241 characters
        "t@" + std::string(15, 's') + "=1",             // system over 14 characters
        "t@1sys=1",                                     // system starts with a letter
        "t@=1",                                         // empty system
        "rojo=1,congo",                                 // one bad member spoils the list
    };
    for (const std::string& tracestate : invalid) {
        DYNAMIC_SECTION(tracestate.substr(0, 40)) {
            const auto context = TraceContext::parse(header("00", trace_id, parent_id, "01"), tracestate);
            REQUIRE(context);
            CHECK(context->trace_id_hex().view() == trace_id);
            CHECK(context->tracestate().empty());
        }
    }
    // At the limits of the grammar.
    for (const std::string& longest : {std::string(256, 'k') + "=1", "k=" + std::string(256, 'v'),
                                       std::string(241, '7') + "@" + std::string(14, 's') + "=1"}) {
        CHECK(tracestate_of(longest) == longest);
    }
}

TEST_CASE("a tracestate over 512 characters loses whole members, long ones first, then from the end",
          "[trace][tracestate]") {
    // 5 members of 102 characters (+4 commas = 514): the last goes.
    std::string five;
    for (char k = 'a'; k < 'f'; ++k) {
        if (!five.empty()) five += ',';
        five += member(k, 100);
    }
    CHECK(tracestate_of(five) == five.substr(0, 4 * 102 + 3));
    // A member over 128 characters goes before shorter ones, wherever it is.
    const std::string with_long = member('a', 100) + "," + member('b', 200) + "," + member('c', 100) + "," +
                                  member('d', 100) + "," + member('e', 10);
    CHECK(with_long.size() > TraceContext::max_tracestate_size);
    CHECK(tracestate_of(with_long) ==
          member('a', 100) + "," + member('c', 100) + "," + member('d', 100) + "," + member('e', 10));
    // Exactly 512 is kept.
    const std::string exact = member('a', 254) + "," + member('b', 253);
    REQUIRE(exact.size() == 512);
    CHECK(tracestate_of(exact) == exact);
}

TEST_CASE("root() starts a trace and child() a span of it, with fresh non-zero ids", "[trace]") {
    const TraceContext root = TraceContext::root();
    CHECK(root.trace_id_hex().view() != std::string(32, '0'));
    CHECK(root.span_id_hex().view() != std::string(16, '0'));
    CHECK_FALSE(root.is_sampled());
    CHECK(root.tracestate().empty());
    CHECK(TraceContext::root(TraceContext::sampled | 0x80).flags() == TraceContext::sampled);
    const auto parsed = TraceContext::parse(root.traceparent().view());
    REQUIRE(parsed);
    CHECK(parsed->traceparent().view() == root.traceparent().view());

    const auto incoming = TraceContext::parse(header("00", trace_id, parent_id, "01"), "congo=t61rcWkgMzE");
    REQUIRE(incoming);
    std::set<std::string> spans{std::string(incoming->span_id_hex().view())};
    std::set<std::string> traces;
    for (int i = 0; i < 10'000; ++i) {
        const TraceContext child = incoming->child();
        CHECK(child.trace_id_hex().view() == trace_id);
        CHECK(child.flags() == incoming->flags());
        CHECK(child.tracestate() == "congo=t61rcWkgMzE");
        spans.insert(std::string(child.span_id_hex().view()));
        traces.insert(std::string(TraceContext::root().trace_id_hex().view()));
    }
    CHECK(spans.size() == 10'001);
    CHECK(traces.size() == 10'000);
}

TEST_CASE("each thread draws its own ids", "[trace][concurrent]") {
    constexpr int per_thread = 2'000;
    std::vector<std::string> ids[2];
    std::thread threads[2];
    for (int t = 0; t < 2; ++t) {
        threads[t] = std::thread([&out = ids[t]] {
            for (int i = 0; i < per_thread; ++i) out.emplace_back(TraceContext::root().span_id_hex().view());
        });
    }
    for (std::thread& t : threads) t.join();
    std::set<std::string> all(ids[0].begin(), ids[0].end());
    all.insert(ids[1].begin(), ids[1].end());
    CHECK(all.size() == 2 * per_thread);
}

TEST_CASE("a forked child draws ids other than its parent's", "[trace]") {
    (void)TraceContext::root();  // this thread's generator is seeded before the fork
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const auto text = TraceContext::root().traceparent();
        const bool written = ::write(pipe_fds[1], text.chars.data(), text.chars.size()) ==
                             static_cast<ssize_t>(text.chars.size());
        ::_exit(written ? 0 : 1);
    }
    ::close(pipe_fds[1]);
    const auto ours = TraceContext::root().traceparent();
    std::string theirs(TraceContext::traceparent_size, '\0');
    std::size_t got = 0;
    while (got < theirs.size()) {
        const ssize_t n = ::read(pipe_fds[0], theirs.data() + got, theirs.size() - got);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    REQUIRE(got == theirs.size());
    CHECK(TraceContext::check(theirs) == TraceparentError::none);
    CHECK(theirs.substr(3, 32) != ours.view().substr(3, 32));
}

TEST_CASE("a scope opened from a trace context adds trace_id, span_id and trace_flags, in every format", "[trace][scope]") {
    const auto context = TraceContext::parse(header("00", trace_id, parent_id, "01"));
    REQUIRE(context);
    struct Case {
        Format format;
        std::string fields;
    };
    const Case cases[] = {
        {Format::json, R"(,"trace_id":")" + trace_id + R"(","span_id":")" + parent_id + R"(","trace_flags":"01","status":200})"},
        {Format::logfmt, " trace_id=" + trace_id + " span_id=" + parent_id + " trace_flags=01 status=200"},
        {Format::console, " trace_id=" + trace_id + " span_id=" + parent_id + " trace_flags=01 status=200"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(to_string(c.format)) {
            auto sink = capture(c.format);
            const auto log = fieldlog::get("svc");
            {
                const Scope trace{*context};
                log.info("in", {{"status", 200}});
            }
            log.info("out");
            const auto lines = sink->lines();
            REQUIRE(lines.size() == 2);
            CHECK(lines[0].ends_with(c.fields));
            CHECK(lines[1].find("trace_id") == std::string::npos);
        }
    }
}

TEST_CASE("a scope from a parse result opens the context, or nothing when there is none", "[trace][scope]") {
    auto sink = capture();
    const auto log = fieldlog::get("svc");
    {
        const Scope trace{TraceContext::parse(header("00", trace_id, parent_id, "00"))};
        log.info("valid");
    }
    {
        const Scope outer{{"request_id", "r-1"}};
        const Scope trace{TraceContext::parse(header("00", std::string(32, '0'), parent_id, "00"))};
        log.info("invalid");
    }
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == fieldlog_test::info_line("valid", R"(,"trace_id":")" + trace_id + R"(","span_id":")" + parent_id +
                                                            R"(","trace_flags":"00")"));
    CHECK(lines[1] == fieldlog_test::info_line("invalid", R"(,"request_id":"r-1")"));
}

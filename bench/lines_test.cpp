// SPDX-License-Identifier: MIT
// Proves the logger comparison compares like with like: each workload of bench/workloads.hpp
// rendered by fieldlog (MemorySink) and by spdlog (its pattern into an ostream) gives the same
// line apart from the `ts` value, and that line is the JSON the README shows and valid.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>

#include "support/test_support.hpp"
#include "workloads.hpp"

namespace {

using namespace fieldlog_bench;

/// The line with its ts value emptied; fails the test when the line does not start with ts.
std::string without_ts(const std::string& line) {
    static const std::regex ts_re(R"(^\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z")");
    std::smatch match;
    INFO(line);
    REQUIRE(std::regex_search(line, match, ts_re));
    return R"({"ts":"")" + match.suffix().str();
}

enum class Workload { static_msg, fields_10, ctx_10 };

std::string fieldlog_line(Workload workload) {
    const auto sink = fieldlog_test::capture();
    const fieldlog::Logger log = fieldlog::get(kLoggerName);
    switch (workload) {
        case Workload::static_msg: log_static_msg(log); break;
        case Workload::fields_10: log_fields_10(log); break;
        case Workload::ctx_10: log_static_msg(fieldlog_ctx_10(log)); break;
    }
    const std::vector<std::string> lines = sink->lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
}

std::string spdlog_line(Workload workload) {
    std::ostringstream stream;
    const auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream);
    const auto log = make_spdlog_logger(sink, workload == Workload::ctx_10 ? spdlog_ctx_10_context() : std::string());
    switch (workload) {
        case Workload::static_msg:
        case Workload::ctx_10: log_static_msg(*log); break;
        case Workload::fields_10: log_fields_10(*log); break;
    }
    log->flush();
    std::string text = stream.str();
    REQUIRE(text.ends_with('\n'));
    text.pop_back();
    REQUIRE(text.find('\n') == std::string::npos);
    return text;
}

/// The fields of zap's benchmark as JSON, written out by hand from the values in workloads.hpp.
std::string expected_fields_10() {
    const std::string user =
        R"({"name":"Jane Doe","email":"jane@test.com","createdAt":"1980-01-01T12:00:00.000000000Z"})";
    std::string times;
    std::string users;
    for (int i = 0; i < 10; ++i) {
        if (i > 0) {
            times += ',';
            users += ',';
        }
        times += "\"1970-01-01T00:00:0";
        times += static_cast<char>('0' + i);
        times += ".000000000Z\"";
        users += user;
    }
    return R"("int":1,"ints":[1,2,3,4,5,6,7,8,9,0],"string":"a","strings":["a","b","c","d","e","f","g","h","i","j"],)"
           R"("time":"1970-01-01T00:00:00.000000000Z","times":[)" +
           times + R"(],"user1":)" + user + R"(,"user2":)" + user + R"(,"users":[)" + users +
           R"json(],"error":"Connection refused (generic:111)")json";
}

}  // namespace

TEST_CASE("Every workload renders the same line through fieldlog and spdlog apart from ts", "[bench]") {
    const std::string head =
        R"({"ts":"","level":"info","logger":"bench","msg":"Test logging, but use a somewhat realistic message length.")";
    const struct {
        const char* name;
        Workload workload;
        std::string expected;
    } cases[] = {
        {"static_msg", Workload::static_msg, head + "}"},
        {"fields_10", Workload::fields_10, head + "," + expected_fields_10() + "}"},
        {"ctx_10", Workload::ctx_10, head + "," + expected_fields_10() + "}"},
    };
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const std::string ours = fieldlog_line(c.workload);
            const std::string theirs = spdlog_line(c.workload);
            CHECK(without_ts(ours) == c.expected);
            CHECK(without_ts(theirs) == without_ts(ours));
            CHECK(fieldlog_test::jsonl_errors(std::vector<std::string>{ours, theirs}).empty());
        }
    }
}

TEST_CASE("The spdlog pattern escapes a percent sign in bound context", "[bench]") {
    CHECK(spdlog_pattern(R"("rate":"5%")") ==
          R"({"ts":"%Y-%m-%dT%H:%M:%S.%FZ","level":"%l","logger":"%n","msg":%v,"rate":"5%%"})");
}

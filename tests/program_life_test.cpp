// SPDX-License-Identifier: MIT
// The edges of a program's life (tests/after_main_child.cpp is the program): records logged
// after main returns — from static destructors of both kinds, atexit handlers and a thread
// still running — reach the file; after shutdown() they are dropped and counted; shutdown()
// before the first record keeps the default stdout pipeline from starting.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace {

struct Run {
    int status;
    std::string stdout_text;
};

Run run_child(const std::string& log, const char* mode, const char* end) {
    const std::string command = std::string(FIELDLOG_AFTER_MAIN_CHILD) + " '" + log + "' " + mode + " " + end;
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string output;
    char chunk[4096];
    while (const std::size_t n = std::fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
    return Run{::pclose(pipe), output};
}

std::size_t count_of(const std::vector<std::string>& lines, const std::string& piece) {
    std::size_t n = 0;
    for (const std::string& line : lines) n += line.find(piece) != std::string::npos ? 1 : 0;
    return n;
}

}  // namespace

TEST_CASE("Records logged after main returns reach the sinks, in every mode", "[program_life]") {
    for (const char* mode : {"sync", "async"}) {
        DYNAMIC_SECTION(mode) {
            const fieldlog_test::TempDir dir;
            const std::string log = dir.file("life.log");
            const Run run = run_child(log, mode, "return");
            CHECK(run.status == 0);
            CHECK(run.stdout_text == "dropped_after_shutdown=0\n");
            const std::vector<std::string> lines = fieldlog_test::read_lines(log);
            CHECK(fieldlog_test::jsonl_file_errors(log).empty());
            CHECK(count_of(lines, R"("msg":"main returns")") == 1);
            // Before fieldlog's exit handler (made after the first configure()) …
            CHECK(count_of(lines, R"("from":"function-local static made after configure")") == 1);
            CHECK(count_of(lines, R"("from":"atexit registered after configure")") == 1);
            // … and after it, when the sinks are already flushed for the last time.
            CHECK(count_of(lines, R"("from":"function-local static made before configure")") == 1);
            CHECK(count_of(lines, R"("from":"atexit registered before configure")") == 1);
            CHECK(count_of(lines, R"("from":"namespace-scope static")") == 1);
            CHECK(count_of(lines, R"("msg":"late thread")") == 100);
            CHECK(lines.size() == 106);
            // The late thread's records in order, right before the namespace-scope destructor's.
            REQUIRE(lines.size() == 106);
            CHECK(lines[104].find(R"("n":99)") != std::string::npos);
            CHECK(lines[105].find("namespace-scope static") != std::string::npos);
        }
    }
}

TEST_CASE("After shutdown() records are dropped and counted, also after main", "[program_life]") {
    for (const char* mode : {"sync", "async"}) {
        DYNAMIC_SECTION(mode) {
            const fieldlog_test::TempDir dir;
            const std::string log = dir.file("life.log");
            const Run run = run_child(log, mode, "shutdown");
            CHECK(run.status == 0);
            const std::vector<std::string> lines = fieldlog_test::read_lines(log);
            REQUIRE(lines.size() == 1);
            CHECK(lines[0].find(R"("msg":"main returns")") != std::string::npos);
            // 2 before the exit handler, 3 after it, and the late thread's 100.
            CHECK(run.stdout_text == "dropped_after_shutdown=105\n");
        }
    }
}

TEST_CASE("shutdown() before the first record keeps the default stdout pipeline from starting", "[program_life]") {
    const fieldlog_test::TempDir dir;
    const Run run = run_child(dir.file("unused.log"), "sync", "shut_first");
    CHECK(run.status == 0);
    CHECK(run.stdout_text == "dropped_after_shutdown=2\n");  // its record and the namespace-scope destructor's
}

// SPDX-License-Identifier: MIT
// install_signal_handlers() next to handlers the application installed before it: per-group
// opt-in and chaining. Each test runs tests/signal_child.cpp, which installs its own handler
// for one signal, logs 100 numbered records into a file whose buffer only a flush writes early,
// and gets the signal; its handler writes what it saw to a marker file. The checks: what is on
// disk, what the application's handler saw (and when: the records on disk before it ran), and
// how the process ended.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;

constexpr int kRecords = 100;  // signal_child.cpp logs this many before the signal (and after, if it lives)

struct ChildRun {
    int status = 0;
    std::string log_path;
    std::string marker;
};

/// Runs the child for `how` to its end (killed, and the test failed, if it hangs).
ChildRun run_child(const fieldlog_test::TempDir& dir, const std::string& how) {
    ChildRun run{.log_path = dir.file("child.log")};
    const std::string marker_path = dir.file("marker");
    std::vector<std::string> args{FIELDLOG_SIGNAL_CHILD, how, run.log_path, marker_path};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    REQUIRE(::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (::waitpid(pid, &run.status, WNOHANG) != pid) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &run.status, 0);
            FAIL("the child hung");
        }
        std::this_thread::sleep_for(1ms);
    }
    run.marker = fieldlog_test::read_file(marker_path);
    return run;
}

/// The log holds records 0 .. count-1 in order, each once; after a crash (`fatal_signal` not
/// empty) one `fatal` record naming that signal follows them.
void check_log(const std::string& path, int count, std::string_view fatal_signal) {
    const std::vector<std::string> lines = fieldlog_test::read_lines(path);
    CHECK(fieldlog_test::jsonl_file_errors(path).empty());
    const std::size_t records = static_cast<std::size_t>(count);
    REQUIRE(lines.size() == records + (fatal_signal.empty() ? 0 : 1));
    for (std::size_t n = 0; n < records; ++n) {
        INFO(lines[n]);
        CHECK(lines[n].find("\"msg\":\"record\",\"n\":" + std::to_string(n) + "}") != std::string::npos);
    }
    if (fatal_signal.empty()) return;
    const std::string& fatal = lines.back();
    INFO(fatal);
    CHECK(fatal.find("\"level\":\"fatal\"") != std::string::npos);
    CHECK(fatal.find("\"signal\":\"" + std::string(fatal_signal) + "\"") != std::string::npos);
}

bool killed_by(int status, int signo) { return WIFSIGNALED(status) && WTERMSIG(status) == signo; }
bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }

}  // namespace

TEST_CASE("A SIGABRT handler from before ours runs after the crash flush, and the process still dies by SIGABRT",
          "[signals]") {
    const fieldlog_test::TempDir dir;
    const ChildRun run = run_child(dir, "abort");
    CHECK(killed_by(run.status, SIGABRT));
    CHECK(run.marker == "abort handler: signal " + std::to_string(SIGABRT) + "\n");
    check_log(run.log_path, kRecords, "SIGABRT");
}

TEST_CASE("Queued async records the crash path writes carry a redacted key's value as [REDACTED], never the secret",
          "[signals][redact]") {
    const fieldlog_test::TempDir dir;
    const ChildRun run = run_child(dir, "abort_redact");
    CHECK(killed_by(run.status, SIGABRT));
    const std::string log = fieldlog_test::read_file(run.log_path);
    CHECK(log.find("hunter2-XyZZy") == std::string::npos);  // signal_child.cpp's kSecret
    const std::vector<std::string> lines = fieldlog_test::read_lines(run.log_path);
    REQUIRE(lines.size() == kRecords + 1);
    for (int n = 0; n < kRecords; ++n) {
        INFO(lines[static_cast<std::size_t>(n)]);
        CHECK(lines[static_cast<std::size_t>(n)].find(R"("msg":"record [REDACTED] )" + std::to_string(n) +
                                                      R"(","api_secret":"[REDACTED]","n":)" + std::to_string(n) + "}") !=
              std::string::npos);
    }
    CHECK(lines.back().find("\"signal\":\"SIGABRT\"") != std::string::npos);
}

TEST_CASE("With the writer stuck, the crash path writes the queued records, their context not encoded yet as fields",
          "[signals][context]") {
    const fieldlog_test::TempDir dir;
    const ChildRun run = run_child(dir, "abort_writer_stuck");
    CHECK(killed_by(run.status, SIGABRT));
    CHECK(run.marker == "abort handler: signal " + std::to_string(SIGABRT) + "\n");
    std::vector<std::string> lines = fieldlog_test::read_lines(run.log_path);
    CHECK(fieldlog_test::jsonl_file_errors(run.log_path).empty());
    REQUIRE(lines.size() == kRecords + 2);
    CHECK(lines.front().find(R"("msg":"the writer's last")") != std::string::npos);
    for (int n = 0; n < kRecords; ++n) {
        // Bound, then scope, then the call's fields; the call's `n` replaces the bound one.
        const std::string& line = lines[static_cast<std::size_t>(n) + 1];
        INFO(line);
        CHECK(line.find(R"("msg":"record","svc":"a","request_id":"r-1","n":)" + std::to_string(n) + "}") !=
              std::string::npos);
    }
    CHECK(lines.back().find("\"signal\":\"SIGABRT\"") != std::string::npos);
}

TEST_CASE("The crash path keeps to each sink's logger rules, with more filtered sinks than one word of bits",
          "[signals][routing]") {
    const fieldlog_test::TempDir dir;
    const ChildRun run = run_child(dir, "abort_filtered");
    CHECK(killed_by(run.status, SIGABRT));
    check_log(run.log_path, kRecords, "SIGABRT");  // nothing of the excluded logger
}

TEST_CASE("A SA_SIGINFO SIGSEGV handler from before ours gets the real fault's siginfo after the crash flush",
          "[signals]") {
    const fieldlog_test::TempDir dir;
    const ChildRun run = run_child(dir, "segv");
    CHECK(killed_by(run.status, SIGSEGV));
    // Delivered by the kernel on the re-executed store: the fault's own code and address.
    CHECK(run.marker == "segv handler: signal " + std::to_string(SIGSEGV) + ", si_signo " + std::to_string(SIGSEGV) +
                            ", si_code " + std::to_string(SEGV_ACCERR) + ", at the page\n");
    check_log(run.log_path, kRecords, "SIGSEGV");
}

TEST_CASE("SIGTERM with the application's handler: our flush first, then its handler, and the process lives on",
          "[signals]") {
    const fieldlog_test::TempDir dir;
    const ChildRun run = run_child(dir, "sigterm");
    CHECK(exited_with(run.status, 0));
    // Ours took SIGTERM, without the SA_RESTART the application's handler did not ask for; its
    // handler ran with its mask, got SIGTERM's siginfo and found every record on disk.
    CHECK(run.marker == "SIGTERM action: another, no SA_RESTART\n"
                        "sigterm handler: signal " + std::to_string(SIGTERM) + ", si_signo " + std::to_string(SIGTERM) +
                            ", from this process, SIGTERM blocked, SIGUSR1 blocked, lines on disk " +
                            std::to_string(kRecords) + "\n");
    check_log(run.log_path, 2 * kRecords, "");  // the records after the signal too: no halt
}

TEST_CASE("SignalOptions{.terminate = false} leaves SIGTERM to the application, and the crash path still works",
          "[signals]") {
    const fieldlog_test::TempDir dir;
    SECTION("SIGTERM: the application's handler alone, no flush of ours") {
        const ChildRun run = run_child(dir, "sigterm_opted_out");
        CHECK(exited_with(run.status, 0));
        CHECK(run.marker == "SIGTERM action: the application's, no SA_RESTART\n"
                            "sigterm handler: signal " + std::to_string(SIGTERM) + ", si_signo " +
                                std::to_string(SIGTERM) +
                                ", from this process, SIGTERM blocked, SIGUSR1 blocked, lines on disk 0\n");
        check_log(run.log_path, 2 * kRecords, "");  // written at the normal exit
    }
    SECTION("abort(): the crash flush and the `fatal` record") {
        const ChildRun run = run_child(dir, "abort_opted_out");
        CHECK(killed_by(run.status, SIGABRT));
        CHECK(run.marker == "SIGTERM action: the application's, no SA_RESTART\n");
        check_log(run.log_path, kRecords, "SIGABRT");
    }
}

TEST_CASE("By default configure() takes the crash signals: a handler from before and a crash reporter from after "
          "both run, and every record is on disk",
          "[signals]") {
    for (const std::string how : {"default_abort", "default_abort_sync", "default_segv", "default_segv_sync"}) {
        DYNAMIC_SECTION(how) {
            const fieldlog_test::TempDir dir;
            const ChildRun run = run_child(dir, how);
            const bool segv = how.starts_with("default_segv");
            const int signo = segv ? SIGSEGV : SIGABRT;
            CHECK(killed_by(run.status, signo));
            // The reporter first, before our flush (the sink held every line); then ours; then the
            // application's handler, which finds the records and the `fatal` record on disk.
            CHECK(run.marker == "reporter: signal " + std::to_string(signo) + ", lines on disk 0\n"
                                "application: signal " + std::to_string(signo) + ", lines on disk " +
                                    std::to_string(kRecords + 1) + "\n");
            check_log(run.log_path, kRecords, segv ? "SIGSEGV" : "SIGABRT");
        }
    }
}

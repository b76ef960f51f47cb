// SPDX-License-Identifier: MIT
// Exit paths of a process that logs. Each run starts tests/exit_child.cpp, which logs numbered
// records from three threads into a file or stdout and then ends one way (return, exit(),
// terminate, SIGTERM from us, a fault, abort, a stack overflow, a fault on the writer thread)
// at a random point, with the signal handlers configure() installs by default or with an
// explicit install_signal_handlers(). The child marks each record accepted (its logging call returned) in a shared file;
// the parent then checks what is on disk: every accepted record exactly once and in its
// thread's order, only the last line possibly torn, one final `fatal` record after a crash,
// and the exit status of the original signal.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

namespace {

using namespace std::chrono_literals;

constexpr int kThreads = 3;

struct ExitCase {
    const char* how;
    const char* mode;  // "async" or "sync"
    int signal;        // 0: a normal exit with `status`
    int status;
    int runs;
    const char* handlers = "default";  // or "installed": install_signal_handlers() in the child
    const char* sink = "file";         // or "stdout", which the parent points at the log file
};

// 136 runs in all, each with its own random kill point.
constexpr ExitCase kCases[] = {
    {"return", "async", 0, 0, 5},
    {"exit", "async", 0, 7, 5},
    {"terminate", "async", SIGABRT, 0, 10},
    {"terminate", "sync", SIGABRT, 0, 5},
    {"sigterm", "async", SIGTERM, 0, 15},
    {"sigterm", "sync", SIGTERM, 0, 5},
    {"segv", "async", SIGSEGV, 0, 20},
    {"segv", "sync", SIGSEGV, 0, 10},
    {"abort", "async", SIGABRT, 0, 15},
    {"abort", "sync", SIGABRT, 0, 5},
    {"stack_overflow", "async", SIGSEGV, 0, 5},
    {"writer_segv", "async", SIGSEGV, 0, 10},
    {"segv", "async", SIGSEGV, 0, 5, "installed"},
    {"sigterm", "async", SIGTERM, 0, 5, "installed"},
    {"abort", "sync", SIGABRT, 0, 5, "default", "stdout"},
    {"segv", "async", SIGSEGV, 0, 5, "default", "stdout"},
    {"sigterm", "sync", SIGTERM, 0, 3, "default", "stdout"},
    {"terminate", "async", SIGABRT, 0, 3, "default", "stdout"},
};

/// The progress file the child writes: one accepted-record count per thread.
class Progress {
public:
    explicit Progress(const std::string& path) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        REQUIRE(fd_ >= 0);
        REQUIRE(::ftruncate(fd_, sizeof(std::uint64_t) * kThreads) == 0);
        void* shared = ::mmap(nullptr, sizeof(std::uint64_t) * kThreads, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        REQUIRE(shared != MAP_FAILED);
        counts_ = static_cast<std::atomic<std::uint64_t>*>(shared);
    }
    ~Progress() {
        ::munmap(counts_, sizeof(std::uint64_t) * kThreads);
        ::close(fd_);
    }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    [[nodiscard]] std::uint64_t accepted(int thread) const {
        return counts_[thread].load(std::memory_order_acquire);
    }
    [[nodiscard]] std::uint64_t total() const {
        std::uint64_t sum = 0;
        for (int t = 0; t < kThreads; ++t) sum += accepted(t);
        return sum;
    }

private:
    int fd_ = -1;
    std::atomic<std::uint64_t>* counts_ = nullptr;  // shared with the child: see exit_child.cpp
};

/// Waits for the child; kills it (and fails) if it hangs.
int wait_for(pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    int status = 0;
    for (;;) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) return status;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            FAIL("the child hung");
        }
        std::this_thread::sleep_for(1ms);
    }
}

std::uint64_t number_after(const std::string& line, const std::string& key) {
    const std::size_t at = line.find("\"" + key + "\":");
    if (at == std::string::npos) return UINT64_MAX;
    return std::strtoull(line.c_str() + at + key.size() + 3, nullptr, 10);
}

/// What the file must show after the child ended. The strict JSON check (a Python process)
/// runs on the first run of each case only, to keep the suite fast.
void check_log(const std::string& path, const Progress& progress, const ExitCase& c, bool strict_json) {
    const std::string content = fieldlog_test::read_file(path);
    std::vector<std::string> lines = fieldlog_test::read_lines(path);
    const bool torn = !content.empty() && content.back() != '\n';
    if (torn) lines.pop_back();  // only the very last line may be cut short
    if (strict_json) CHECK(fieldlog_test::jsonl_errors(lines).empty());

    std::array<std::uint64_t, kThreads> next{};
    std::size_t fatal_at = SIZE_MAX;
    std::size_t fatal_records = 0;
    std::size_t first_bad = SIZE_MAX;
    for (std::size_t i = 0; i < lines.size() && first_bad == SIZE_MAX; ++i) {
        const std::string& line = lines[i];
        if (!line.starts_with("{\"ts\":\"") || !line.ends_with("}")) first_bad = i;
        if (line.find("\"level\":\"fatal\"") != std::string::npos) {
            ++fatal_records;
            fatal_at = i;
            continue;
        }
        const std::uint64_t t = number_after(line, "t");
        const std::uint64_t n = number_after(line, "n");
        if (t >= kThreads || n != next[t]) {  // each record once, in its thread's order
            first_bad = i;
        } else {
            ++next[t];
        }
    }
    if (first_bad != SIZE_MAX) FAIL("line " << first_bad << " is out of place: " << lines[first_bad]);
    for (int t = 0; t < kThreads; ++t) {
        INFO("thread " << t);
        CHECK(next[static_cast<std::size_t>(t)] >= progress.accepted(t));
    }
    const bool crash = c.signal != 0 && c.signal != SIGTERM;
    if (crash) {
        REQUIRE(fatal_records == 1);
        CHECK(fatal_at == lines.size() - 1);
        const std::string expected_name = c.signal == SIGSEGV ? "SIGSEGV" : "SIGABRT";
        CHECK(lines[fatal_at].find("\"signal\":\"" + expected_name + "\"") != std::string::npos);
        CHECK(lines[fatal_at].find("\"logger\":\"fieldlog\"") != std::string::npos);
        // Its thread, as every record names one ("tid"), though the sink writes no tid.
        CHECK(lines[fatal_at].find("\"tid\":") != std::string::npos);
        CHECK(lines[fatal_at].find("fields.") == std::string::npos);
    } else {
        CHECK(fatal_records == 0);
    }
}

}  // namespace

TEST_CASE("A child that logs and then dies leaves every accepted record on disk", "[exit_paths]") {
    // One seed per process: Catch re-enters this test once per section, and the sections must
    // come out the same each time.
    static const unsigned seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937 random(seed);
    for (const ExitCase& c : kCases) {
        for (int run = 0; run < c.runs; ++run) {
            const std::uint64_t kill_at = 1 + random() % 3000;
            DYNAMIC_SECTION(c.how << " (" << c.mode << ", " << c.handlers << " handlers, " << c.sink << ") run " << run
                                  << ", kill at record " << kill_at) {
                const fieldlog_test::TempDir dir;
                const std::string log_path = dir.file("child.log");
                const Progress progress(dir.file("progress"));
                const bool to_stdout = std::string_view(c.sink) == "stdout";
                const pid_t pid = fieldlog_test::spawn_process({FIELDLOG_EXIT_CHILD, c.how, log_path, dir.file("progress"),
                                               std::to_string(kThreads), std::to_string(kill_at), c.mode, c.handlers,
                                               c.sink},
                                              to_stdout ? log_path : std::string());
                if (std::string_view(c.how) == "sigterm") {
                    // Kill at a random moment once the child is busy logging.
                    const auto deadline = std::chrono::steady_clock::now() + 20s;
                    while (progress.total() < kill_at && std::chrono::steady_clock::now() < deadline) {
                        std::this_thread::sleep_for(100us);
                    }
                    REQUIRE(::kill(pid, SIGTERM) == 0);
                }
                const int status = wait_for(pid);
                if (c.signal == 0) {
                    REQUIRE(WIFEXITED(status));
                    CHECK(WEXITSTATUS(status) == c.status);
                    for (int t = 0; t < kThreads; ++t) CHECK(progress.accepted(t) > 0);
                } else {
                    REQUIRE(WIFSIGNALED(status));
                    CHECK(WTERMSIG(status) == c.signal);
                }
                check_log(log_path, progress, c, run == 0);
            }
        }
    }
}

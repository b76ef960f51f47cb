// SPDX-License-Identifier: MIT
// Rotation and compression at every exit. Each run starts tests/rotation_exit_child.cpp, which
// logs numbered records into a file sink that rotates often and gzips the rotated files, and
// ends one way: return from main, exit(), abort() or SIGTERM from us through the handlers
// configure() installs by default, or SIGKILL from us at a random point, in sync and async mode. We then read the files as a log shipper does,
// globbing `app.log*`, and check: no record twice, every .gz whole, no other name in the glob;
// after a normal exit every accepted record is there and nothing is hidden; after a crash, no
// record twice right away, and every accepted record once the next start of a sink on the
// same path has run.
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;

constexpr int kThreads = 2;  // as in the child

struct ExitPath {
    const char* how;
    int signal;  // 0: a normal exit with `status`
    int status;
};

constexpr ExitPath kPaths[] = {
    {"return", 0, 0}, {"exit", 0, 7}, {"abort", SIGABRT, 0}, {"term", SIGTERM, 0}, {"kill", SIGKILL, 0}};

/// The child's progress file: accepted records per thread, then its "was compressing" mark.
class Progress {
public:
    explicit Progress(const std::string& path) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        REQUIRE(fd_ >= 0);
        REQUIRE(::ftruncate(fd_, kBytes) == 0);
        void* shared = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        REQUIRE(shared != MAP_FAILED);
        slots_ = static_cast<std::atomic<std::uint64_t>*>(shared);
    }
    ~Progress() {
        ::munmap(slots_, kBytes);
        ::close(fd_);
    }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    [[nodiscard]] std::uint64_t accepted(int thread) const { return load(thread); }
    [[nodiscard]] std::uint64_t total() const { return load(0) + load(1); }
    [[nodiscard]] bool was_compressing() const { return load(kThreads) != 0; }

private:
    static constexpr std::size_t kBytes = sizeof(std::uint64_t) * (kThreads + 1);
    [[nodiscard]] std::uint64_t load(int slot) const {
        return slots_[slot].load(std::memory_order_acquire);
    }
    int fd_ = -1;
    std::atomic<std::uint64_t>* slots_ = nullptr;  // shared with the child: see rotation_exit_child.cpp
};

pid_t spawn_child(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);  // the crash report
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(spawned == 0);
    return pid;
}

/// Waits for the child; kills it (and fails) if it hangs.
int wait_for(pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    int status = 0;
    for (;;) {
        if (::waitpid(pid, &status, WNOHANG) == pid) return status;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            FAIL("the child hung");
        }
        std::this_thread::sleep_for(1ms);
    }
}

/// The whole of a gzip file, or nullopt when it is torn or damaged (zlib checks CRC and length).
std::optional<std::string> inflate_whole(const std::string& path) {
    const std::string packed = fieldlog_test::read_file(path);
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 16) != Z_OK) return std::nullopt;
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    stream.avail_in = static_cast<uInt>(packed.size());
    std::string out;
    std::array<char, 64 * 1024> block{};
    int result = Z_OK;
    while (result == Z_OK) {
        stream.next_out = reinterpret_cast<Bytef*>(block.data());
        stream.avail_out = block.size();
        result = inflate(&stream, Z_NO_FLUSH);
        out.append(block.data(), block.size() - stream.avail_out);
        if (result == Z_BUF_ERROR && stream.avail_in == 0) break;  // cut short
    }
    const bool whole = result == Z_STREAM_END && stream.avail_in == 0;
    inflateEnd(&stream);
    if (!whole) return std::nullopt;
    return out;
}

std::uint64_t number_after(const std::string& line, const std::string& key) {
    const std::size_t at = line.find("\"" + key + "\":");
    if (at == std::string::npos) return UINT64_MAX;
    return std::strtoull(line.c_str() + at + key.size() + 3, nullptr, 10);
}

/// What a shipper reading `app.log*` in `dir` finds: how often each record (thread, number).
struct Seen {
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> records;
    int hidden = 0;  ///< names outside the glob (".app.log.…") left in the directory
};

Seen read_as_shipper(const std::filesystem::path& dir, bool torn_live_line_allowed) {
    Seen seen;
    std::map<std::uint64_t, int> forms;  // slot: how many of path.N and path.N.gz exist
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(".app.log")) ++seen.hidden;
        if (::fnmatch("app.log*", name.c_str(), 0) != 0) continue;
        INFO(name);
        std::string text;
        if (name != "app.log") {
            std::size_t digits_end = 0;
            const std::string rest = name.substr(8);
            const bool slot_name = name.starts_with("app.log.") && !rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]));
            const std::uint64_t slot = slot_name ? std::stoull(rest, &digits_end) : 0;
            const std::string suffix = slot_name ? rest.substr(digits_end) : rest;
            if (!slot_name || (suffix != "" && suffix != ".gz")) FAIL("a name in the glob that is not a log file: " << name);
            ++forms[slot];
            if (forms[slot] > 1) FAIL("app.log." << slot << " is there both plain and compressed");
            if (suffix == ".gz") {
                std::optional<std::string> inflated = inflate_whole(entry.path().string());
                if (!inflated) FAIL(name << " is not a whole gzip file");
                text = std::move(*inflated);
            } else {
                text = fieldlog_test::read_file(entry.path().string());
            }
            if (!text.empty() && text.back() != '\n') FAIL(name << " ends in a torn record");
        } else {
            text = fieldlog_test::read_file(entry.path().string());
            if (!text.empty() && text.back() != '\n') {
                CHECK(torn_live_line_allowed);
                text.erase(text.rfind('\n') + 1);  // a crash may tear the last line of the live file
            }
        }
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = text.find('\n', at);
            const std::string line = text.substr(at, end - at);
            at = end + 1;
            if (line.find("\"level\":\"fatal\"") != std::string::npos) continue;  // the crash record
            const std::uint64_t t = number_after(line, "t"), n = number_after(line, "n");
            if (t >= kThreads || n == UINT64_MAX) FAIL("a line that is no record of the child: " << line);
            ++seen.records[{t, n}];
        }
    }
    return seen;
}

/// No record twice; with `whole`, each thread's records from its first on without a gap (what
/// the process wrote last may be lost in a crash, nothing before it); with `progress`, every
/// accepted one there.
void check_records(const Seen& seen, bool whole, const Progress* progress) {
    std::array<std::uint64_t, kThreads> next{};
    for (const auto& [record, count] : seen.records) {  // in order: by thread, then number
        if (count > 1) FAIL("record t=" << record.first << " n=" << record.second << " is there " << count << " times");
        if (whole && record.second != next[record.first]) {
            FAIL("records t=" << record.first << " n=" << next[record.first] << " to " << record.second - 1 << " are missing");
        }
        next[record.first] = record.second + 1;
    }
    if (progress == nullptr) return;
    for (int t = 0; t < kThreads; ++t) {
        const auto thread = static_cast<std::uint64_t>(t);
        for (std::uint64_t n = 0; n < progress->accepted(t); ++n) {
            if (!seen.records.contains({thread, n})) FAIL("accepted record t=" << t << " n=" << n << " is missing");
        }
    }
}

/// Runs each exit path `runs` times in each mode; prints what the runs met. With
/// `expect_compressing`, some runs of each path must have ended during a compression.
void run_matrix(int runs, bool expect_compressing) {
    static const unsigned seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937 random(seed);
    for (const char* mode : {"sync", "async"}) {
        for (const ExitPath& path : kPaths) {
            int compressing_at_end = 0, hidden_left = 0;
            for (int run = 0; run < runs; ++run) {
                const std::uint64_t records = 20'000 + random() % 40'000;
                INFO(path.how << " (" << mode << ") run " << run << ", " << records << " records");
                const fieldlog_test::TempDir dir;
                const std::string log_path = dir.file("app.log");
                const std::string progress_path = dir.path().parent_path() / (dir.path().filename().string() + ".progress");
                const Progress progress(progress_path);
                const pid_t pid = spawn_child({FIELDLOG_ROTATION_EXIT_CHILD, path.how, log_path, progress_path,
                                               std::to_string(records), mode});
                bool compressing_at_signal = false;
                if (path.signal == SIGKILL || path.signal == SIGTERM) {
                    const auto deadline = std::chrono::steady_clock::now() + 60s;
                    while (progress.total() < records && std::chrono::steady_clock::now() < deadline) {
                        std::this_thread::sleep_for(200us);
                    }
                    // The worker's hidden temporary: a compression is going on as the signal leaves.
                    compressing_at_signal = std::filesystem::exists(dir.path() / ".app.log.gz.tmp");
                    REQUIRE(::kill(pid, path.signal) == 0);
                }
                const int status = wait_for(pid);
                if (path.signal == 0) {
                    REQUIRE(WIFEXITED(status));
                    CHECK(WEXITSTATUS(status) == path.status);
                } else {
                    REQUIRE(WIFSIGNALED(status));
                    CHECK(WTERMSIG(status) == path.signal);
                }
                const bool crash = path.signal != 0;
                const Seen at_end = read_as_shipper(dir.path(), crash);
                if (progress.was_compressing() || compressing_at_signal || at_end.hidden > 0) ++compressing_at_end;
                if (crash) {
                    check_records(at_end, false, nullptr);  // at most once, even before the next start
                    if (at_end.hidden > 0) ++hidden_left;
                    const Progress unused(progress_path + ".start");
                    const pid_t next =
                        spawn_child({FIELDLOG_ROTATION_EXIT_CHILD, "start", log_path, progress_path + ".start", "0", mode});
                    const int next_status = wait_for(next);
                    REQUIRE(WIFEXITED(next_status));
                    REQUIRE(WEXITSTATUS(next_status) == 0);
                    std::filesystem::remove(progress_path + ".start");
                    const Seen after_start = read_as_shipper(dir.path(), true);
                    // Async: SIGKILL takes the records still queued, accepted or not.
                    const bool queue_lost = path.signal == SIGKILL && std::string_view(mode) == "async";
                    check_records(after_start, true, queue_lost ? nullptr : &progress);
                    CHECK(after_start.hidden == 0);
                } else {
                    check_records(at_end, true, &progress);
                    CHECK(at_end.hidden == 0);  // a normal exit puts every file back
                }
                std::filesystem::remove(progress_path);
            }
            std::printf("rotation at exit: %s (%s): %d runs, %d ended during a compression, %d left a hidden file\n",
                        path.how, mode, runs, compressing_at_end, hidden_left);
            std::fflush(stdout);
            INFO(path.how << " (" << mode << ")");
            if (expect_compressing) CHECK(compressing_at_end > 0);
        }
    }
}

int runs_from_env(int otherwise) {
    const char* value = std::getenv("FIELDLOG_ROTATION_EXIT_RUNS");
    return value != nullptr && std::atoi(value) > 0 ? std::atoi(value) : otherwise;
}

}  // namespace

TEST_CASE("rotated files are each seen once and whole at every exit of a process that compresses them",
          "[file_sink][rotated_files][exit_paths]") {
    run_matrix(runs_from_env(2), false);
}

// The full matrix, many runs of each exit path and mode (minutes), hidden from the default run:
// `fieldlog_tests "[rotation_exit_full]"`; FIELDLOG_ROTATION_EXIT_RUNS sets the runs of either.
TEST_CASE("rotated files are each seen once and whole at every exit, 50 runs of each", "[.][rotation_exit_full]") {
    run_matrix(runs_from_env(50), true);
}

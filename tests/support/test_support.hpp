// SPDX-License-Identifier: MIT
// Shared test helpers: a temporary directory, the strict JSON-lines check, file reading, stderr
// sent to a file, a fixed clock for golden lines, a logger wired to a MemorySink, polling with a
// deadline, and a skip CTest reports.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fieldlog/fieldlog.hpp"

/// Ends the test case as skipped and says why: a direct run prints the reason as a warning,
/// and CTest reports the test as skipped (tests/CMakeLists.txt sets SKIP_REGULAR_EXPRESSION to
/// "test skipped:"). Only in a TEST_CASE body, whose `return` ends the test.
#define FIELDLOG_TEST_SKIP(reason)              \
    do {                                        \
        WARN("test skipped: " << reason);       \
        return;                                 \
    } while (false)

/// A cross build's tests run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR; tests/CMakeLists.txt
/// defines FIELDLOG_TEST_EMULATED). The few that meet the emulator's own limits skip there,
/// saying which; docs/platforms.md lists them.
#if FIELDLOG_TEST_EMULATED
#define FIELDLOG_SKIP_UNDER_EMULATION(reason) FIELDLOG_TEST_SKIP("under qemu-user: " << reason)
#else
#define FIELDLOG_SKIP_UNDER_EMULATION(reason) static_cast<void>(0)
#endif
/// qemu-user 7.2: a fork() while another thread runs can leave the child stuck on the emulator's
/// own locks, or failing its assertion (a fork() from one thread works).
#define FIELDLOG_SKIP_THREADED_FORK_UNDER_EMULATION() \
    FIELDLOG_SKIP_UNDER_EMULATION("a fork() while another thread runs can hang the emulator in the child")

namespace fieldlog_test {

/// The target's options of type `Options`; throws (failing the test) when it holds others.
template <typename Options>
const Options& options_of(const fieldlog::SinkTarget& target) {
    const Options* options = target.options<Options>();
    if (options == nullptr) throw std::logic_error("the sink's target holds other options");
    return *options;
}

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

/// Every line of the file (without '\n').
std::vector<std::string> read_lines(const std::string& path);
/// The whole file.
std::string read_file(const std::string& path);

/// Runs the strict JSON-lines checker on `path`; returns its output ("" when valid).
std::string jsonl_file_errors(const std::string& path);
/// Writes `lines` (each + '\n') to a temp file and checks them: jsonl_errors({line}) works.
std::string jsonl_errors(const std::vector<std::string>& lines);

/// What `gzip -dc` makes of the file (gzip checks its CRC and length), or nullopt when gzip
/// refuses it: a torn or damaged .gz.
std::optional<std::string> gunzip(const std::string& path);
/// True when `gzip -t` accepts the file.
bool gzip_accepts(const std::string& path);

/// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) {
            ::setenv(name, value->c_str(), 1);
        } else {
            ::unsetenv(name);
        }
    }
    ~ScopedEnv() {
        if (old_) {
            ::setenv(name_, old_->c_str(), 1);
        } else {
            ::unsetenv(name_);
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

/// A sink keeping its lines (without '\n') that says it is a terminal, as a TTY stdout does, so
/// console output gets colour. Read its lines once the logging is done.
class TerminalSink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& record) override { lines.emplace_back(record.bytes.data(), record.bytes.size() - 1); }
    void flush() override {}
    [[nodiscard]] fieldlog::SinkInfo info() const override { return {.terminal = true}; }
    std::vector<std::string> lines;
};

/// Points stderr at a file (default /dev/null) while alive: sinks report failures there.
class StderrTo {
public:
    explicit StderrTo(const std::string& path = "/dev/null");
    ~StderrTo();
    StderrTo(const StderrTo&) = delete;
    StderrTo& operator=(const StderrTo&) = delete;

private:
    int saved_;
};

/// A listening TCP socket on 127.0.0.1 (`port` 0: one the kernel picks), closed with the
/// object. Throws std::system_error when it cannot be made.
class TcpListener {
public:
    explicit TcpListener(int port = 0);
    ~TcpListener();
    TcpListener(const TcpListener&) = delete;
    TcpListener& operator=(const TcpListener&) = delete;
    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] int port() const noexcept { return port_; }

private:
    int fd_;
    int port_ = 0;
};

/// Calls `done` every few milliseconds until it returns true (true) or `limit` passed (false):
/// waiting for another thread or process without a timed assertion.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(10));

/// Starts `args` (the program first) with its standard output, and with `stderr_to` its
/// standard error, sent to those files; returns its pid. Fails the test when it cannot start.
int spawn_process(const std::vector<std::string>& args, const std::string& stdout_to, const std::string& stderr_to = {});

/// 2026-11-30T08:38:11.123456789Z, the clock of every golden line.
fieldlog::Timestamp fixed_clock() noexcept;

/// The JSON line of an info record at the fixed clock: `members` follow the message as written.
std::string info_line(std::string_view msg, std::string_view members, std::string_view logger = "svc");

/// Configures one MemorySink (JSON unless `format` says otherwise) with the fixed clock at
/// level trace, and returns the sink. `async`: in async mode (read the sink after a flush()).
std::shared_ptr<fieldlog::MemorySink> capture(fieldlog::Format format = fieldlog::Format::json, bool async = false);

/// A configuration whose one sink, a NullSink, takes no record: no record passes the pipeline's
/// lowest level, as if there were no sinks at all.
fieldlog::Config no_output();
/// Lets go of every sink a test configured: configures no_output().
void release_sinks();

}  // namespace fieldlog_test

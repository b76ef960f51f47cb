// SPDX-License-Identifier: MIT
// stdout/stderr and memory sinks (NullSink is inline in its header).
#include "fieldlog/sinks/basic_sinks.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <mutex>

#include "sinks/common/sink_io.hpp"

namespace fieldlog {
namespace {

constexpr std::size_t kMaxIov = 64;

}  // namespace

StdoutSink::StdoutSink(StdStream stream)
    : stream_(stream),
      fd_(stream == StdStream::out ? STDOUT_FILENO : STDERR_FILENO),
      terminal_(::isatty(fd_) == 1),
      destination_(Destination::plain),
      guard_sigpipe_(false),
      errors_(std::make_unique<detail::ErrorReporter>()) {
    struct stat st {};
    if (::fstat(fd_, &st) == 0) {
        if (S_ISSOCK(st.st_mode)) destination_ = Destination::socket;
        if (S_ISFIFO(st.st_mode)) destination_ = Destination::pipe;
    }
    guard_sigpipe_ = destination_ == Destination::pipe && detail::may_raise_sigpipe(fd_);
}

StdoutSink::~StdoutSink() = default;

SinkInfo StdoutSink::info() const { return {.kind = stream_ == StdStream::out ? "stdout" : "stderr", .terminal = terminal_}; }

void StdoutSink::write(const RecordView& record) {
    iovec iov{const_cast<char*>(record.bytes.data()), record.bytes.size()};
    write_records(&iov, 1);
}

void StdoutSink::write_batch(std::span<const RecordView> records) {
    // On a pipe, a write of at most PIPE_BUF bytes is atomic: keep each write under it.
    const std::size_t byte_limit = destination_ == Destination::pipe ? PIPE_BUF : SIZE_MAX;
    iovec iov[kMaxIov];
    while (!records.empty()) {
        int count = 0;
        std::size_t bytes = 0;
        for (const RecordView& record : records) {
            if (count == static_cast<int>(kMaxIov) || (count > 0 && bytes + record.bytes.size() > byte_limit)) break;
            iov[count++] = iovec{const_cast<char*>(record.bytes.data()), record.bytes.size()};
            bytes += record.bytes.size();
        }
        write_records(iov, count);
        records = records.subspan(static_cast<std::size_t>(count));
    }
}

void StdoutSink::write_on_crash(std::span<const RecordView> records) noexcept {
    if (records.empty()) return;  // nothing buffered: every write went straight out
    iovec iov[kMaxIov];
    std::size_t written = 0;
    while (!records.empty()) {
        const std::size_t count = std::min(records.size(), kMaxIov);
        for (std::size_t i = 0; i < count; ++i) {
            iov[i] = iovec{const_cast<char*>(records[i].bytes.data()), records[i].bytes.size()};
        }
        records = records.subspan(count);
        if (destination_ == Destination::socket) {
            detail::send_all(fd_, iov, static_cast<int>(count), written);
        } else {
            write_while_dying(iov, static_cast<int>(count));
        }
    }
}

void StdoutSink::write_while_dying(iovec* iov, int count) noexcept {
    std::size_t written = 0;
    // SIGPIPE stays blocked if this write raised it: the process is on its way down, and a
    // SIGPIPE must not replace the signal it dies of.
    sigset_t pipe_only, previous, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    detail::write_all(fd_, iov, count, written);
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 0) pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void StdoutSink::write_records(iovec* iov, int count) noexcept {
    std::size_t sizes[kMaxIov];
    for (int i = 0; i < count; ++i) sizes[i] = iov[i].iov_len;
    std::size_t written = 0;
    int error = 0;
    if (destination_ == Destination::socket) {
        error = detail::send_all(fd_, iov, count, written);
    } else if (guard_sigpipe_) {
        const detail::SigpipeGuard guard;
        error = detail::write_all(fd_, iov, count, written);
    } else {
        error = detail::write_all(fd_, iov, count, written);
    }
    if (error == 0) return;
    std::uint64_t done = 0;
    std::size_t done_bytes = 0;
    for (int i = 0; i < count && done_bytes + sizes[i] <= written; ++i) {
        done_bytes += sizes[i];
        ++done;
    }
    count_dropped(static_cast<std::uint64_t>(count) - done);
    count_error();
    if (fd_ != STDERR_FILENO) errors_->report("stdout", "", "write", error);
}

void MemorySink::write(const RecordView& record) {
    std::string_view line(record.bytes.data(), record.bytes.size());
    if (line.ends_with('\n')) line.remove_suffix(1);
    lines_.emplace_back(line);
}

std::vector<std::string> MemorySink::lines() const {
    const std::lock_guard lock(mutex());
    return lines_;
}

void MemorySink::clear() {
    const std::lock_guard lock(mutex());
    lines_.clear();
}

}  // namespace fieldlog

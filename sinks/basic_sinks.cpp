// stdout/stderr and memory sinks (NullSink is inline in its header).
#include "fieldlog/sinks/basic_sinks.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>

#include "sink_io.hpp"

namespace fieldlog {
namespace {

constexpr std::size_t kMaxIov = 64;

}  // namespace

StdoutSink::StdoutSink(StdStream stream)
    : fd_(stream == StdStream::out ? STDOUT_FILENO : STDERR_FILENO),
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

void StdoutSink::write(std::span<const char> record) {
    iovec iov{const_cast<char*>(record.data()), record.size()};
    write_records(&iov, 1, record.size());
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
        write_records(iov, count, bytes);
        records = records.subspan(static_cast<std::size_t>(count));
    }
}

void StdoutSink::emergency_write(std::span<const char> record) noexcept {
    iovec iov{const_cast<char*>(record.data()), record.size()};
    std::size_t written = 0;
    if (destination_ == Destination::socket) {
        detail::send_all(fd_, &iov, 1, written);
        return;
    }
    // SIGPIPE stays blocked if this write raised it: the process is on its way down, and a
    // SIGPIPE must not replace the signal it dies of.
    sigset_t pipe_only, previous, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    detail::write_all(fd_, &iov, 1, written);
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 0) pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void StdoutSink::write_records(iovec* iov, int count, std::size_t bytes) noexcept {
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
    if (error == 0) {
        count_written(static_cast<std::uint64_t>(count), bytes);
        return;
    }
    std::uint64_t done = 0;
    std::size_t done_bytes = 0;
    for (int i = 0; i < count && done_bytes + sizes[i] <= written; ++i) {
        done_bytes += sizes[i];
        ++done;
    }
    count_written(done, done_bytes);
    count_dropped(static_cast<std::uint64_t>(count) - done);
    count_error();
    if (fd_ != STDERR_FILENO) errors_->report("stdout", "", "write", error);
}

void MemorySink::write(std::span<const char> record) {
    std::string_view line(record.data(), record.size());
    if (line.ends_with('\n')) line.remove_suffix(1);
    {
        const std::lock_guard lock(mutex_);
        lines_.emplace_back(line);
    }
    count_written(1, record.size());
}

std::vector<std::string> MemorySink::lines() const {
    const std::lock_guard lock(mutex_);
    return lines_;
}

void MemorySink::clear() {
    const std::lock_guard lock(mutex_);
    lines_.clear();
}

}  // namespace fieldlog

// stdout/stderr and memory sinks (NullSink is inline in its header).
#include "fieldlog/sinks/basic_sinks.hpp"

#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <pthread.h>

namespace fieldlog {
namespace {

/// Blocks SIGPIPE for this thread while it lives, and swallows a SIGPIPE the write raised,
/// so a vanished reader is an EPIPE to count, not the death of the process.
class SigpipeGuard {
public:
    SigpipeGuard() noexcept {
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        sigpending(&pending_before_);
        pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask_);
    }
    ~SigpipeGuard() {
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE) && !sigismember(&pending_before_, SIGPIPE)) {
            sigset_t pipe_only;
            sigemptyset(&pipe_only);
            sigaddset(&pipe_only, SIGPIPE);
            const timespec no_wait{0, 0};
            sigtimedwait(&pipe_only, nullptr, &no_wait);
        }
        pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    }
    SigpipeGuard(const SigpipeGuard&) = delete;
    SigpipeGuard& operator=(const SigpipeGuard&) = delete;

private:
    sigset_t old_mask_{};
    sigset_t pending_before_{};
};

/// Writes all of iov (retrying short writes and EINTR); false on error.
bool write_all(int fd, iovec* iov, int count) noexcept {
    while (count > 0) {
        const ssize_t n = ::writev(fd, iov, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        auto left = static_cast<std::size_t>(n);
        while (count > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            ++iov;
            --count;
        }
        if (count > 0) {
            iov->iov_base = static_cast<char*>(iov->iov_base) + left;
            iov->iov_len -= left;
        }
    }
    return true;
}

}  // namespace

/// Only pipes and sockets raise SIGPIPE; for files and terminals the guard's syscalls are skipped.
static bool may_raise_sigpipe(int fd) noexcept {
    struct stat st {};
    return ::fstat(fd, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
}

StdoutSink::StdoutSink(StdStream stream)
    : fd_(stream == StdStream::out ? STDOUT_FILENO : STDERR_FILENO),
      terminal_(::isatty(fd_) == 1),
      guard_sigpipe_(may_raise_sigpipe(fd_)) {}

void StdoutSink::write(std::span<const char> record) {
    iovec iov{const_cast<char*>(record.data()), record.size()};
    if (write_guarded(&iov, 1)) {
        count_written(1, record.size());
    } else {
        count_error();
        count_dropped();
    }
}

void StdoutSink::write_batch(std::span<const RecordView> records) {
    constexpr std::size_t kMaxIov = 64;
    iovec iov[kMaxIov];
    while (!records.empty()) {
        const std::size_t count = std::min(records.size(), kMaxIov);
        std::size_t bytes = 0;
        for (std::size_t i = 0; i < count; ++i) {
            iov[i] = iovec{const_cast<char*>(records[i].bytes.data()), records[i].bytes.size()};
            bytes += records[i].bytes.size();
        }
        if (write_guarded(iov, static_cast<int>(count))) {
            count_written(count, bytes);
        } else {
            count_error();
            count_dropped(count);
        }
        records = records.subspan(count);
    }
}

bool StdoutSink::write_guarded(iovec* iov, int count) noexcept {
    if (!guard_sigpipe_) return write_all(fd_, iov, count);
    const SigpipeGuard guard;
    return write_all(fd_, iov, count);
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

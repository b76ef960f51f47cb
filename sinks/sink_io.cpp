// POSIX plumbing shared by the sinks: whole writes, SIGPIPE containment, rate-limited error
// reports and fork detection. Runs on the record path only when something failed.
#include "sink_io.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace fieldlog::detail {
namespace {

sigset_t sigpipe_only() noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    return set;
}

std::atomic<std::uint64_t> g_fork_generation{0};

void after_fork_in_child() noexcept { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

SigpipeGuard::SigpipeGuard() noexcept {
    const sigset_t pipe_only = sigpipe_only();
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask_);
}

SigpipeGuard::~SigpipeGuard() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
        const sigset_t pipe_only = sigpipe_only();
        const timespec no_wait{0, 0};
        sigtimedwait(&pipe_only, nullptr, &no_wait);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

bool may_raise_sigpipe(int fd) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) return false;
    struct sigaction action {};
    return ::sigaction(SIGPIPE, nullptr, &action) != 0 || action.sa_handler != SIG_IGN;
}

namespace {

/// Calls `transfer(iov, count)` (one writev or sendmsg) until all of `iov` went out, retrying
/// short transfers and EINTR; returns 0 or the errno that stopped it.
template <typename Transfer>
int transfer_all(iovec* iov, int count, std::size_t& written, Transfer transfer) noexcept {
    written = 0;
    while (count > 0) {
        const ssize_t n = transfer(iov, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return EIO;  // nothing taken and no error: do not spin
        auto left = static_cast<std::size_t>(n);
        written += left;
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
    return 0;
}

}  // namespace

int write_all(int fd, iovec* iov, int count, std::size_t& written) noexcept {
    return transfer_all(iov, count, written, [fd](const iovec* v, int c) { return ::writev(fd, v, c); });
}

int send_all(int fd, iovec* iov, int count, std::size_t& written) noexcept {
    return transfer_all(iov, count, written, [fd](iovec* v, int c) {
        msghdr message{};
        message.msg_iov = v;
        message.msg_iovlen = static_cast<std::size_t>(c);
        return ::sendmsg(fd, &message, MSG_NOSIGNAL);
    });
}

void ErrorReporter::report(std::string_view sink, std::string_view target, std::string_view operation,
                           int error) noexcept {
    using namespace std::chrono;
    const std::int64_t now = duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
    std::int64_t last = last_report_ns_.load(std::memory_order_relaxed);
    if (now - last < duration_cast<nanoseconds>(seconds(1)).count() ||
        !last_report_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
        suppressed_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const std::uint64_t swallowed = suppressed_.exchange(0, std::memory_order_relaxed);
    char reason[128];
    const char* text = ::strerror_r(error, reason, sizeof reason);  // GNU: returns the text
    char line[768];
    int size = std::snprintf(line, sizeof line, "fieldlog: %.*s sink%s%.*s: %.*s: %s", static_cast<int>(sink.size()),
                             sink.data(), target.empty() ? "" : " ", static_cast<int>(target.size()), target.data(),
                             static_cast<int>(operation.size()), operation.data(), text);
    if (size < 0) return;
    if (static_cast<std::size_t>(size) >= sizeof line) size = static_cast<int>(sizeof line) - 1;
    if (swallowed > 0) {
        const int more = std::snprintf(line + size, sizeof line - static_cast<std::size_t>(size),
                                       " (and %llu more failures in the last second)",
                                       static_cast<unsigned long long>(swallowed));
        if (more > 0) size = std::min(size + more, static_cast<int>(sizeof line) - 1);
    }
    line[size++] = '\n';
    const SigpipeGuard guard;  // stderr may be a pipe whose reader is gone
    [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, line, static_cast<std::size_t>(size));
}

std::uint64_t fork_generation() noexcept {
    static const bool registered = ::pthread_atfork(nullptr, nullptr, &after_fork_in_child) == 0;
    (void)registered;
    return g_fork_generation.load(std::memory_order_relaxed);
}

}  // namespace fieldlog::detail

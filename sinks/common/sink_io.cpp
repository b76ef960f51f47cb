// SPDX-License-Identifier: MIT
// POSIX plumbing shared by the sinks: whole writes, SIGPIPE checks and fork detection.
#include "sink_io.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <signal.h>

#include <atomic>
#include <cerrno>

namespace fieldlog::detail {
namespace {

std::atomic<std::uint64_t> g_fork_generation{0};

void after_fork_in_child() noexcept { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

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

std::uint64_t fork_generation() noexcept {
    static const bool registered = ::pthread_atfork(nullptr, nullptr, &after_fork_in_child) == 0;
    (void)registered;
    return g_fork_generation.load(std::memory_order_relaxed);
}

}  // namespace fieldlog::detail

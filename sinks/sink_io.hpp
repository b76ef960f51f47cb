// POSIX plumbing the sinks share, below the Sink interface: writing a whole iovec, keeping a
// vanished pipe reader from killing the process with SIGPIPE, rate-limited error reports on
// stderr, and a counter that tells a sink it now lives in a forked child.
// Internal to sinks/; nothing here allocates.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

struct iovec;

namespace fieldlog::detail {

/// Blocks SIGPIPE for this thread while it lives and swallows a SIGPIPE raised meanwhile, so a
/// vanished reader is an EPIPE to count, not the death of the process.
class SigpipeGuard {
public:
    SigpipeGuard() noexcept;
    ~SigpipeGuard();
    SigpipeGuard(const SigpipeGuard&) = delete;
    SigpipeGuard& operator=(const SigpipeGuard&) = delete;

private:
    sigset_t old_mask_{};
    bool was_pending_ = false;
};

/// True when writing to `fd` can raise SIGPIPE (a pipe or a socket) and SIGPIPE is not ignored.
bool may_raise_sigpipe(int fd) noexcept;

/// Writes all of `iov` (retrying short writes and EINTR). Returns 0, or the errno that stopped
/// it; `written` tells how many bytes went out either way. Adjusts `iov` as it goes.
int write_all(int fd, iovec* iov, int count, std::size_t& written) noexcept;
/// write_all for a socket: sendmsg with MSG_NOSIGNAL, so a closed peer is EPIPE, not SIGPIPE.
int send_all(int fd, iovec* iov, int count, std::size_t& written) noexcept;

/// Reports a sink's failures on stderr at most once per second, with the errno text and how
/// many failures the previous second swallowed. Safe from any thread; never raises SIGPIPE.
class ErrorReporter {
public:
    /// "fieldlog: <sink> sink <target>: <operation>: <strerror(error)>", unless rate-limited.
    void report(std::string_view sink, std::string_view target, std::string_view operation, int error) noexcept;

private:
    std::atomic<std::int64_t> last_report_ns_{INT64_MIN / 2};
    std::atomic<std::uint64_t> suppressed_{0};
};

/// Bumped in every child right after fork(); a sink that caches its pid compares it.
std::uint64_t fork_generation() noexcept;

}  // namespace fieldlog::detail

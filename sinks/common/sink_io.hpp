// SPDX-License-Identifier: MIT
// POSIX plumbing the sinks share, below the Sink interface: writing a whole iovec, telling
// whether a write can raise SIGPIPE, and a counter that tells a sink it now lives in a forked
// child (the SIGPIPE guard and the rate-limited error reports are base/error_reporter.hpp).
// Internal to sinks/; nothing here allocates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/error_reporter.hpp"

struct iovec;

namespace fieldlog::detail {

/// True when writing to `fd` can raise SIGPIPE (a pipe or a socket) and SIGPIPE is not ignored.
bool may_raise_sigpipe(int fd) noexcept;

/// Writes all of `iov` (retrying short writes and EINTR). Returns 0, or the errno that stopped
/// it; `written` tells how many bytes went out either way. Adjusts `iov` as it goes.
int write_all(int fd, iovec* iov, int count, std::size_t& written) noexcept;
/// write_all for a socket: sendmsg with MSG_NOSIGNAL, so a closed peer is EPIPE, not SIGPIPE.
int send_all(int fd, iovec* iov, int count, std::size_t& written) noexcept;

/// Bumped in every child right after fork(); a sink that caches its pid compares it.
std::uint64_t fork_generation() noexcept;

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// Rate-limited failure reports on stderr, for every part that must not fail silently and must
// not flood: a sink's failed system call, a sink that threw. Also the SIGPIPE guard such a write
// (and a sink writing to a pipe) needs. Below every layer; nothing here allocates.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <string_view>

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

/// Reports failures on stderr at most once per second, with how many failures the previous
/// second swallowed. Safe from any thread; never raises SIGPIPE.
class ErrorReporter {
public:
    /// "fieldlog: <sink> sink <target>: <operation>: <strerror(error)>", unless rate-limited.
    void report(std::string_view sink, std::string_view target, std::string_view operation, int error) noexcept;
    /// The same with `reason` in place of an errno's text.
    void report(std::string_view sink, std::string_view target, std::string_view operation,
                std::string_view reason) noexcept;
    /// The same, whatever was reported in the last second: a sink's last word as it closes
    /// (what it dropped), which a failure reported just before must not swallow.
    void report_final(std::string_view sink, std::string_view target, std::string_view operation,
                      std::string_view reason) noexcept;

private:
    /// True when a report may go out now (none in the last second), else counts it swallowed.
    bool take_turn() noexcept;

    std::atomic<std::int64_t> last_report_ns_{INT64_MIN / 2};
    std::atomic<std::uint64_t> suppressed_{0};
};

/// "fieldlog: <subject>: <reason>" on stderr, never rate-limited: for what is said once per
/// cause, not per failure, such as an environment variable a configuration ignores.
void report_unlimited(std::string_view subject, std::string_view reason) noexcept;

}  // namespace fieldlog::detail

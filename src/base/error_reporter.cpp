// SPDX-License-Identifier: MIT
// Rate-limited stderr reports and the SIGPIPE guard (see error_reporter.hpp). Runs only when
// something failed.
#include "base/error_reporter.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
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

/// Writes "fieldlog: <text>" and, when some were, how many reports the last second swallowed.
void write_report(std::string_view text, std::uint64_t swallowed) noexcept {
    char line[768];
    int size = std::snprintf(line, sizeof line, "fieldlog: %.*s", static_cast<int>(text.size()), text.data());
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

void ErrorReporter::report(std::string_view sink, std::string_view target, std::string_view operation,
                           int error) noexcept {
    char reason[128];
    report(sink, target, operation, std::string_view(::strerror_r(error, reason, sizeof reason)));  // GNU: returns the text
}

void ErrorReporter::report(std::string_view sink, std::string_view target, std::string_view operation,
                           std::string_view reason) noexcept {
    if (take_turn()) report_final(sink, target, operation, reason);
}

void ErrorReporter::report_final(std::string_view sink, std::string_view target, std::string_view operation,
                                 std::string_view reason) noexcept {
    char text[700];
    const int size = std::snprintf(text, sizeof text, "%.*s sink%s%.*s: %.*s: %.*s", static_cast<int>(sink.size()),
                                   sink.data(), target.empty() ? "" : " ", static_cast<int>(target.size()), target.data(),
                                   static_cast<int>(operation.size()), operation.data(), static_cast<int>(reason.size()),
                                   reason.data());
    if (size < 0) return;
    write_report(std::string_view(text, std::min(static_cast<std::size_t>(size), sizeof text - 1)),
                 suppressed_.exchange(0, std::memory_order_relaxed));
}

bool ErrorReporter::take_turn() noexcept {
    using namespace std::chrono;
    const std::int64_t now = duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
    std::int64_t last = last_report_ns_.load(std::memory_order_relaxed);
    if (now - last < duration_cast<nanoseconds>(seconds(1)).count() ||
        !last_report_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
        suppressed_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    return true;
}

void report_unlimited(std::string_view subject, std::string_view reason) noexcept {
    char text[700];
    const int size = std::snprintf(text, sizeof text, "%.*s: %.*s", static_cast<int>(subject.size()), subject.data(),
                                   static_cast<int>(reason.size()), reason.data());
    if (size < 0) return;
    write_report(std::string_view(text, std::min(static_cast<std::size_t>(size), sizeof text - 1)), 0);
}

}  // namespace fieldlog::detail

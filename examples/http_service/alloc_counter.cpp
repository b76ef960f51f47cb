// SPDX-License-Identifier: MIT
// Counts each global operator new call (the shared replacement in tests/support reports them
// here) under the calling thread's AllocCause. The cause is a plain thread_local
// (constant-initialised, so reading it inside operator new needs no TLS init).
#include "alloc_counter.hpp"

#include <atomic>
#include <cstddef>

#include "counting_new.hpp"

namespace http_service {
namespace {

// One cache line each: service threads and the loggers' threads count on different cores.
struct alignas(64) Counter {
    std::atomic<std::uint64_t> value{0};
};
Counter g_counts[3];

constinit thread_local AllocCause t_cause = AllocCause::logger_thread;

std::uint64_t read(AllocCause cause) noexcept {
    return g_counts[static_cast<std::size_t>(cause)].value.load(std::memory_order_relaxed);
}

}  // namespace

void count_allocation() noexcept {
    g_counts[static_cast<std::size_t>(t_cause)].value.fetch_add(1, std::memory_order_relaxed);
}

AllocCounts alloc_counts() noexcept {
    return AllocCounts{.service = read(AllocCause::service),
                       .logging_call = read(AllocCause::logging_call),
                       .logger_thread = read(AllocCause::logger_thread)};
}

void mark_service_thread() noexcept { t_cause = AllocCause::service; }

LoggingCall::LoggingCall() noexcept : previous_(t_cause) {
    if (previous_ == AllocCause::service) t_cause = AllocCause::logging_call;
}

LoggingCall::~LoggingCall() { t_cause = previous_; }

}  // namespace http_service

void fieldlog_support::on_allocation() noexcept { http_service::count_allocation(); }

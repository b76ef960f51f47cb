// SPDX-License-Identifier: MIT
// The service's heap accounting: global operator new is replaced (tests/support/counting_new.cpp)
// by one that counts each allocation under the cause of the thread that made it. Service
// threads mark themselves; a logging call marks its stretch (LoggingCall); every other thread is
// a logger's own (fieldlog's writer, spdlog's worker), so nothing a logger allocates can hide
// as service.
#pragma once

#include <cstdint>

namespace http_service {

/// What an allocation is charged to.
enum class AllocCause : std::uint8_t {
    service,        ///< a service thread, outside any logging call
    logging_call,   ///< a service thread, inside a logging call (LoggingCall)
    logger_thread,  ///< a thread the service did not start: the loggers' background threads
};

/// Allocations so far, by cause (relaxed reads; totals since the process started).
struct AllocCounts {
    std::uint64_t service = 0;
    std::uint64_t logging_call = 0;
    std::uint64_t logger_thread = 0;
};
[[nodiscard]] AllocCounts alloc_counts() noexcept;

/// Counts one allocation of this thread under its cause (called by the replaced operator new).
void count_allocation() noexcept;

/// Charges this thread's later allocations to the service (call first thing in each thread the
/// service starts, and in main).
void mark_service_thread() noexcept;

/// RAII: while it lives, this thread's allocations are charged to logging. Nests.
class LoggingCall {
public:
    LoggingCall() noexcept;
    ~LoggingCall();
    LoggingCall(const LoggingCall&) = delete;
    LoggingCall& operator=(const LoggingCall&) = delete;

private:
    AllocCause previous_;
};

}  // namespace http_service

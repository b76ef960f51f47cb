// SPDX-License-Identifier: MIT
// Rate limits per call site, off unless written (README: Rate limits):
//   FIELDLOG_INFO_EVERY_N(log, 100, "cache miss", {{"key", key}});  // the 1st, 101st, 201st, …
//   FIELDLOG_WARN_EVERY(log, 1s, "disk almost full");              // at most one a second
//   FIELDLOG_ERROR_FIRST_N(log, 10, "bad row {}", row);            // the first 10, then none
// Each site keeps its own counter (a static in the expansion: lock-free, no heap), counted only
// for calls whose level is enabled. What a site keeps back is never invisible: the next record
// it writes starts with "suppressed": the number kept back since the one before, and
// Metrics::loggers counts every call kept back per logger (FIRST_N writes none again, so
// there only the metric tells).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

#include "fieldlog/logger.hpp"

namespace fieldlog::detail {

/// What a rate-limited site decided for one call.
struct SiteDecision {
    bool write = false;
    std::uint64_t suppressed = 0;  ///< calls kept back since the site last wrote
    explicit operator bool() const noexcept { return write; }
};

/// Writes the 1st call of every `n` (n of 0 or 1: every call).
class EveryNSite {
public:
    SiteDecision pass(std::uint64_t n, const Logger& logger) noexcept {
        const std::uint64_t seen = calls_.fetch_add(1, std::memory_order_relaxed);
        if (n <= 1) return {true, 0};
        if (seen % n == 0) return {true, seen == 0 ? 0 : n - 1};
        LoggerAccess::count_suppressed(logger);
        return {};
    }

private:
    std::atomic<std::uint64_t> calls_{0};
};

/// Writes the first `n` calls, then none.
class FirstNSite {
public:
    SiteDecision pass(std::uint64_t n, const Logger& logger) noexcept {
        // Past n the counter is only read, so it never wraps however long the site is called.
        if (calls_.load(std::memory_order_relaxed) < n && calls_.fetch_add(1, std::memory_order_relaxed) < n) {
            return {true, 0};
        }
        LoggerAccess::count_suppressed(logger);
        return {};
    }

private:
    std::atomic<std::uint64_t> calls_{0};
};

/// Writes at most one call per `period` (steady clock): the first call after it elapsed.
class EverySite {
public:
    SiteDecision pass(std::chrono::nanoseconds period, const Logger& logger) noexcept {
        const std::int64_t now =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
        std::int64_t due = next_due_.load(std::memory_order_relaxed);
        if (now >= due && next_due_.compare_exchange_strong(due, now + period.count(), std::memory_order_relaxed)) {
            std::uint64_t kept_back = 0;
            if (suppressed_.load(std::memory_order_relaxed) != 0) kept_back = suppressed_.exchange(0, std::memory_order_relaxed);
            return {true, kept_back};
        }
        suppressed_.fetch_add(1, std::memory_order_relaxed);
        LoggerAccess::count_suppressed(logger);
        return {};
    }

private:
    std::atomic<std::int64_t> next_due_{std::numeric_limits<std::int64_t>::min()};
    std::atomic<std::uint64_t> suppressed_{0};
};

}  // namespace fieldlog::detail

/// FIELDLOG_LOG with a call-site rate limit: `Site` is one of the classes above, `limit` its
/// argument.
#define FIELDLOG_LOG_LIMITED(logger, level, Site, limit, ...)                                                  \
    do {                                                                                                       \
        if (::fieldlog::detail::compiled_in<FIELDLOG_ACTIVE_LEVEL>(level)) {                                   \
            const ::fieldlog::Logger& fieldlog_logger_ = (logger);                                             \
            if (fieldlog_logger_.enabled(level)) {                                                             \
                static ::fieldlog::detail::Site fieldlog_site_;                                                \
                if (const ::fieldlog::detail::SiteDecision fieldlog_decision_ =                                \
                        fieldlog_site_.pass((limit), fieldlog_logger_)) {                                      \
                    ::fieldlog::detail::LoggerAccess::log_counted(fieldlog_logger_, (level),                   \
                                                                  fieldlog_decision_.suppressed, __VA_ARGS__); \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    } while (false)

#define FIELDLOG_LOG_EVERY_N(logger, level, n, ...) FIELDLOG_LOG_LIMITED(logger, level, EveryNSite, n, __VA_ARGS__)
#define FIELDLOG_LOG_EVERY(logger, level, period, ...) FIELDLOG_LOG_LIMITED(logger, level, EverySite, period, __VA_ARGS__)
#define FIELDLOG_LOG_FIRST_N(logger, level, n, ...) FIELDLOG_LOG_LIMITED(logger, level, FirstNSite, n, __VA_ARGS__)

#define FIELDLOG_TRACE_EVERY_N(logger, n, ...) FIELDLOG_LOG_EVERY_N(logger, ::fieldlog::Level::trace, n, __VA_ARGS__)
#define FIELDLOG_DEBUG_EVERY_N(logger, n, ...) FIELDLOG_LOG_EVERY_N(logger, ::fieldlog::Level::debug, n, __VA_ARGS__)
#define FIELDLOG_INFO_EVERY_N(logger, n, ...) FIELDLOG_LOG_EVERY_N(logger, ::fieldlog::Level::info, n, __VA_ARGS__)
#define FIELDLOG_WARN_EVERY_N(logger, n, ...) FIELDLOG_LOG_EVERY_N(logger, ::fieldlog::Level::warn, n, __VA_ARGS__)
#define FIELDLOG_ERROR_EVERY_N(logger, n, ...) FIELDLOG_LOG_EVERY_N(logger, ::fieldlog::Level::error, n, __VA_ARGS__)

#define FIELDLOG_TRACE_EVERY(logger, period, ...) FIELDLOG_LOG_EVERY(logger, ::fieldlog::Level::trace, period, __VA_ARGS__)
#define FIELDLOG_DEBUG_EVERY(logger, period, ...) FIELDLOG_LOG_EVERY(logger, ::fieldlog::Level::debug, period, __VA_ARGS__)
#define FIELDLOG_INFO_EVERY(logger, period, ...) FIELDLOG_LOG_EVERY(logger, ::fieldlog::Level::info, period, __VA_ARGS__)
#define FIELDLOG_WARN_EVERY(logger, period, ...) FIELDLOG_LOG_EVERY(logger, ::fieldlog::Level::warn, period, __VA_ARGS__)
#define FIELDLOG_ERROR_EVERY(logger, period, ...) FIELDLOG_LOG_EVERY(logger, ::fieldlog::Level::error, period, __VA_ARGS__)

#define FIELDLOG_TRACE_FIRST_N(logger, n, ...) FIELDLOG_LOG_FIRST_N(logger, ::fieldlog::Level::trace, n, __VA_ARGS__)
#define FIELDLOG_DEBUG_FIRST_N(logger, n, ...) FIELDLOG_LOG_FIRST_N(logger, ::fieldlog::Level::debug, n, __VA_ARGS__)
#define FIELDLOG_INFO_FIRST_N(logger, n, ...) FIELDLOG_LOG_FIRST_N(logger, ::fieldlog::Level::info, n, __VA_ARGS__)
#define FIELDLOG_WARN_FIRST_N(logger, n, ...) FIELDLOG_LOG_FIRST_N(logger, ::fieldlog::Level::warn, n, __VA_ARGS__)
#define FIELDLOG_ERROR_FIRST_N(logger, n, ...) FIELDLOG_LOG_FIRST_N(logger, ::fieldlog::Level::error, n, __VA_ARGS__)

// SPDX-License-Identifier: MIT
#include "dispatch/sampler.hpp"

#include <bit>

namespace fieldlog::detail {
namespace {

/// FNV-1a over the message, mixed with the logger's address and the level.
std::size_t bucket_of(const LoggerCore& logger, Level level, std::string_view message) noexcept {
    std::uint64_t hash = 14695981039346656037ULL;
    for (const char c : message) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    hash ^= std::bit_cast<std::uintptr_t>(&logger) * 0x9E3779B97F4A7C15ULL;
    hash ^= static_cast<std::uint64_t>(level) << 59;
    hash ^= hash >> 29;
    return static_cast<std::size_t>(hash % Sampler::kBuckets);
}

}  // namespace

Sampler::Sampler(const SamplingConfig& config) : config_(config), counters_(std::make_unique<Counter[]>(kBuckets)) {}

Sampler::Decision Sampler::decide(const LoggerCore& logger, Level level, std::string_view message,
                                  std::int64_t now_nanos, std::uint64_t carried) noexcept {
    Counter& counter = counters_[bucket_of(logger, level, message)];
    std::uint64_t n = counter.count.fetch_add(1, std::memory_order_relaxed) + 1;
    std::int64_t reset_at = counter.reset_at.load(std::memory_order_relaxed);
    if (now_nanos >= reset_at) {  // a new interval: whoever moves reset_at restarts the count
        if (counter.reset_at.compare_exchange_strong(reset_at, now_nanos + config_.interval.count(),
                                                     std::memory_order_relaxed)) {
            counter.count.store(1, std::memory_order_relaxed);
            n = 1;
        } else {
            n = counter.count.fetch_add(1, std::memory_order_relaxed) + 1;
        }
    }
    const bool write = n <= config_.first ||
                       (config_.thereafter != 0 && (n - config_.first) % config_.thereafter == 0);
    if (!write) {
        counter.suppressed.fetch_add(1 + carried, std::memory_order_relaxed);
        logger.suppressed.fetch_add(1, std::memory_order_relaxed);
        return {};
    }
    std::uint64_t suppressed = 0;
    if (counter.suppressed.load(std::memory_order_relaxed) != 0) {
        suppressed = counter.suppressed.exchange(0, std::memory_order_relaxed);
    }
    return {true, suppressed};
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The service's own Prometheus metrics, served by GET /metrics after fieldlog's: requests by
// route and status, a latency histogram, settled transactions, heap allocations by cause and the
// records logged. Lock-free counters updated once per request; rendered on scrape (cold path).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "alloc_counter.hpp"

namespace http_service {

enum class Route : std::uint8_t { transactions, healthz, metrics, other };

/// The route a path belongs to (unknown paths share "other", so labels stay bounded).
[[nodiscard]] Route route_of(std::string_view path) noexcept;

class ServiceMetrics {
public:
    /// Bucket bounds of the latency histogram, in microseconds (+Inf implied).
    static constexpr std::array<std::int64_t, 14> kBucketsUs{50,    100,   250,    500,    1000,   2500,   5000,
                                                             10000, 25000, 50000, 100000, 250000, 500000, 1000000};

    /// One answered request.
    void observe(Route route, int status, std::int64_t latency_us) noexcept;
    void settled() noexcept { settled_.fetch_add(1, std::memory_order_relaxed); }

    [[nodiscard]] std::uint64_t requests() const noexcept { return requests_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t settled_count() const noexcept { return settled_.load(std::memory_order_relaxed); }

    /// Appends the exposition text (0.0.4) of every counter; `logger` labels the build info.
    void render(std::string& out, std::string_view logger, const AllocCounts& allocations, std::uint64_t records) const;

private:
    static constexpr std::size_t kRoutes = 4;
    static constexpr std::size_t kStatuses = 600;  ///< status codes 0-599; others are counted as 0

    std::array<std::array<std::atomic<std::uint64_t>, kStatuses>, kRoutes> by_status_{};
    std::array<std::atomic<std::uint64_t>, kBucketsUs.size() + 1> buckets_{};  ///< not cumulative; last is +Inf
    std::atomic<std::uint64_t> latency_sum_us_{0};
    std::atomic<std::uint64_t> requests_{0};
    std::atomic<std::uint64_t> settled_{0};
};

}  // namespace http_service

// SPDX-License-Identifier: MIT
// ServiceMetrics: counting (per request) and the Prometheus text exposition format 0.0.4.
#include "service_metrics.hpp"

#include <iterator>

#include <fmt/format.h>

namespace http_service {

Route route_of(std::string_view path) noexcept {
    if (path == "/transactions") return Route::transactions;
    if (path == "/healthz") return Route::healthz;
    if (path == "/metrics") return Route::metrics;
    return Route::other;
}

void ServiceMetrics::observe(Route route, int status, std::int64_t latency_us) noexcept {
    const std::size_t code = status >= 0 && static_cast<std::size_t>(status) < kStatuses ? static_cast<std::size_t>(status) : 0;
    by_status_[static_cast<std::size_t>(route)][code].fetch_add(1, std::memory_order_relaxed);
    std::size_t bucket = 0;
    while (bucket < kBucketsUs.size() && latency_us > kBucketsUs[bucket]) ++bucket;
    buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
    latency_sum_us_.fetch_add(static_cast<std::uint64_t>(latency_us < 0 ? 0 : latency_us), std::memory_order_relaxed);
    requests_.fetch_add(1, std::memory_order_relaxed);
}

void ServiceMetrics::render(std::string& out, std::string_view logger, const AllocCounts& allocations,
                            std::uint64_t records) const {
    auto o = std::back_inserter(out);
    static constexpr std::string_view kRouteNames[] = {"/transactions", "/healthz", "/metrics", "other"};

    fmt::format_to(o, "# HELP http_service_requests_total Requests answered, by route and status code.\n"
                      "# TYPE http_service_requests_total counter\n");
    for (std::size_t r = 0; r < kRoutes; ++r) {
        for (std::size_t code = 0; code < kStatuses; ++code) {
            const std::uint64_t n = by_status_[r][code].load(std::memory_order_relaxed);
            if (n != 0) fmt::format_to(o, "http_service_requests_total{{route=\"{}\",code=\"{}\"}} {}\n", kRouteNames[r], code, n);
        }
    }

    // Read the buckets first and derive the count from them, so the exposition stays consistent
    // (count == +Inf bucket) while requests are being answered.
    fmt::format_to(o, "# HELP http_service_request_duration_seconds Time from routing a request to its reply, "
                      "measured by the service.\n"
                      "# TYPE http_service_request_duration_seconds histogram\n");
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
        cumulative += buckets_[b].load(std::memory_order_relaxed);
        if (b < kBucketsUs.size()) {
            fmt::format_to(o, "http_service_request_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                           static_cast<double>(kBucketsUs[b]) / 1e6, cumulative);
        } else {
            fmt::format_to(o, "http_service_request_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", cumulative);
        }
    }
    fmt::format_to(o, "http_service_request_duration_seconds_sum {}\n",
                   static_cast<double>(latency_sum_us_.load(std::memory_order_relaxed)) / 1e6);
    fmt::format_to(o, "http_service_request_duration_seconds_count {}\n", cumulative);

    fmt::format_to(o, "# HELP http_service_transactions_settled_total Transactions settled by the worker pool.\n"
                      "# TYPE http_service_transactions_settled_total counter\n"
                      "http_service_transactions_settled_total {}\n",
                   settled_.load(std::memory_order_relaxed));

    fmt::format_to(o, "# HELP http_service_allocations_total Heap allocations (global operator new) by cause: the "
                      "service's own code, inside its logging calls, or on the logger's own threads.\n"
                      "# TYPE http_service_allocations_total counter\n"
                      "http_service_allocations_total{{cause=\"service\"}} {}\n"
                      "http_service_allocations_total{{cause=\"logging_call\"}} {}\n"
                      "http_service_allocations_total{{cause=\"logger_thread\"}} {}\n",
                   allocations.service, allocations.logging_call, allocations.logger_thread);

    fmt::format_to(o, "# HELP http_service_log_records_total Records logged at an enabled level (lines the log "
                      "should hold).\n"
                      "# TYPE http_service_log_records_total counter\n"
                      "http_service_log_records_total {}\n",
                   records);

    fmt::format_to(o, "# HELP http_service_build_info The logging library this process uses.\n"
                      "# TYPE http_service_build_info gauge\n"
                      "http_service_build_info{{logger=\"{}\"}} 1\n",
                   logger);
}

}  // namespace http_service

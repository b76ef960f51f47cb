// SPDX-License-Identifier: MIT
// The example service: cpp-httplib routes (POST /transactions, GET /healthz, GET /metrics,
// GET and PUT /loglevel)
// behind a middleware that opens the request's scope before routing and writes the access
// record after it, before the reply is sent. Connections run on one WorkerPool, settlement
// work on another, which re-opens the request's captured scope.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <httplib.h>

#include "service_log.hpp"
#include "service_metrics.hpp"
#include "worker_pool.hpp"

namespace http_service {

struct ServiceOptions {
    std::string host = "127.0.0.1";
    int port = 8080;                      ///< 0: any free port (see Service::bind)
    std::size_t connection_threads = 16;  ///< a keep-alive connection holds one while it is open
    std::size_t work_threads = 2;         ///< settlement workers
};

/// A settlement job: the request's captured scope and a copy of what it needs.
struct SettleJob {
    CapturedContext context;
    std::array<char, 24> transaction_id{};
    std::array<char, kMaxNameBytes> account{};
    std::array<char, kMaxNameBytes> merchant{};
    std::uint8_t account_size = 0;
    std::uint8_t merchant_size = 0;
    double amount = 0;
};

class Service {
public:
    Service(const ServiceOptions& options, ServiceLog& log);
    ~Service();
    Service(const Service&) = delete;
    Service& operator=(const Service&) = delete;

    /// Binds the listening socket and returns its port. Throws std::runtime_error.
    int bind();
    /// Serves until stop(). When it returns, every request read has been answered and logged.
    void run();
    /// Stops accepting; run() returns once the requests in flight are answered. Any thread.
    void stop();
    /// Finishes the settlement work queued so far; call after run() returned.
    void drain();

    [[nodiscard]] std::uint64_t requests() const noexcept { return metrics_.requests(); }
    [[nodiscard]] std::uint64_t settled() const noexcept { return metrics_.settled_count(); }

private:
    httplib::Server::HandlerResponse before_routing(const httplib::Request& req, httplib::Response& res);
    void after_routing(const httplib::Request& req, httplib::Response& res);
    void post_transaction(const httplib::Request& req, httplib::Response& res);
    void get_metrics(httplib::Response& res);
    void put_levels(const httplib::Request& req, httplib::Response& res);
    void settle_one(SettleJob& job);

    ServiceOptions options_;
    ServiceLog& log_;
    ServiceMetrics metrics_;
    WorkerPool<SettleJob> settle_pool_;
    httplib::Server server_;
    socket_t listening_ = INVALID_SOCKET;  ///< the socket bind() made, as httplib's options saw it
};

}  // namespace http_service

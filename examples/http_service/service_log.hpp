// SPDX-License-Identifier: MIT
// The records the service writes, behind one interface with two implementations: fieldlog
// (fieldlog_log.cpp: a Scope per request, typed fields) and spdlog's async logger writing the
// same JSON lines (spdlog_log.cpp: the request fields rendered once per request, fmt for the
// rest). The handlers in service.cpp call only this, so both runs log the same records at the
// same points. Every method charges its allocations to logging (LoggingCall inside).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include <fieldlog/logger.hpp>
#include <fieldlog/scope.hpp>
#include <fieldlog/trace_context.hpp>

#include "transactions.hpp"

namespace http_service {

/// What the middleware knows about a request when it opens the request's scope.
struct RequestInfo {
    std::string_view request_id;
    std::string_view method;
    std::string_view path;
    std::string_view remote_addr;
    const fieldlog::TraceContext& trace;  ///< this service's span of the request's trace
    bool debug;  ///< the request asked for its records at debug (`X-Debug: 1`)
};

/// The access record's own fields.
struct AccessInfo {
    int status = 0;
    std::uint64_t bytes = 0;  ///< response body bytes
    std::int64_t latency_us = 0;
};

/// spdlog's request context: the scope fields rendered once as JSON members ("k":v,...).
struct RenderedFields {
    static constexpr std::size_t capacity = 512;
    std::array<char, capacity> bytes{};
    std::size_t size = 0;
    [[nodiscard]] std::string_view view() const noexcept { return {bytes.data(), size}; }
};

/// fieldlog's request context as child loggers (--context=with): the service's two loggers,
/// each with() the request's fields.
struct RequestLoggers {
    fieldlog::Logger http;
    fieldlog::Logger transactions;
};

/// A request's context captured on one thread, to be re-opened on another (worker-pool jobs).
using CapturedContext = std::variant<std::monostate, fieldlog::ScopeContext, RequestLoggers, RenderedFields>;

/// How fieldlog attaches the request's fields: a Scope per request, or with() children.
enum class RequestContext { scope, with };

class ServiceLog {
public:
    virtual ~ServiceLog() = default;

    /// "fieldlog" or "spdlog".
    [[nodiscard]] virtual std::string_view name() const noexcept = 0;

    // The request context of this thread: one at a time, closed on the thread that opened it.
    virtual void open_scope(const RequestInfo& request) = 0;
    virtual void open_scope(const CapturedContext& context) = 0;
    virtual void close_scope() = 0;
    [[nodiscard]] virtual CapturedContext capture() const = 0;

    // The records, in the order a request writes them.
    virtual void listening(std::string_view address, int port, std::size_t connection_threads,
                           std::size_t work_threads) = 0;
    virtual void transaction_parsed(const Transaction& tx) = 0;  ///< debug
    virtual void transaction_rejected(std::string_view error) = 0;  ///< warn
    virtual void transaction_accepted(std::string_view transaction_id, const Transaction& tx, std::int64_t fee_cents) = 0;
    virtual void transaction_settled(std::string_view transaction_id, const Settlement& settlement) = 0;
    virtual void request_done(const AccessInfo& access) = 0;  ///< the access record
    virtual void stopping(std::string_view signal) = 0;
    /// The last record; its "records" counts every record logged, itself included.
    virtual void stopped(std::uint64_t requests, std::uint64_t settled) = 0;

    /// The logger's own Prometheus metrics, appended to `out` (fieldlog::metrics_text()).
    virtual void append_metrics(std::string& out) = 0;
    /// The levels in force, in FIELDLOG_LEVEL's syntax ("info,transactions=debug"): GET /loglevel.
    [[nodiscard]] virtual std::string levels() const = 0;
    /// Sets the levels from that syntax (PUT /loglevel); throws std::invalid_argument, changing
    /// nothing, when `spec` is not valid.
    virtual void set_levels(std::string_view spec) = 0;
    /// Writes everything logged so far and closes the log; later records are dropped.
    virtual void shutdown() = 0;

    /// Records logged at an enabled level: the lines the log should hold.
    [[nodiscard]] std::uint64_t records() const noexcept { return records_.load(std::memory_order_relaxed); }

protected:
    void count_record() noexcept { records_.fetch_add(1, std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> records_{0};
};

/// Configures fieldlog from the TOML file `config_path` (FIELDLOG_* overrides apply; SIGHUP
/// reloads it once fieldlog::install_signal_handlers() ran). Throws fieldlog::ConfigError.
/// `otlp_endpoint`, when not empty, adds an OTLP sink sending there (OTEL_* variables apply).
std::unique_ptr<ServiceLog> make_fieldlog_log(const std::string& config_path, RequestContext context,
                                              const std::string& otlp_endpoint);

/// spdlog's async logger (default thread pool: one worker, queue of 8192, blocking when full)
/// writing JSON lines to `file`, at level info.
std::unique_ptr<ServiceLog> make_spdlog_log(const std::string& file);

/// RAII: opens a captured context on this thread (a worker-pool job) and closes it.
class ScopeGuard {
public:
    ScopeGuard(ServiceLog& log, const CapturedContext& context) : log_(log) { log_.open_scope(context); }
    ~ScopeGuard() { log_.close_scope(); }
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;

private:
    ServiceLog& log_;
};

}  // namespace http_service

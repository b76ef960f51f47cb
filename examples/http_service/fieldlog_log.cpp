// SPDX-License-Identifier: MIT
// ServiceLog on fieldlog: the request's fields live in a fieldlog::Scope (a context node from
// the thread's pool, encoded once per format when a record first needs it) and its trace
// position in a second one opened from the TraceContext, or, with --context=with, in with()
// children of the service's loggers; work handed to the pool carries Scope::capture() (or the
// children). Each record is one call with typed fields. Configured from TOML; SIGHUP reloads it.
#include <optional>
#include <stdexcept>

#include <fieldlog/fieldlog.hpp>
#include <fieldlog/sinks/otlp_sink.hpp>

#include "alloc_counter.hpp"
#include "service_log.hpp"

namespace http_service {
namespace {

using fieldlog::Level;

// The request context open on this thread: a request on a connection thread, a captured
// context on a worker. A thread_local keeps a Scope on the thread that opened it.
thread_local std::optional<fieldlog::Scope> t_scope;
thread_local std::optional<fieldlog::Scope> t_trace_scope;  // inside t_scope, for a request
thread_local std::optional<RequestLoggers> t_loggers;  // --context=with
thread_local std::optional<fieldlog::Scope> t_level_scope;  // innermost: a request's own level (X-Debug)

class FieldlogLog final : public ServiceLog {
public:
    explicit FieldlogLog(RequestContext context) : context_(context) {}

    [[nodiscard]] std::string_view name() const noexcept override { return "fieldlog"; }

    void open_scope(const RequestInfo& r) override {
        const LoggingCall charged;
        close();
        if (context_ == RequestContext::with) {
            const auto trace_id = r.trace.trace_id_hex();
            const auto span_id = r.trace.span_id_hex();
            const auto flags = r.trace.flags_hex();
            const fieldlog::Fields fields{{"request_id", r.request_id}, {"method", r.method},
                                          {"path", r.path},             {"remote_addr", r.remote_addr},
                                          {"trace_id", trace_id.view()}, {"span_id", span_id.view()},
                                          {"trace_flags", flags.view()}};
            t_loggers.emplace(RequestLoggers{http_.with(fields), transactions_.with(fields)});
        } else {
            t_scope.emplace(fieldlog::Fields{
                {"request_id", r.request_id}, {"method", r.method}, {"path", r.path}, {"remote_addr", r.remote_addr}});
            t_trace_scope.emplace(r.trace);  // trace_id, span_id, trace_flags
        }
        // Captured with the request's scopes (Scope::capture), the level reaches the workers too.
        if (r.debug) t_level_scope.emplace(Level::debug);
    }

    void open_scope(const CapturedContext& context) override {
        const LoggingCall charged;
        close();
        if (const auto* captured = std::get_if<fieldlog::ScopeContext>(&context)) t_scope.emplace(*captured);
        if (const auto* loggers = std::get_if<RequestLoggers>(&context)) t_loggers.emplace(*loggers);
    }

    void close_scope() override {
        const LoggingCall charged;
        close();
    }

    [[nodiscard]] CapturedContext capture() const override {
        const LoggingCall charged;
        if (t_loggers) return *t_loggers;
        return fieldlog::Scope::capture();
    }

    void listening(std::string_view address, int port, std::size_t connection_threads, std::size_t work_threads) override {
        const LoggingCall charged;
        if (!admit(http(), Level::info)) return;
        http().info("listening", {{"address", address},
                                 {"port", port},
                                 {"logging", "fieldlog"},
                                 {"connection_threads", connection_threads},
                                 {"work_threads", work_threads}});
    }

    void transaction_parsed(const Transaction& tx) override {
        const LoggingCall charged;
        if (!admit(transactions(), Level::debug)) return;
        transactions().debug("transaction parsed", {{"account", tx.account},
                                                   {"merchant", tx.merchant},
                                                   {"currency", tx.currency},
                                                   {"amount", tx.amount}});
    }

    void transaction_rejected(std::string_view error) override {
        const LoggingCall charged;
        if (!admit(transactions(), Level::warn)) return;
        transactions().warn("transaction rejected", {{"error", error}});
    }

    void transaction_accepted(std::string_view transaction_id, const Transaction& tx, std::int64_t fee_cents) override {
        const LoggingCall charged;
        if (!admit(transactions(), Level::info)) return;
        transactions().info("transaction accepted", {{"transaction_id", transaction_id},
                                                    {"account", tx.account},
                                                    {"merchant", tx.merchant},
                                                    {"currency", tx.currency},
                                                    {"amount", tx.amount},
                                                    {"fee_cents", fee_cents}});
    }

    void transaction_settled(std::string_view transaction_id, const Settlement& s) override {
        const LoggingCall charged;
        if (!admit(transactions(), Level::info)) return;
        transactions().info("transaction settled", {{"transaction_id", transaction_id},
                                                   {"risk_score", s.risk_score},
                                                   {"flagged", s.flagged}});
    }

    void request_done(const AccessInfo& a) override {
        const LoggingCall charged;
        const Level level = a.status >= 500 ? Level::error : Level::info;
        if (!admit(http(), level)) return;
        http().log(level, "request done", {{"status", a.status}, {"bytes", a.bytes}, {"latency_us", a.latency_us}});
    }

    void stopping(std::string_view signal) override {
        const LoggingCall charged;
        if (!admit(http(), Level::info)) return;
        http().info("stopping", {{"signal", signal}});
    }

    void stopped(std::uint64_t requests, std::uint64_t settled) override {
        const LoggingCall charged;
        if (!admit(http(), Level::info)) return;
        http().info("stopped", {{"requests", requests}, {"settled", settled}, {"records", records()}});
    }

    // Scraping is the service's monitoring, not a record: charged to the service.
    void append_metrics(std::string& out) override { out += fieldlog::metrics_text(); }
    [[nodiscard]] std::string levels() const override { return fieldlog::levels(); }
    void set_levels(std::string_view spec) override {
        try {
            fieldlog::set_levels(spec);
        } catch (const fieldlog::ConfigError& e) {
            throw std::invalid_argument(e.what());
        }
    }

    void shutdown() override { fieldlog::shutdown(); }

private:
    static void close() noexcept {
        t_level_scope.reset();  // the inner ones first: they close in the fast order
        t_trace_scope.reset();
        t_scope.reset();
        t_loggers.reset();
    }
    /// The request's child when it has one (--context=with), else the service's logger.
    [[nodiscard]] const fieldlog::Logger& http() const noexcept { return t_loggers ? t_loggers->http : http_; }
    [[nodiscard]] const fieldlog::Logger& transactions() const noexcept {
        return t_loggers ? t_loggers->transactions : transactions_;
    }

    bool admit(const fieldlog::Logger& logger, Level level) noexcept {
        if (!logger.enabled(level)) return false;
        count_record();
        return true;
    }

    RequestContext context_;
    fieldlog::Logger http_ = fieldlog::get("http");
    fieldlog::Logger transactions_ = fieldlog::get("transactions");
};

}  // namespace

std::unique_ptr<ServiceLog> make_fieldlog_log(const std::string& config_path, RequestContext context,
                                              const std::string& otlp_endpoint) {
    fieldlog::Config config = fieldlog::Config::load(config_path);
    if (!otlp_endpoint.empty()) {
        if (config.sinks.empty()) config.sinks.push_back({});  // the default stdout sink stays
        // The resource is the configuration's ([resource], OTEL_* over it), as every sink's.
        fieldlog::OtlpSinkOptions otlp{.endpoint = otlp_endpoint};
        config.sinks.push_back({.target = otlp.apply_env()});
    }
    fieldlog::configure(config);  // before the loggers exist: no default set-up
    return std::make_unique<FieldlogLog>(context);
}

}  // namespace http_service

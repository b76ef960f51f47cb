// SPDX-License-Identifier: MIT
// The service's handlers and middleware (see service.hpp). Per-request state that spans the
// middleware's two halves lives in a thread_local: httplib runs both halves, and the handler,
// on the connection's thread.
#include "service.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace http_service {
namespace {

using Clock = std::chrono::steady_clock;

/// httplib's TaskQueue on a WorkerPool: each connection is one job.
class ConnectionQueue final : public httplib::TaskQueue {
public:
    explicit ConnectionQueue(std::size_t threads)
        : pool_("http-connection", threads, 1024, [](std::function<void()>& connection) { connection(); }) {}
    void enqueue(std::function<void()> fn) override { pool_.post(std::move(fn)); }
    void shutdown() override { pool_.shutdown(); }

private:
    WorkerPool<std::function<void()>> pool_;
};

/// Ids: a random per-process prefix and a sequence number, 16 hex digits.
struct IdSource {
    std::uint32_t prefix = std::random_device{}();
    std::atomic<std::uint32_t> next{0};

    std::string_view make(std::array<char, 24>& out, std::string_view tag = {}) noexcept {
        const auto end = fmt::format_to_n(out.data(), out.size(), "{}{:08x}{:08x}", tag, prefix,
                                          next.fetch_add(1, std::memory_order_relaxed));
        return {out.data(), static_cast<std::size_t>(end.out - out.data())};
    }
};
IdSource g_ids;

/// An X-Request-ID worth keeping: 1 to 64 of [A-Za-z0-9._:-] (anything else is replaced, so a
/// client cannot write arbitrary bytes into every record of its request).
bool acceptable_request_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > 64) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == ':' || c == '-';
    });
}

/// The request being handled on this connection thread, between the middleware's halves.
struct RequestState {
    bool open = false;
    Clock::time_point start{};
    std::array<char, 64> id{};
    std::size_t id_size = 0;
};
thread_local RequestState t_request;

const std::string kRequestIdHeader = "X-Request-ID";
const std::string kTraceparentHeader = "traceparent";
// "1": this request's records at debug and above, whatever the loggers' levels (a Scope's level).
const std::string kDebugHeader = "X-Debug";
const std::string kTracestateHeader = "tracestate";

std::string_view header_value(const httplib::Request& req, const std::string& name) noexcept {
    const auto header = req.headers.find(name);
    return header != req.headers.end() ? std::string_view(header->second) : std::string_view();
}

/// This service's span of the request's trace: a child of the caller's `traceparent` (with its
/// `tracestate`), or a new trace when there is none or it is not valid.
fieldlog::TraceContext trace_of(const httplib::Request& req) noexcept {
    const auto incoming =
        fieldlog::TraceContext::parse(header_value(req, kTraceparentHeader), header_value(req, kTracestateHeader));
    return incoming ? incoming->child() : fieldlog::TraceContext::root();
}

std::string_view error_text(int status) noexcept {
    switch (status) {
        case 400: return "bad request";
        case 404: return "not found";
        case 405: return "method not allowed";
        case 413: return "payload too large";
        case 414: return "uri too long";
        default: return status >= 500 ? "internal error" : "request failed";
    }
}

}  // namespace

Service::Service(const ServiceOptions& options, ServiceLog& log)
    : options_(options),
      log_(log),
      settle_pool_("http-settle", options.work_threads, 1024, [this](SettleJob& job) { settle_one(job); }) {
    server_.new_task_queue = [threads = options_.connection_threads] { return new ConnectionQueue(threads); };
    server_.set_tcp_nodelay(true);  // header and body go out in two writes: no Nagle wait between
    server_.set_keep_alive_max_count(1'000'000);
    server_.set_keep_alive_timeout(2);
    server_.set_payload_max_length(64 * 1024);
    server_.set_socket_options([this](socket_t sock) {
        httplib::default_socket_options(sock);
        listening_ = sock;
    });
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        return before_routing(req, res);
    });
    server_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        after_routing(req, res);
    });
    server_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.body.empty()) {
            res.set_content(fmt::format(R"({{"error":"{}"}})", error_text(res.status)), "application/json");
        }
    });
    server_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(R"({"error":"internal error"})", "application/json");
    });
    server_.Post("/transactions", [this](const httplib::Request& req, httplib::Response& res) { post_transaction(req, res); });
    server_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"status":"ok"})", "application/json");
    });
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) { get_metrics(res); });
    server_.Get("/loglevel", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(log_.levels() + "\n", "text/plain; charset=utf-8");
    });
    server_.Put("/loglevel", [this](const httplib::Request& req, httplib::Response& res) { put_levels(req, res); });
}

Service::~Service() {
    stop();
    settle_pool_.shutdown();
}

int Service::bind() {
    int port = options_.port;
    if (port == 0) {
        port = server_.bind_to_any_port(options_.host);
        if (port < 0) throw std::runtime_error("cannot bind " + options_.host + " to a free port");
    } else if (!server_.bind_to_port(options_.host, port)) {
        throw std::runtime_error(fmt::format("cannot bind {}:{}", options_.host, port));
    }
    // httplib listens with a backlog of 5. Clients that connect at once (a load test's
    // connections, a pool's) overflow it, and a connection whose handshake the kernel dropped
    // waits for a retransmission, 200 ms or more, on its first request. Listening again on the
    // bound socket raises its backlog to the system's limit.
    if (::listen(listening_, SOMAXCONN) != 0) {
        throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", options_.host, port, std::strerror(errno)));
    }
    return port;
}

void Service::run() { server_.listen_after_bind(); }

void Service::stop() { server_.stop(); }

void Service::drain() { settle_pool_.shutdown(); }

httplib::Server::HandlerResponse Service::before_routing(const httplib::Request& req, httplib::Response& res) {
    RequestState& r = t_request;
    r.start = Clock::now();
    std::string_view id;
    std::array<char, 24> generated;
    if (const auto header = req.headers.find(kRequestIdHeader);
        header != req.headers.end() && acceptable_request_id(header->second)) {
        id = header->second;
    } else {
        id = g_ids.make(generated);
    }
    std::memcpy(r.id.data(), id.data(), id.size());
    r.id_size = id.size();
    const std::string_view request_id(r.id.data(), r.id_size);
    res.set_header(kRequestIdHeader, std::string(request_id));
    const fieldlog::TraceContext trace = trace_of(req);
    res.set_header(kTraceparentHeader, std::string(trace.traceparent().view()));
    log_.open_scope(RequestInfo{request_id, req.method, req.path, req.remote_addr, trace,
                                header_value(req, kDebugHeader) == "1"});
    r.open = true;
    return httplib::Server::HandlerResponse::Unhandled;
}

void Service::after_routing(const httplib::Request& req, httplib::Response& res) {
    RequestState& r = t_request;
    if (!r.open) {  // httplib answered before routing (a malformed request): still one access record
        r.start = Clock::now();
        std::array<char, 24> generated;
        const std::string_view id = g_ids.make(generated);
        log_.open_scope(RequestInfo{id, req.method, req.path, req.remote_addr, fieldlog::TraceContext::root(), false});
    }
    const auto latency_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - r.start).count();
    log_.request_done(AccessInfo{res.status, res.body.size(), latency_us});
    log_.close_scope();
    r.open = false;
    metrics_.observe(route_of(req.path), res.status, latency_us);
}

void Service::post_transaction(const httplib::Request& req, httplib::Response& res) {
    thread_local std::array<char, 4096> scratch;  // strings of the body that had escapes, decoded
    thread_local std::string reply;               // the reply is built here, then copied into res
    Transaction tx;
    if (const std::string_view error = parse_transaction(req.body, tx, scratch); !error.empty()) {
        log_.transaction_rejected(error);
        reply.clear();
        fmt::format_to(std::back_inserter(reply), R"({{"error":"{}"}})", error);  // our own text: nothing to escape
        res.status = 400;
        res.set_content(reply.data(), reply.size(), "application/json");
        return;
    }
    log_.transaction_parsed(tx);

    SettleJob job;
    const std::string_view transaction_id = g_ids.make(job.transaction_id, "tx-");
    const std::int64_t fee = fee_cents(tx.amount);
    log_.transaction_accepted(transaction_id, tx, fee);

    std::memcpy(job.account.data(), tx.account.data(), tx.account.size());
    job.account_size = static_cast<std::uint8_t>(tx.account.size());
    std::memcpy(job.merchant.data(), tx.merchant.data(), tx.merchant.size());
    job.merchant_size = static_cast<std::uint8_t>(tx.merchant.size());
    job.amount = tx.amount;
    job.context = log_.capture();
    if (!settle_pool_.post(std::move(job))) {
        res.status = 503;
        res.set_content(R"({"error":"shutting down"})", "application/json");
        return;
    }

    reply.clear();
    fmt::format_to(std::back_inserter(reply), R"({{"transaction_id":"{}","status":"accepted","fee_cents":{}}})",
                   transaction_id, fee);
    res.status = 202;
    res.set_content(reply.data(), reply.size(), "application/json");
}

void Service::settle_one(SettleJob& job) {
    const ScopeGuard scope(log_, job.context);
    const std::string_view transaction_id(job.transaction_id.data(),
                                          ::strnlen(job.transaction_id.data(), job.transaction_id.size()));
    const Settlement s = settle(std::string_view(job.account.data(), job.account_size),
                                std::string_view(job.merchant.data(), job.merchant_size), job.amount);
    log_.transaction_settled(transaction_id, s);
    metrics_.settled();
}

/// The body is FIELDLOG_LEVEL's syntax ("debug", "info,transactions=debug"); the answer is the
/// levels in force afterwards, as GET gives them.
void Service::put_levels(const httplib::Request& req, httplib::Response& res) {
    std::string_view spec = req.body;
    while (!spec.empty() && (spec.back() == '\n' || spec.back() == '\r')) spec.remove_suffix(1);
    try {
        log_.set_levels(spec);
    } catch (const std::invalid_argument& e) {
        res.status = 400;
        res.set_content(std::string(e.what()) + "\n", "text/plain; charset=utf-8");
        return;
    }
    res.set_content(log_.levels() + "\n", "text/plain; charset=utf-8");
}

void Service::get_metrics(httplib::Response& res) {
    std::string out;
    log_.append_metrics(out);
    metrics_.render(out, log_.name(), alloc_counts(), log_.records());
    res.set_content(out, "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace http_service

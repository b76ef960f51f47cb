// SPDX-License-Identifier: MIT
// ServiceLog on spdlog, written as a careful spdlog user would to get the same JSON lines as
// fieldlog: a pattern renders ts/level/logger (UTC, nanoseconds, fieldlog's level names), the
// request fields are rendered once per request into a thread-local buffer (spdlog 1.10 has no
// MDC) and copied into each record, and call fields go through fmt with JSON string escaping.
// Async: spdlog's thread pool (one worker, queue of 8192 messages, blocking when full).
#include <spdlog/async_logger.h>
#include <spdlog/details/thread_pool.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "alloc_counter.hpp"
#include "flat_json.hpp"
#include "service_log.hpp"

namespace http_service {
namespace {

/// A string written as a JSON string: quoted, escaped as fieldlog escapes (\" \\ \n \r \t, other
/// control characters as \u00XX), invalid UTF-8 replaced by U+FFFD.
struct JsonString {
    std::string_view text;
};

/// The request fields of this thread as ",<members>", or nothing when there are none.
struct ScopeMembers {
    const RenderedFields& fields;
};

}  // namespace
}  // namespace http_service

template <>
struct fmt::formatter<http_service::JsonString> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename Context>
    auto format(const http_service::JsonString& s, Context& ctx) const {
        static constexpr char kHex[] = "0123456789abcdef";
        auto out = ctx.out();
        *out++ = '"';
        const std::string_view text = s.text;
        std::size_t i = 0;
        while (i < text.size()) {
            std::size_t run = i;
            while (run < text.size()) {
                const auto c = static_cast<unsigned char>(text[run]);
                if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
                ++run;
            }
            out = std::copy(text.data() + i, text.data() + run, out);
            i = run;
            if (i == text.size()) break;
            const auto c = static_cast<unsigned char>(text[i]);
            if (c >= 0x80) {
                const std::size_t length = http_service::utf8_sequence(text.substr(i));
                if (length == 0) {
                    out = fmt::format_to(out, "\xEF\xBF\xBD");
                    ++i;
                } else {
                    out = std::copy(text.data() + i, text.data() + i + length, out);
                    i += length;
                }
                continue;
            }
            *out++ = '\\';
            switch (c) {
                case '"': *out++ = '"'; break;
                case '\\': *out++ = '\\'; break;
                case '\n': *out++ = 'n'; break;
                case '\r': *out++ = 'r'; break;
                case '\t': *out++ = 't'; break;
                default:
                    *out++ = 'u';
                    *out++ = '0';
                    *out++ = '0';
                    *out++ = kHex[c >> 4];
                    *out++ = kHex[c & 0xF];
            }
            ++i;
        }
        *out++ = '"';
        return out;
    }
};

template <>
struct fmt::formatter<http_service::ScopeMembers> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename Context>
    auto format(const http_service::ScopeMembers& s, Context& ctx) const {
        auto out = ctx.out();
        const std::string_view members = s.fields.view();
        if (members.empty()) return out;
        *out++ = ',';
        return std::copy(members.begin(), members.end(), out);
    }
};

namespace http_service {
namespace {

// The request context of this thread (as t_scope in fieldlog_log.cpp).
thread_local RenderedFields t_context;

/// Appends `"key":"value"` to `fields` when it fits whole (like a full fieldlog::Scope, a member
/// that does not fit is left out, never cut).
void add_member(RenderedFields& fields, std::string_view key, std::string_view value) {
    fmt::basic_memory_buffer<char, RenderedFields::capacity> member;
    fmt::format_to(std::back_inserter(member), "{}\"{}\":{}", fields.size == 0 ? "" : ",", key, JsonString{value});
    if (member.size() > fields.capacity - fields.size) return;
    std::memcpy(fields.bytes.data() + fields.size, member.data(), member.size());
    fields.size += member.size();
}

/// Writes spdlog's level as fieldlog names it ("warn", not "warning").
class LevelName final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        static constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error", "fatal", "off"};
        const std::string_view name = kNames[static_cast<std::size_t>(msg.level)];
        dest.append(name.data(), name.data() + name.size());
    }
    [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<LevelName>(); }
};

constexpr const char* kPattern = R"({"ts":"%Y-%m-%dT%H:%M:%S.%FZ","level":"%*","logger":"%n",%v})";

class SpdlogLog final : public ServiceLog {
public:
    explicit SpdlogLog(const std::string& file)
        : pool_(std::make_shared<spdlog::details::thread_pool>(8192, 1)),
          sink_(std::make_shared<spdlog::sinks::basic_file_sink_mt>(file)) {
        auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc, "\n");
        formatter->add_flag<LevelName>('*').set_pattern(kPattern);
        sink_->set_formatter(std::move(formatter));
        for (auto* logger : {&http_, &transactions_}) {
            const char* name = logger == &http_ ? "http" : "transactions";
            *logger = std::make_shared<spdlog::async_logger>(name, sink_, pool_, spdlog::async_overflow_policy::block);
            (*logger)->set_level(spdlog::level::info);
        }
    }

    [[nodiscard]] std::string_view name() const noexcept override { return "spdlog"; }

    void open_scope(const RequestInfo& r) override {
        const LoggingCall charged;
        t_context.size = 0;
        add_member(t_context, "request_id", r.request_id);
        add_member(t_context, "method", r.method);
        add_member(t_context, "path", r.path);
        add_member(t_context, "remote_addr", r.remote_addr);
        add_member(t_context, "trace_id", r.trace.trace_id_hex().view());
        add_member(t_context, "span_id", r.trace.span_id_hex().view());
        add_member(t_context, "trace_flags", r.trace.flags_hex().view());
    }

    void open_scope(const CapturedContext& context) override {
        const LoggingCall charged;
        const auto* captured = std::get_if<RenderedFields>(&context);
        t_context.size = 0;
        if (captured != nullptr) t_context = *captured;
    }

    void close_scope() override { t_context.size = 0; }

    [[nodiscard]] CapturedContext capture() const override { return t_context; }

    void listening(std::string_view address, int port, std::size_t connection_threads, std::size_t work_threads) override {
        const LoggingCall charged;
        if (!admit(*http_, spdlog::level::info)) return;
        http_->info(R"("msg":"listening"{},"address":{},"port":{},"logging":"spdlog","connection_threads":{},"work_threads":{})",
                    ScopeMembers{t_context}, JsonString{address}, port, connection_threads, work_threads);
    }

    void transaction_parsed(const Transaction& tx) override {
        const LoggingCall charged;
        if (!admit(*transactions_, spdlog::level::debug)) return;
        transactions_->debug(R"("msg":"transaction parsed"{},"account":{},"merchant":{},"currency":{},"amount":{})",
                             ScopeMembers{t_context}, JsonString{tx.account}, JsonString{tx.merchant},
                             JsonString{tx.currency}, tx.amount);
    }

    void transaction_rejected(std::string_view error) override {
        const LoggingCall charged;
        if (!admit(*transactions_, spdlog::level::warn)) return;
        transactions_->warn(R"("msg":"transaction rejected"{},"error":{})", ScopeMembers{t_context}, JsonString{error});
    }

    void transaction_accepted(std::string_view transaction_id, const Transaction& tx, std::int64_t fee_cents) override {
        const LoggingCall charged;
        if (!admit(*transactions_, spdlog::level::info)) return;
        transactions_->info(
            R"("msg":"transaction accepted"{},"transaction_id":{},"account":{},"merchant":{},"currency":{},"amount":{},"fee_cents":{})",
            ScopeMembers{t_context}, JsonString{transaction_id}, JsonString{tx.account}, JsonString{tx.merchant},
            JsonString{tx.currency}, tx.amount, fee_cents);
    }

    void transaction_settled(std::string_view transaction_id, const Settlement& s) override {
        const LoggingCall charged;
        if (!admit(*transactions_, spdlog::level::info)) return;
        transactions_->info(R"("msg":"transaction settled"{},"transaction_id":{},"risk_score":{},"flagged":{})",
                            ScopeMembers{t_context}, JsonString{transaction_id}, s.risk_score, s.flagged);
    }

    void request_done(const AccessInfo& a) override {
        const LoggingCall charged;
        const auto level = a.status >= 500 ? spdlog::level::err : spdlog::level::info;
        if (!admit(*http_, level)) return;
        http_->log(level, R"("msg":"request done"{},"status":{},"bytes":{},"latency_us":{})", ScopeMembers{t_context},
                   a.status, a.bytes, a.latency_us);
    }

    void stopping(std::string_view signal) override {
        const LoggingCall charged;
        if (!admit(*http_, spdlog::level::info)) return;
        http_->info(R"("msg":"stopping"{},"signal":{})", ScopeMembers{t_context}, JsonString{signal});
    }

    void stopped(std::uint64_t requests, std::uint64_t settled) override {
        const LoggingCall charged;
        if (!admit(*http_, spdlog::level::info)) return;
        http_->info(R"("msg":"stopped"{},"requests":{},"settled":{},"records":{})", ScopeMembers{t_context}, requests,
                    settled, records());
    }

    void append_metrics(std::string&) override {}  // spdlog keeps no counters of its own worth serving
    [[nodiscard]] std::string levels() const override {
        const auto name = spdlog::level::to_string_view(http_->level());
        return std::string(name.data(), name.size());
    }
    /// One level for both loggers: spdlog has no dotted hierarchy to set a name's level by.
    void set_levels(std::string_view spec) override {
        const spdlog::level::level_enum level = spdlog::level::from_str(std::string(spec));
        if (level == spdlog::level::off && spec != "off") {
            throw std::invalid_argument("spdlog: expected one level (trace, debug, info, warn, error, critical, off)");
        }
        http_->set_level(level);
        transactions_->set_level(level);
    }

    void shutdown() override {
        if (closed_.exchange(true)) return;
        http_->flush();
        transactions_->flush();
        pool_.reset();  // the last owner: its destructor writes every queued message, then joins
        sink_->flush();
    }

private:
    bool admit(const spdlog::logger& logger, spdlog::level::level_enum level) noexcept {
        if (closed_.load(std::memory_order_relaxed) || !logger.should_log(level)) return false;
        count_record();
        return true;
    }

    std::shared_ptr<spdlog::details::thread_pool> pool_;
    std::shared_ptr<spdlog::sinks::basic_file_sink_mt> sink_;
    std::shared_ptr<spdlog::async_logger> http_;
    std::shared_ptr<spdlog::async_logger> transactions_;
    std::atomic<bool> closed_{false};
};

}  // namespace

std::unique_ptr<ServiceLog> make_spdlog_log(const std::string& file) { return std::make_unique<SpdlogLog>(file); }

}  // namespace http_service

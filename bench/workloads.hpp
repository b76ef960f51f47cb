// SPDX-License-Identifier: MIT
// The workloads of the logger comparison, written once for both systems so that fieldlog and
// spdlog produce the same bytes per record: the constant message, zap's benchmark field set
// (fields_10) and the same fields bound to a logger (ctx_10). spdlog renders the identical JSON
// line through its pattern (UTC) and fmt; bench/lines_test.cpp checks that the lines are equal
// apart from `ts`. Used by logger_bench.cpp and by the other *_bench.cpp files.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include "fieldlog/fieldlog.hpp"

namespace fieldlog_bench {

using Time = std::chrono::sys_time<std::chrono::nanoseconds>;

/// The logger name of every workload (the `logger` key of each line).
inline constexpr const char* kLoggerName = "bench";
/// The message of every workload (zap's benchmark message, without its counter).
inline constexpr std::string_view kMessage = "Test logging, but use a somewhat realistic message length.";
/// kMessage as a JSON string, for spdlog, whose `"msg":%v` pattern does no quoting or escaping.
inline constexpr std::string_view kMessageJson = "\"Test logging, but use a somewhat realistic message length.\"";
static_assert(kMessageJson.substr(1, kMessageJson.size() - 2) == kMessage);

/// zap's benchmark user: an object {name, email, createdAt}.
struct User {
    std::string_view name;
    std::string_view email;
    Time created_at;
};

/// fieldlog's customisation point for User (found by ADL).
inline void fieldlog_encode(fieldlog::ValueEncoder& enc, const User& user) {
    enc.value(fieldlog::Object{{"name", user.name}, {"email", user.email}, {"createdAt", user.created_at}});
}

/// zap's benchmark field values (bench/README.md lists the fields).
struct Fields10 {
    std::array<int, 10> ints{1, 2, 3, 4, 5, 6, 7, 8, 9, 0};
    std::array<std::string_view, 10> strings{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
    std::array<Time, 10> times = [] {
        std::array<Time, 10> t{};
        for (std::size_t i = 0; i < t.size(); ++i) t[i] = Time(std::chrono::seconds(i));
        return t;
    }();
    User user{"Jane Doe", "jane@test.com",
              std::chrono::sys_days(std::chrono::year(1980) / 1 / 1) + std::chrono::hours(12)};
    std::array<User, 10> users = [this] {
        std::array<User, 10> u{};
        u.fill(user);
        return u;
    }();
    std::error_code error = std::make_error_code(std::errc::connection_refused);
};

/// The one instance every benchmark logs (long-lived: Fields refer to it).
inline const Fields10 kFields10{};

// ---- spdlog's side: fmt formatters that write the same JSON as fieldlog's encoder ----------

/// A time point written as fieldlog writes it: RFC 3339, UTC, 9 fraction digits, `Z`.
struct Rfc3339 {
    Time time;
};
/// A list of time points as a JSON array of Rfc3339 strings.
struct JsonTimes {
    std::span<const Time> times;
};
/// An error code as fieldlog writes it: "Connection refused (generic:111)". Like fieldlog it
/// reads the static strerror table instead of calling message(), which returns a std::string.
struct ErrorText {
    const std::error_code& code;
};

}  // namespace fieldlog_bench

/// Formatters with no format spec of their own.
struct FieldlogBenchFormatterBase {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
};

template <>
struct fmt::formatter<fieldlog_bench::Rfc3339> : FieldlogBenchFormatterBase {
    template <typename Context>
    auto format(const fieldlog_bench::Rfc3339& t, Context& ctx) const {
        const auto seconds = std::chrono::floor<std::chrono::seconds>(t.time);
        const auto nanos = (t.time - seconds).count();
        return fmt::format_to(ctx.out(), "{:%Y-%m-%dT%H:%M:%S}.{:09}Z",
                              fmt::gmtime(std::chrono::system_clock::to_time_t(seconds)), nanos);
    }
};

template <>
struct fmt::formatter<fieldlog_bench::JsonTimes> : FieldlogBenchFormatterBase {
    template <typename Context>
    auto format(const fieldlog_bench::JsonTimes& list, Context& ctx) const {
        auto out = ctx.out();
        *out++ = '[';
        for (std::size_t i = 0; i < list.times.size(); ++i) {
            if (i > 0) *out++ = ',';
            out = fmt::format_to(out, "\"{}\"", fieldlog_bench::Rfc3339{list.times[i]});
        }
        *out++ = ']';
        return out;
    }
};

template <>
struct fmt::formatter<fieldlog_bench::User> : FieldlogBenchFormatterBase {
    template <typename Context>
    auto format(const fieldlog_bench::User& user, Context& ctx) const {
        return fmt::format_to(ctx.out(), R"({{"name":"{}","email":"{}","createdAt":"{}"}})", user.name, user.email,
                              fieldlog_bench::Rfc3339{user.created_at});
    }
};

template <>
struct fmt::formatter<fieldlog_bench::ErrorText> : FieldlogBenchFormatterBase {
    template <typename Context>
    auto format(const fieldlog_bench::ErrorText& error, Context& ctx) const {
        const char* text = strerrordesc_np(error.code.value());
        return fmt::format_to(ctx.out(), "{} ({}:{})", text != nullptr ? text : "Unknown error",
                              error.code.category().name(), error.code.value());
    }
};

/// fields_10 as fieldlog call-site fields (a macro so that the call and Logger::with use the
/// very same list, and the FIELDLOG_* macro still skips building it when the level is off).
#define FIELDLOG_BENCH_FIELDS_10(d)                                                                  \
    {                                                                                                \
        {"int", (d).ints[0]}, {"ints", (d).ints}, {"string", (d).strings[0]}, {"strings", (d).strings}, \
            {"time", (d).times[0]}, {"times", (d).times}, {"user1", (d).user}, {"user2", (d).user},   \
            {"users", (d).users}, {"error", (d).error},                                                \
    }

/// fields_10 for spdlog: the fmt format of the fields (after the message) and its arguments.
#define FIELDLOG_BENCH_SPDLOG_FIELDS_10_FORMAT \
    R"("int":{},"ints":[{}],"string":"{}","strings":["{}"],"time":"{}","times":{},"user1":{},"user2":{},"users":[{}],"error":"{}")"
#define FIELDLOG_BENCH_SPDLOG_FIELDS_10_ARGS(d)                                                                  \
    (d).ints[0], fmt::join((d).ints, ","), (d).strings[0], fmt::join((d).strings, "\",\""),                       \
        ::fieldlog_bench::Rfc3339{(d).times[0]}, ::fieldlog_bench::JsonTimes{(d).times}, (d).user, (d).user, \
        fmt::join((d).users, ","), ::fieldlog_bench::ErrorText { (d).error }

namespace fieldlog_bench {

// ---- the calls each workload makes --------------------------------------------------------
// Forced inline, for both systems: the timed loop then holds the call site as a program
// writes it (the level check inline in the caller), not a call to a helper function.

/// static_msg: a constant message, no fields.
[[gnu::always_inline]] inline void log_static_msg(const fieldlog::Logger& log) { FIELDLOG_INFO(log, kMessage); }
[[gnu::always_inline]] inline void log_static_msg(spdlog::logger& log) { log.info(kMessageJson); }

/// fields_10: the message and zap's 10 fields, written at the call.
[[gnu::always_inline]] inline void log_fields_10(const fieldlog::Logger& log, const Fields10& d = kFields10) {
    FIELDLOG_INFO(log, kMessage, FIELDLOG_BENCH_FIELDS_10(d));
}
[[gnu::always_inline]] inline void log_fields_10(spdlog::logger& log, const Fields10& d = kFields10) {
    log.info("\"{}\"," FIELDLOG_BENCH_SPDLOG_FIELDS_10_FORMAT, kMessage, FIELDLOG_BENCH_SPDLOG_FIELDS_10_ARGS(d));
}

/// request_7: a request line of 7 values (a C string, a 20-char path, an int, a double, a
/// 13-char user, a uint64, a bool) whose message shows them: as a message template (request_7t),
/// and as the brace list with a fmt message of the same text (request_7). The lines are equal
/// (request_7_mismatch).
struct Request7 {
    const char* method = "GET";
    std::string_view path = "/api/v1/orders/12345";
    int status = 200;
    double latency_us = 1250.5;
    std::string_view user = "alice@example";
    std::uint64_t bytes = 5123;
    bool cached = false;
};
inline const Request7 kRequest7{};

[[gnu::always_inline]] inline void log_request_7t(const fieldlog::Logger& log, const Request7& r = kRequest7) {
    using namespace fieldlog::literals;
    FIELDLOG_INFO(log,
                  "request {method} {path} {status} in {latency_us:.1f} us user={user} bytes={bytes} cached={cached}"_tpl,
                  r.method, r.path, r.status, r.latency_us, r.user, r.bytes, r.cached);
}
[[gnu::always_inline]] inline void log_request_7(const fieldlog::Logger& log, const Request7& r = kRequest7) {
    FIELDLOG_INFO(log,
                  fieldlog::format("request {} {} {} in {:.1f} us user={} bytes={} cached={}", r.method, r.path,
                                   r.status, r.latency_us, r.user, r.bytes, r.cached),
                  {{"method", r.method}, {"path", r.path}, {"status", r.status}, {"latency_us", r.latency_us},
                   {"user", r.user}, {"bytes", r.bytes}, {"cached", r.cached}});
}

/// The request_7 lines of both forms, or an error text when they differ.
inline std::string request_7_mismatch() {
    auto memory = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(fieldlog::Config{.sinks = {fieldlog::SinkConfig{.target = memory}},
                                         .clock = []() noexcept { return fieldlog::Timestamp{1700000000, 0}; }});
    log_request_7t(fieldlog::get(kLoggerName));
    log_request_7(fieldlog::get(kLoggerName));
    const std::vector<std::string> lines = memory->lines();
    fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::off});
    if (lines.size() != 2) return "request_7: not two lines";
    return lines[0] == lines[1] ? std::string() : "request_7 lines differ:\n" + lines[0] + "\n" + lines[1];
}

/// ctx_10: a child logger carrying the 10 fields; each call then logs log_static_msg.
inline fieldlog::Logger fieldlog_ctx_10(const fieldlog::Logger& log, const Fields10& d = kFields10) {
    return log.with(FIELDLOG_BENCH_FIELDS_10(d));
}
/// spdlog has no bound fields: its nearest equivalent renders them once into the pattern.
inline std::string spdlog_ctx_10_context(const Fields10& d = kFields10) {
    return fmt::format(FIELDLOG_BENCH_SPDLOG_FIELDS_10_FORMAT, FIELDLOG_BENCH_SPDLOG_FIELDS_10_ARGS(d));
}

// ---- spdlog's setup ----------------------------------------------------------------------

/// `{"ts":"%Y-%m-%dT%H:%M:%S.%FZ","level":"%l","logger":"%n","msg":%v<,context>}`; the
/// message payload (%v) is the quoted message followed by any call fields.
inline std::string spdlog_pattern(std::string_view context = {}) {
    std::string pattern = R"({"ts":"%Y-%m-%dT%H:%M:%S.%FZ","level":"%l","logger":"%n","msg":%v)";
    if (!context.empty()) pattern += ',';
    for (const char c : context) {
        if (c == '%') pattern += '%';  // a literal '%' in a pattern is "%%"
        pattern += c;
    }
    pattern += '}';
    return pattern;
}

/// A logger named kLoggerName at level info writing to `sink` with spdlog_pattern(context)
/// in UTC, one line per record.
inline std::shared_ptr<spdlog::logger> make_spdlog_logger(spdlog::sink_ptr sink, std::string_view context = {}) {
    auto logger = std::make_shared<spdlog::logger>(kLoggerName, std::move(sink));
    logger->set_formatter(
        std::make_unique<spdlog::pattern_formatter>(spdlog_pattern(context), spdlog::pattern_time_type::utc, "\n"));
    logger->set_level(spdlog::level::info);
    return logger;
}

/// spdlog's counterpart of fieldlog's NullSink: renders each record through the pattern into a
/// memory buffer exactly as spdlog's file sinks do, then drops it. (spdlog's own null_sink
/// renders nothing, so it would compare a formatted line with an unformatted one.)
class RenderingNullSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    /// Bytes rendered so far (keeps the work observable).
    [[nodiscard]] std::size_t rendered_bytes() {
        const std::lock_guard lock(mutex_);
        return rendered_bytes_;
    }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t line;
        formatter_->format(msg, line);
        rendered_bytes_ += line.size();
    }
    void flush_() override {}

private:
    std::size_t rendered_bytes_ = 0;
};

}  // namespace fieldlog_bench

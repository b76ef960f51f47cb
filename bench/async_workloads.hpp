// SPDX-License-Identifier: MIT
// What the async comparisons share (bench/async_bench.cpp and the latency tool,
// bench/latency.cpp): the request line both systems log (the request_8 shape of
// bench/context_bench.cpp: method, path, status, latency, bytes, user id, request id, remote
// address), spdlog's async logger set up like fieldlog's (one worker thread, a bounded queue,
// policy block, the JSON pattern of workloads.hpp), and a way to wait until each system's
// background thread has written everything (so a measurement can include it).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include <spdlog/async_logger.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/details/thread_pool.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/ostream_sink.h>

#include "fieldlog/fieldlog.hpp"
#include "workloads.hpp"

namespace fieldlog_bench {

/// A service's request line: the same values for both systems.
struct Request {
    std::string_view method = "GET";
    std::string_view path = "/api/v1/orders/1234567";
    int status = 200;
    std::chrono::nanoseconds latency = std::chrono::microseconds(1250);
    std::int64_t bytes = 5123;
    std::int64_t user_id = 42;
    std::string_view request_id = "5f0c9a7e-4c1b-4a8e-9a8f-2f1c8f0e7b11";
    std::string_view remote_addr = "10.1.2.3:54321";
};
inline const Request kRequest{};
inline constexpr std::string_view kRequestMessage = "request done";

inline void log_request_8(const fieldlog::Logger& log, const Request& r = kRequest) {
    FIELDLOG_INFO(log, kRequestMessage,
                  {{"method", r.method}, {"path", r.path}, {"status", r.status}, {"latency", r.latency},
                   {"bytes", r.bytes}, {"user_id", r.user_id}, {"request_id", r.request_id},
                   {"remote_addr", r.remote_addr}});
}
inline void log_request_8(spdlog::logger& log, const Request& r = kRequest) {
    log.info(R"("{}","method":"{}","path":"{}","status":{},"latency":{},"bytes":{},"user_id":{},"request_id":"{}",)"
             R"("remote_addr":"{}")",
             kRequestMessage, r.method, r.path, r.status, r.latency.count(), r.bytes, r.user_id, r.request_id,
             r.remote_addr);
}

/// One request as a service logs it: its id, method and path on every record (fieldlog: a
/// Scope; spdlog, which has no context: in each call), two short records and the request line.
inline void log_request_scope(const fieldlog::Logger& log, const Request& r = kRequest) {
    const fieldlog::Scope request{{"request_id", r.request_id}, {"method", r.method}, {"path", r.path}};
    FIELDLOG_INFO(log, "request started");
    FIELDLOG_INFO(log, "cache miss", {{"key", "orders/1234567"}});
    FIELDLOG_INFO(log, kRequestMessage,
                  {{"status", r.status}, {"latency", r.latency}, {"bytes", r.bytes}, {"user_id", r.user_id},
                   {"remote_addr", r.remote_addr}});
}
inline void log_request_scope(spdlog::logger& log, const Request& r = kRequest) {
    log.info(R"("request started","request_id":"{}","method":"{}","path":"{}")", r.request_id, r.method, r.path);
    log.info(R"("cache miss","request_id":"{}","method":"{}","path":"{}","key":"{}")", r.request_id, r.method,
             r.path, "orders/1234567");
    log.info(R"("{}","request_id":"{}","method":"{}","path":"{}","status":{},"latency":{},"bytes":{},"user_id":{},)"
             R"("remote_addr":"{}")",
             kRequestMessage, r.request_id, r.method, r.path, r.status, r.latency.count(), r.bytes, r.user_id,
             r.remote_addr);
}

/// `line` without its `"ts":"…",` member.
inline std::string without_ts(std::string line) {
    const std::size_t begin = line.find("\"ts\":\"");
    const std::size_t end = begin == std::string::npos ? begin : line.find("\",", begin + 6);
    if (end != std::string::npos) line.erase(begin, end + 2 - begin);
    return line;
}

/// "" when both systems write the same request line apart from `ts`; otherwise both lines.
/// Leaves fieldlog configured with a MemorySink (the caller configures what it measures).
inline std::string request_8_mismatch() {
    auto memory = std::make_shared<fieldlog::MemorySink>();
    fieldlog::Config config;
    config.duration = fieldlog::DurationFormat::nanos;
    config.sinks = {fieldlog::SinkConfig{.target = memory}};
    fieldlog::configure(config);
    log_request_8(fieldlog::get(kLoggerName));
    std::ostringstream out;
    const auto spdlog_logger = make_spdlog_logger(std::make_shared<spdlog::sinks::ostream_sink_st>(out));
    log_request_8(*spdlog_logger);
    std::string spdlog_line = out.str();
    if (!spdlog_line.empty() && spdlog_line.back() == '\n') spdlog_line.pop_back();
    const std::string ours = memory->lines().empty() ? std::string() : without_ts(memory->lines().front());
    const std::string theirs = without_ts(spdlog_line);
    return ours == theirs ? std::string() : "fieldlog: " + ours + "\nspdlog:   " + theirs;
}

/// spdlog's file sink behind a sink that counts finished flushes, so that a caller can wait
/// until the async worker has written everything queued before a flush request.
class CountingFileSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
    explicit CountingFileSink(const std::string& path) : file_(path, true) {}
    [[nodiscard]] std::uint64_t flushes() const noexcept { return flushes_.load(std::memory_order_acquire); }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override { file_.log(msg); }
    void flush_() override {
        file_.flush();
        flushes_.fetch_add(1, std::memory_order_release);
    }
    void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override { file_.set_formatter(std::move(formatter)); }

private:
    spdlog::sinks::basic_file_sink_st file_;
    std::atomic<std::uint64_t> flushes_{0};
};

/// spdlog's default async queue: 8192 records, one worker thread.
inline constexpr std::size_t kSpdlogQueueItems = 8192;

/// An async spdlog logger (policy block) writing `sink` with the JSON pattern in UTC.
inline std::shared_ptr<spdlog::async_logger> make_spdlog_async_logger(spdlog::sink_ptr sink,
                                                                      std::shared_ptr<spdlog::details::thread_pool> pool) {
    auto logger = std::make_shared<spdlog::async_logger>(kLoggerName, std::move(sink), std::move(pool),
                                                         spdlog::async_overflow_policy::block);
    logger->set_formatter(
        std::make_unique<spdlog::pattern_formatter>(spdlog_pattern(), spdlog::pattern_time_type::utc, "\n"));
    logger->set_level(spdlog::level::info);
    return logger;
}

/// Returns once spdlog's worker has written every record queued before the call.
inline void drain(spdlog::logger& log, const CountingFileSink& sink) {
    const std::uint64_t before = sink.flushes();
    log.flush();  // async: queues a flush request behind the records
    while (sink.flushes() == before) std::this_thread::yield();
}

/// fieldlog writing JSON lines to a file, async (policy block, `queue_bytes`) or sync, with
/// FileSink's defaults (64 KiB buffer, flushed at level error and every second). Durations as
/// integer nanoseconds, as spdlog's request line writes them.
inline fieldlog::Config fieldlog_file_config(const std::string& path, bool async,
                                             std::size_t queue_bytes = 4 * 1024 * 1024) {
    fieldlog::Config config;
    config.level = fieldlog::Level::info;
    config.duration = fieldlog::DurationFormat::nanos;
    config.async = fieldlog::AsyncConfig{.enabled = async, .queue_bytes = queue_bytes,
                                         .overflow = fieldlog::OverflowPolicy::block};
    fieldlog::FileSinkOptions file;
    file.path = path;
    config.sinks = {fieldlog::SinkConfig{.target = file}};
    return config;
}

}  // namespace fieldlog_bench

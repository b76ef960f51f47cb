// SPDX-License-Identifier: MIT
// The dispatcher's calls into sinks (see sink_calls.hpp), and the default batch of a Sink,
// which gives each record the same policy as a single write.
#include "dispatch/sink_calls.hpp"

#include <exception>
#include <mutex>
#include <string>

#include "base/error_reporter.hpp"

namespace fieldlog {

void Sink::write_batch(std::span<const RecordView> records) {
    for (const RecordView& record : records) {
        try {
            write(record);
        } catch (...) {
            detail::lost_to_exception(*this, 1, "write");
        }
    }
}

namespace detail {
namespace {

ErrorReporter g_thrown;  // one rate limit for every sink's exceptions

}  // namespace

void lost_to_exception(Sink& sink, std::uint64_t records, std::string_view call) noexcept {
    SinkAccess::count_lost(sink, records);
    std::string_view reason = "an exception that is not a std::exception";
    try {
        throw;
    } catch (const std::exception& e) {
        reason = e.what();
    } catch (...) {
    }
    SinkInfo info;
    try {
        info = sink.info();
    } catch (...) {  // named as "custom", without a target
    }
    char operation[96];
    const int size = std::snprintf(operation, sizeof operation, "%.*s threw (%llu record%s lost)",
                                   static_cast<int>(call.size()), call.data(), static_cast<unsigned long long>(records),
                                   records == 1 ? "" : "s");
    g_thrown.report(info.kind, info.target, std::string_view(operation, size > 0 ? static_cast<std::size_t>(size) : 0),
                    reason);
}

void deliver_batch(Sink& sink, std::span<const RecordView> records) noexcept {
    std::uint64_t bytes = 0;
    for (const RecordView& record : records) bytes += record.bytes.size();
    SinkAccess::count_handed(sink, records.size(), bytes);
    try {
        sink.write_batch(records);
    } catch (...) {
        lost_to_exception(sink, records.size(), "write_batch");
    }
}

void flush_sink(Sink& sink) noexcept {
    try {
        sink.flush();
    } catch (...) {
        lost_to_exception(sink, 0, "flush");
    }
}

std::chrono::milliseconds begin_close_sink(Sink& sink) noexcept {
    try {
        return sink.begin_close();
    } catch (...) {
        lost_to_exception(sink, 0, "begin_close");
        return {};
    }
}

void close_and_flush(std::span<Sink* const> ending, std::span<Sink* const> flushed) noexcept {
    for (Sink* sink : ending) {
        const std::lock_guard lock(sink->mutex());
        begin_close_sink(*sink);
    }
    for (const std::span<Sink* const> sinks : {ending, flushed}) {
        for (Sink* sink : sinks) {
            const std::lock_guard lock(sink->mutex());
            flush_sink(*sink);
        }
    }
}

void tick_sink(Sink& sink, std::chrono::steady_clock::time_point now) noexcept {
    try {
        sink.tick(now);
    } catch (...) {
        lost_to_exception(sink, 0, "tick");
    }
}

void reopen_sink(Sink& sink) noexcept {
    try {
        sink.reopen();
    } catch (...) {
        lost_to_exception(sink, 0, "reopen");
    }
}

}  // namespace detail
}  // namespace fieldlog

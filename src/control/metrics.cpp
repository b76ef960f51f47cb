// SPDX-License-Identifier: MIT
// metrics() and metrics_text(): sum the per-thread counters (live threads plus those that
// exited) and read each running sink's counters. Cold path: takes the registry locks.
#include "fieldlog/metrics.hpp"

#include <fmt/format.h>

#include "control/state.hpp"
#include "record/context_pool.hpp"
#include "record/thread_registry.hpp"

namespace fieldlog {

Metrics metrics() {
    detail::State& s = detail::state();
    Metrics m;
    {
        detail::ThreadRegistry& r = detail::thread_registry();
        const std::lock_guard lock(r.mutex);
        m = r.retired;
        m.sinks.clear();
        for (const detail::ThreadContext* context : r.threads) {
            const detail::ThreadCounters& c = context->counters;
            for (std::size_t i = 0; i < m.records_by_level.size(); ++i) {
                m.records_by_level[i] += c.records[i].load(std::memory_order_relaxed);
            }
            m.encoded_bytes += c.encoded_bytes.load(std::memory_order_relaxed);
            m.oversized_records += c.oversized.load(std::memory_order_relaxed);
            m.context_fields_dropped += c.context_fields_dropped.load(std::memory_order_relaxed);
            m.nested_dropped += c.nested_dropped.load(std::memory_order_relaxed);
            m.dropped_after_shutdown += c.after_shutdown.load(std::memory_order_relaxed);
            m.backtrace_kept += c.backtrace_kept.load(std::memory_order_relaxed);
            m.backtrace_written += c.backtrace_written.load(std::memory_order_relaxed);
        }
    }
    m.context_pool_bytes = detail::pooled_bytes();
    const detail::PoolCounts pool = detail::pool_counts();
    m.context_pool_hits = pool.hits;
    m.context_pool_misses = pool.misses;
    const std::lock_guard lock(s.configure_mutex);  // the pipeline cannot be retired meanwhile
    {
        const std::lock_guard loggers_lock(s.loggers_mutex);  // lock order: configure, then loggers
        for (const auto& [name, core] : s.loggers) {  // a std::map: by name
            const std::uint64_t suppressed = core->suppressed.load(std::memory_order_relaxed);
            if (suppressed != 0) m.loggers.push_back(LoggerMetrics{name, suppressed});
        }
    }
    if (const detail::Pipeline* pipeline = detail::g_current_pipeline.load(std::memory_order_acquire)) {
        for (const auto& handle : pipeline->routing.sinks) {
            m.sinks.push_back(SinkMetrics{handle->name, std::string(handle->info.kind), handle->info.target, handle->counters()});
        }
        if (pipeline->writer) {
            const AsyncMetrics running = pipeline->writer->metrics();
            detail::accumulate(m.async, running);
            m.async.queue_high_water = running.queue_high_water;
            m.async.queue_capacity = running.queue_capacity;
            m.async.rings = running.rings;
            m.async.spare_rings = running.spare_rings;
        }
    }
    m.encoded_bytes += m.async.accepted_bytes;  // in async mode the writers encode
    return m;
}

namespace {

/// A label value escaped per the exposition format: backslash, double quote and newline.
std::string label_value(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

void counter(std::string& out, std::string_view name, std::string_view help) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} counter\n", name, help, name);
}
void gauge(std::string& out, std::string_view name, std::string_view help) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
}

}  // namespace

std::string metrics_text() {
    const Metrics m = metrics();
    std::string out;
    auto line = [&out](std::string_view name, std::string_view labels, std::uint64_t value) {
        if (labels.empty()) {
            fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
        } else {
            fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels, value);
        }
    };

    counter(out, "fieldlog_records_total", "Records that passed the level check, by level.");
    for (int i = 0; i < level_count - 1; ++i) {
        line("fieldlog_records_total", fmt::format("level=\"{}\"", to_string(static_cast<Level>(i))),
             m.records_by_level[static_cast<std::size_t>(i)]);
    }
    counter(out, "fieldlog_encoded_bytes_total", "Bytes encoded, once per format in use.");
    line("fieldlog_encoded_bytes_total", "", m.encoded_bytes);
    counter(out, "fieldlog_oversized_records_total", "Records that outgrew the per-thread inline buffer.");
    line("fieldlog_oversized_records_total", "", m.oversized_records);
    counter(out, "fieldlog_context_fields_dropped_total",
            "Context fields not attached: a scope opened inside a logging call, or a value that threw.");
    line("fieldlog_context_fields_dropped_total", "", m.context_fields_dropped);
    gauge(out, "fieldlog_context_pool_bytes", "Free memory the per-thread context pools keep for reuse.");
    line("fieldlog_context_pool_bytes", "", m.context_pool_bytes);
    counter(out, "fieldlog_context_pool_hits_total", "Context memory blocks taken from a pool's free list.");
    line("fieldlog_context_pool_hits_total", "", m.context_pool_hits);
    counter(out, "fieldlog_context_pool_misses_total", "Context memory blocks taken from the heap.");
    line("fieldlog_context_pool_misses_total", "", m.context_pool_misses);
    counter(out, "fieldlog_nested_dropped_total", "Records logged from inside a logging call, dropped.");
    line("fieldlog_nested_dropped_total", "", m.nested_dropped);
    counter(out, "fieldlog_dropped_after_shutdown_total", "Records logged after shutdown(), dropped.");
    line("fieldlog_dropped_after_shutdown_total", "", m.dropped_after_shutdown);
    counter(out, "fieldlog_backtrace_kept_total", "Records below their logger's level kept by a scope's backtrace.");
    line("fieldlog_backtrace_kept_total", "", m.backtrace_kept);
    counter(out, "fieldlog_backtrace_written_total", "Kept records written because a record reached the trigger level.");
    line("fieldlog_backtrace_written_total", "", m.backtrace_written);

    counter(out, "fieldlog_async_accepted_records_total", "Records accepted by the async queue.");
    line("fieldlog_async_accepted_records_total", "", m.async.accepted_records);
    counter(out, "fieldlog_async_accepted_bytes_total", "Bytes accepted by the async queue.");
    line("fieldlog_async_accepted_bytes_total", "", m.async.accepted_bytes);
    counter(out, "fieldlog_async_dropped_records_total", "Records dropped because the async queue was full.");
    line("fieldlog_async_dropped_records_total", "", m.async.dropped_records);
    gauge(out, "fieldlog_async_queue_high_water_bytes", "Most bytes ever waiting in one async ring.");
    line("fieldlog_async_queue_high_water_bytes", "", m.async.queue_high_water);
    gauge(out, "fieldlog_async_queue_capacity_bytes", "Capacity of each async ring (one per logging thread).");
    line("fieldlog_async_queue_capacity_bytes", "", m.async.queue_capacity);
    counter(out, "fieldlog_async_blocked_seconds_total", "Time callers waited for queue space.");
    fmt::format_to(std::back_inserter(out), "fieldlog_async_blocked_seconds_total {}\n",
                   static_cast<double>(m.async.blocked_nanos) / 1e9);
    gauge(out, "fieldlog_async_spare_rings", "Drained async rings kept for new threads.");
    line("fieldlog_async_spare_rings", "", m.async.spare_rings);
    gauge(out, "fieldlog_async_ring_high_water_bytes", "Most bytes ever waiting in a thread's async ring, by thread id.");
    for (const AsyncRingMetrics& ring : m.async.rings) {
        line("fieldlog_async_ring_high_water_bytes", fmt::format("thread=\"{}\"", ring.thread_id), ring.high_water);
    }
    counter(out, "fieldlog_async_ring_blocked_seconds_total", "Time a thread waited for space in its async ring, by thread id.");
    for (const AsyncRingMetrics& ring : m.async.rings) {
        fmt::format_to(std::back_inserter(out), "fieldlog_async_ring_blocked_seconds_total{{thread=\"{}\"}} {}\n",
                       ring.thread_id, static_cast<double>(ring.blocked_nanos) / 1e9);
    }

    counter(out, "fieldlog_suppressed_records_total", "Calls that rate limits kept back, by logger.");
    for (const LoggerMetrics& logger : m.loggers) {
        line("fieldlog_suppressed_records_total", fmt::format("logger=\"{}\"", label_value(logger.name)), logger.suppressed);
    }

    const struct {
        std::string_view name;
        std::string_view help;
        std::uint64_t SinkCounters::*member;
    } sink_counters[] = {
        {"fieldlog_sink_records_total", "Records handed to a sink.", &SinkCounters::records},
        {"fieldlog_sink_bytes_total", "Bytes handed to a sink.", &SinkCounters::bytes},
        {"fieldlog_sink_dropped_total", "Records a sink lost after it was handed them.", &SinkCounters::dropped},
        {"fieldlog_sink_errors_total", "Failed system calls in a sink, and exceptions it threw.", &SinkCounters::errors},
    };
    for (const auto& c : sink_counters) {
        counter(out, c.name, c.help);
        for (const SinkMetrics& sink : m.sinks) {
            line(c.name,
                 fmt::format("sink=\"{}\",kind=\"{}\",target=\"{}\"", label_value(sink.name), label_value(sink.kind),
                             label_value(sink.target)),
                 sink.counters.*c.member);
        }
    }
    return out;
}

}  // namespace fieldlog

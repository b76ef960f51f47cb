// SPDX-License-Identifier: MIT
// Every call the dispatcher makes into a sink goes through here: the caller holds the sink's
// mutex(); these count what the sink was handed and apply the one exception policy (a throw
// loses that record for that sink, is counted and reported, and goes no further). Used by sync
// dispatch, the async writer, flush, the periodic tick and reopen alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// The dispatcher's side of a Sink's counters.
struct SinkAccess {
    /// Records and bytes handed over. Only a holder of the sink's mutex calls it, so a plain
    /// load and store (no locked instruction) is enough.
    static void count_handed(Sink& sink, std::uint64_t records, std::uint64_t bytes) noexcept {
        sink.records_.store(sink.records_.load(std::memory_order_relaxed) + records, std::memory_order_relaxed);
        sink.bytes_.store(sink.bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    }
    static void count_lost(Sink& sink, std::uint64_t records) noexcept {
        sink.count_dropped(records);
        sink.count_error();
    }
};

/// The exception policy, from inside a catch block: `records` are lost for `sink`, counted, and
/// one line on stderr says so (at most once a second for all sinks). `call` names what threw.
void lost_to_exception(Sink& sink, std::uint64_t records, std::string_view call) noexcept;

/// Hands `record` to `sink` (caller holds sink.mutex()); a view of parts counts no bytes.
inline void deliver(Sink& sink, const RecordView& record) noexcept {
    SinkAccess::count_handed(sink, 1, record.bytes.size());
    try {
        sink.write(record);
    } catch (...) {
        lost_to_exception(sink, 1, "write");
    }
}

/// Hands `records` to `sink` as one batch (caller holds sink.mutex()). A write_batch of the
/// sink's own that throws loses the whole batch: which of its records went out is unknown.
void deliver_batch(Sink& sink, std::span<const RecordView> records) noexcept;
/// sink.flush(), tick() and reopen() under the policy (caller holds sink.mutex()).
void flush_sink(Sink& sink) noexcept;
/// sink.begin_close() under the policy (caller holds sink.mutex()): its bound, 0 when it threw.
std::chrono::milliseconds begin_close_sink(Sink& sink) noexcept;
/// The end of `ending` and a last flush of `flushed`: begins every close first, so that the
/// sinks' bounds run at once, then flushes each sink, ending ones within their bound. Takes
/// each sink's mutex in turn.
void close_and_flush(std::span<Sink* const> ending, std::span<Sink* const> flushed) noexcept;
void tick_sink(Sink& sink, std::chrono::steady_clock::time_point now) noexcept;
void reopen_sink(Sink& sink) noexcept;

}  // namespace fieldlog::detail

// Sinks: where finished lines go. The dispatcher hands each sink complete records only, from
// one thread at a time (it does the locking), so a sink is two functions: write and flush.
// Implementations live in sinks/; their headers in include/fieldlog/sinks/.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "fieldlog/export.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog {

/// One complete, encoded record as a sink sees it. `bytes` ends with '\n'.
/// NOTE: the bytes live in a per-thread buffer or the async queue; a sink MUST NOT keep the
/// span after the call returns (copy what it needs).
struct FIELDLOG_API RecordView {
    std::span<const char> bytes;
    Level level = Level::info;
    Timestamp time{};
};

/// A sink's own counters, readable at any time from any thread.
struct FIELDLOG_API SinkCounters {
    std::uint64_t records = 0;  ///< records fully written
    std::uint64_t bytes = 0;    ///< bytes fully written
    std::uint64_t dropped = 0;  ///< records lost (full disk, no receiver, oversize, …)
    std::uint64_t errors = 0;   ///< failed system calls
};

/// Base of every sink. Write two functions; the dispatcher guarantees one caller at a time.
/// **Example**
///   class StderrSink final : public fieldlog::Sink {
///       void write(std::span<const char> line) override { ::write(2, line.data(), line.size()); }
///       void flush() override {}
///   };
class FIELDLOG_API Sink {
public:
    Sink() = default;
    Sink(const Sink&) = delete;
    Sink& operator=(const Sink&) = delete;
    virtual ~Sink() = default;

    /// Writes one complete record (it ends with '\n'). MUST NOT throw.
    virtual void write(std::span<const char> record) = 0;
    /// Pushes buffered bytes to the OS (and further, if the sink promises that). MUST NOT throw.
    virtual void flush() = 0;

    /// A record with its level and time, for sinks that frame by them (syslog). Default: write().
    virtual void write_record(const RecordView& record) { write(record.bytes); }
    /// Several records at once, for sinks that can batch (writev, sendmmsg). Default: one by one.
    virtual void write_batch(std::span<const RecordView> records) {
        for (const RecordView& r : records) write_record(r);
    }
    /// Called once, after the last write, before the sink is destroyed: flush and release.
    virtual void close() { flush(); }
    /// Reopens files after logrotate moved them; a no-op for sinks without files.
    virtual void reopen() {}
    /// Crash path (a fatal signal, from its handler): writes what the sink has buffered
    /// straight to its destination. MUST be async-signal-safe: write(2) only, no lock, no heap.
    virtual void emergency_flush() noexcept {}
    /// Crash path, after emergency_flush(): writes one record straight to the destination,
    /// under the same rules. Default: nothing (the record is lost for this sink).
    virtual void emergency_write(std::span<const char> record) noexcept { static_cast<void>(record); }
    /// True when the destination is a terminal (console colour is chosen by this).
    [[nodiscard]] virtual bool is_terminal() const noexcept { return false; }

    /// A snapshot of this sink's counters.
    [[nodiscard]] SinkCounters counters() const noexcept;

protected:
    /// Counting helpers for implementations (relaxed atomics: statistics, not synchronisation).
    /// count_written is for the write path, which runs on one thread at a time (the dispatcher
    /// serialises write() and flush(); a sink's own thread must share a lock with them): it
    /// adds without a locked instruction, two fewer per record. The others may be called from
    /// any thread.
    void count_written(std::uint64_t records, std::uint64_t bytes) noexcept;
    void count_dropped(std::uint64_t records = 1) noexcept;
    void count_error() noexcept;

private:
    std::atomic<std::uint64_t> records_{0};
    std::atomic<std::uint64_t> bytes_{0};
    std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> errors_{0};
};

inline SinkCounters Sink::counters() const noexcept {
    return {records_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed),
            dropped_.load(std::memory_order_relaxed), errors_.load(std::memory_order_relaxed)};
}
inline void Sink::count_written(std::uint64_t records, std::uint64_t bytes) noexcept {
    records_.store(records_.load(std::memory_order_relaxed) + records, std::memory_order_relaxed);
    bytes_.store(bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
}
inline void Sink::count_dropped(std::uint64_t records) noexcept {
    dropped_.fetch_add(records, std::memory_order_relaxed);
}
inline void Sink::count_error() noexcept { errors_.fetch_add(1, std::memory_order_relaxed); }

}  // namespace fieldlog

// SPDX-License-Identifier: MIT
// Sinks: where finished lines go. A sink is two functions, write and flush. The dispatcher calls
// every function of a sink under that sink's one lock, counts the records and bytes it hands
// over, and keeps a sink's exception from its callers; a sink only writes (and reports what it
// alone knows: records it lost, system calls that failed). Implementations live in sinks/.
// Every sink is called the same way; what the record view holds for it is the one thing a sink
// chooses (SinkInfo::lines): a line encoded in its format, or the record's parts (journald,
// OTLP and the test observer encode for themselves).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "fieldlog/encoder.hpp"
#include "fieldlog/export.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog {

namespace detail {
struct SinkAccess;
}

/// One record as a sink sees it. A sink that reads lines (SinkInfo::lines, the default) gets
/// `bytes`, the record encoded in its format, ending with '\n'; the parts below are left empty
/// for it. A sink that reads parts gets no bytes and every part: nothing encoded, every value
/// Config::redact names already replaced, each field list in the order written (outer before
/// inner) with keys as given: merging repeated keys (field.hpp's rule) is the sink's to do.
/// NOTE: everything it refers to lives for the call only (a per-thread buffer, an async ring,
/// the message's fmt arguments); a sink copies what it keeps.
struct FIELDLOG_API RecordView {
    std::span<const char> bytes;
    Level level = Level::info;
    Timestamp time{};
    std::string_view logger{};  ///< the logger's name: a sink routes or labels by it without parsing the line
    /// formatted() tells a fmt message from plain text (a template's comes made text, its holes
    /// among `fields`); where() the call site.
    const Message* message = nullptr;
    std::span<const Field> bound{};   ///< the logger's with() fields, the parent's first
    std::span<const Field> scope{};   ///< the scopes open on the logging thread, outermost first
    std::span<const Field> fields{};  ///< the call's own
    /// The sink's encoder options, as configure() worked them out (time and duration forms, the
    /// call facts it asked for, the value cap): how its values would be written in a line.
    const EncoderOptions* options = nullptr;
    int thread_id = 0;  ///< the kernel id of the thread that logged it
};

/// A sink's counters, readable at any time from any thread.
struct FIELDLOG_API SinkCounters {
    std::uint64_t records = 0;  ///< records the dispatcher handed to the sink
    std::uint64_t bytes = 0;    ///< their bytes
    std::uint64_t dropped = 0;  ///< of those, records lost: the sink's report (full disk, no receiver, …) or a throw
    std::uint64_t errors = 0;   ///< failed system calls the sink reported, and exceptions it threw
};

/// What the dispatcher asks of a sink once, when it joins a running configuration.
struct FIELDLOG_API SinkInfo {
    std::string_view kind = "custom";  ///< metrics label ("stdout", "file", …); MUST outlive the sink (a literal)
    std::string target{};              ///< path or address; empty when there is none
    bool terminal = false;             ///< the destination is a terminal (console colour is chosen by this)
    std::chrono::milliseconds tick_period{0};  ///< how often tick() wants to run; 0: never
    /// The one format the sink takes (the lines it reads; a sink that reads parts, the fields'
    /// conventions: otel's for the `fatal` record's stack); configure() gives it records in that
    /// format whatever Config::format says, and rejects a SinkConfig::format of another.
    std::optional<Format> format{};
    /// What RecordView holds for the sink: true, a line in its format; false, the record's
    /// parts, and no line is encoded for it.
    bool lines = true;
};

/// The lock the dispatcher holds around every call into one sink. Free, it costs one atomic
/// instruction each way; a thread that finds it held sleeps (std::atomic::wait), so a slow sink
/// never spins a core. Meets BasicLockable (std::lock_guard). try_lock() and unlock() are
/// async-signal-safe (the crash path uses them).
class FIELDLOG_API SinkMutex {
public:
    SinkMutex() = default;
    SinkMutex(const SinkMutex&) = delete;
    SinkMutex& operator=(const SinkMutex&) = delete;

    void lock() noexcept {
        if (!try_lock()) [[unlikely]] lock_contended();
    }
    bool try_lock() noexcept {
        std::uint32_t expected = kFree;
        return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock() noexcept {
        if (state_.exchange(kFree, std::memory_order_release) == kContended) [[unlikely]] state_.notify_one();
    }

private:
    // Drepper's three-state mutex ("Futexes Are Tricky"): unlock wakes someone only when a
    // waiter may exist.
    static constexpr std::uint32_t kFree = 0;
    static constexpr std::uint32_t kLocked = 1;
    static constexpr std::uint32_t kContended = 2;  ///< locked, and some thread may be waiting

    void lock_contended() noexcept {
        // Whoever takes the lock here marks it contended: its unlock then wakes the next waiter.
        while (state_.exchange(kContended, std::memory_order_acquire) != kFree) {
            state_.wait(kContended, std::memory_order_relaxed);
        }
    }

    std::atomic<std::uint32_t> state_{kFree};
};

/// Base of every sink: write two functions. The dispatcher calls them from one thread at a
/// time, holding mutex(); it counts records and bytes, and an exception thrown by any of them
/// loses that record for this sink (counted as dropped and as an error, reported on stderr at
/// most once a second) and never reaches the logging call.
/// **Example**
///   class StderrSink final : public fieldlog::Sink {
///       void write(const fieldlog::RecordView& r) override { ::write(2, r.bytes.data(), r.bytes.size()); }
///       void flush() override {}
///   };
class FIELDLOG_API Sink {
public:
    Sink() = default;
    Sink(const Sink&) = delete;
    Sink& operator=(const Sink&) = delete;
    virtual ~Sink() = default;

    /// Writes one record: its line, or its parts (SinkInfo::lines).
    virtual void write(const RecordView& record) = 0;
    /// Pushes buffered bytes to the OS (and further, if the sink promises that).
    virtual void flush() = 0;

    // Optional extras, called under the same lock.

    /// Several records at once, in order (the async writer's batches), for sinks that can batch
    /// (writev, sendmmsg). Default: write() each; a record whose write() throws is lost alone.
    virtual void write_batch(std::span<const RecordView> records);
    /// Periodic chores (a timed flush, checking that the file is still there), about every
    /// info().tick_period, on the library's background thread.
    virtual void tick(std::chrono::steady_clock::time_point now) { static_cast<void>(now); }
    /// Reopens files after logrotate moved them (SIGHUP, reopen_files(), reload()).
    virtual void reopen() {}
    /// Crash path (a fatal signal, from its handler): writes what the sink has buffered, then
    /// `records`, straight to the destination. May be called several times. MUST be
    /// async-signal-safe: write(2) and the like only, no lock, no heap. It is called without
    /// regard to mutex() (the holder may be the thread that crashed). A sink that reads parts
    /// gets only the `fatal` record naming the signal: records still queued for it are lost
    /// (gathering their context needs the heap). Default: nothing (what the sink buffered and
    /// these records are lost for it).
    virtual void write_on_crash(std::span<const RecordView> records) noexcept { static_cast<void>(records); }
    /// What the dispatcher needs to know about this sink; asked once when it joins a configuration.
    [[nodiscard]] virtual SinkInfo info() const { return {}; }
    /// The sink's end begins: the program ends (main returns, exit(), SIGTERM through fieldlog's
    /// handler), shutdown(), or a configuration leaves out a sink configure() made. Returns at
    /// once with the sink's close bound. From now on flush() waits at most that long after this
    /// call; what the sink still holds when the bound has passed is dropped, counted and said on
    /// one stderr line. A record written later still goes out within the bound, or is dropped
    /// and counted once it passed. A later call keeps the first deadline. Default: 0, for a
    /// sink whose flush() leaves nothing behind.
    virtual std::chrono::milliseconds begin_close() { return {}; }

    /// A snapshot of this sink's counters.
    [[nodiscard]] SinkCounters counters() const noexcept;
    /// The dispatcher's lock for this sink. Take it to read, from another thread, state that
    /// write() changes (MemorySink::lines() does); never from inside a call the dispatcher made.
    [[nodiscard]] SinkMutex& mutex() const noexcept { return mutex_; }

protected:
    /// Records this sink lost after it took them (any thread; relaxed atomics: statistics).
    void count_dropped(std::uint64_t records = 1) noexcept { dropped_.fetch_add(records, std::memory_order_relaxed); }
    /// A system call of this sink's that failed (any thread).
    void count_error() noexcept { errors_.fetch_add(1, std::memory_order_relaxed); }

private:
    friend struct detail::SinkAccess;  // the dispatcher's counting

    mutable SinkMutex mutex_;
    std::atomic<std::uint64_t> records_{0};
    std::atomic<std::uint64_t> bytes_{0};
    std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint64_t> errors_{0};
};

inline SinkCounters Sink::counters() const noexcept {
    return {records_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed),
            dropped_.load(std::memory_order_relaxed), errors_.load(std::memory_order_relaxed)};
}

}  // namespace fieldlog

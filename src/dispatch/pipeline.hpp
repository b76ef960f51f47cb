// The dispatcher's snapshot of "where records go": the running sinks grouped into channels,
// one channel per distinct encoder (format + options), so a record is encoded once per format
// in use. A Pipeline never changes after it is published; configure() builds a new one and
// swaps it in (see PipelineGuard for how readers keep it alive without a global lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dispatch/async_writer.hpp"
#include "dispatch/sink_lock.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// A sink plus the lock that makes it single-caller. Shared between consecutive pipelines when
/// a configuration keeps the same sink (same file, same address), so nothing is reopened and
/// per-thread order in that destination is kept across a swap.
struct SinkHandle {
    std::shared_ptr<Sink> sink;
    SinkLock mutex;
    std::string kind;    ///< "stdout", "file", "udp", …
    std::string target;  ///< path or address
    SinkTarget origin;   ///< what it was made from; an equal target in a new config reuses it
};

struct Route {
    SinkHandle* handle;
    Level level;
};

struct Channel {
    EncoderOptions options;
    /// The same for equal options in every pipeline (intern_options): context nodes cache their
    /// encodings under it, so a configure() that keeps the options keeps the caches.
    std::uint32_t options_id = 0;
    Level min_level = Level::off;  ///< lowest level any of its sinks takes
    std::vector<Route> routes;
};

/// A small number naming `options`: equal options, equal number, for the life of the process.
/// Cold (configure() calls it); the table grows by one entry per distinct set of options.
std::uint32_t intern_options(const EncoderOptions& options);

struct Pipeline {
    std::vector<std::shared_ptr<SinkHandle>> handles;
    std::vector<Channel> channels;
    ClockFn clock = nullptr;
    Level min_level = Level::off;
    /// The pipeline after normal exit: each record is flushed as soon as it is written, since
    /// nothing may flush it later.
    bool flush_each_record = false;

    /// False while the previous pipeline's writer still has records queued (a swap from async
    /// to sync): direct writes wait for it, so no thread's record overtakes its queued ones.
    std::atomic<bool> open{true};
    /// Async mode (Config::async.enabled): the queue and writer thread in front of the sinks.
    /// Declared last, so it stops before the sinks it writes to go away.
    std::unique_ptr<AsyncWriter> writer;

    /// Hands one encoded record of `channel` to its sinks, or to the writer's queue.
    void dispatch(const Channel& channel, const RecordView& record) const noexcept;
    /// Waits until the writer (if any) has written every record queued so far, then flushes
    /// every sink.
    void flush() const noexcept;
    /// Sleeps until `open` (configure() sets it once the previous pipeline is retired).
    void wait_until_open() const noexcept;
};

}  // namespace fieldlog::detail

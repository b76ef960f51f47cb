// The dispatcher's snapshot of "where records go": the routing table, the clock, and in async
// mode the queue and writer thread in front of the sinks. A Pipeline never changes after it is
// published; configure() builds a new one and swaps it in (see PipelineGuard for how readers
// keep it alive without a global lock).
#pragma once

#include <atomic>
#include <memory>

#include "dispatch/async_writer.hpp"
#include "dispatch/routing.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

struct Pipeline {
    RoutingTable routing;
    ClockFn clock = nullptr;
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

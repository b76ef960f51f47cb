// SPDX-License-Identifier: MIT
// The dispatcher's snapshot of "where records go": the routing table, the clock, and in async
// mode the per-thread rings and writer thread in front of the sinks. A Pipeline never changes
// after it is published; configure() builds a new one and swaps it in (record/thread_context.hpp:
// how readers keep it alive without a global lock).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/async_writer.hpp"
#include "dispatch/routing.hpp"
#include "dispatch/sampler.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

struct Pipeline {
    RoutingTable routing;
    /// From this level up a record goes to its channels as it is: routing.lowest_level, or `off`
    /// when some logger has rules of its own (a filtered sink, a sampler), so that every record
    /// asks rules_for().
    Level unfiltered_level = Level::off;
    /// Config::sampling: the logger name each sampler covers (with its dotted children).
    std::vector<std::pair<std::string, std::unique_ptr<Sampler>>> samplers;
    /// Names this pipeline among all of the process: a logger's cached rules hold for the
    /// pipeline of their generation only.
    std::uint32_t generation = 0;
    ClockFn clock = nullptr;
    /// Config::redact, for the channels of parts (record/parts_view.hpp); the encoders have it
    /// in their options.
    std::vector<std::string> redact;
    /// The pipeline after normal exit: each record is flushed as soon as it is written, since
    /// nothing may flush it later.
    bool flush_each_record = false;

    /// False while the previous pipeline's writer still has records queued (a swap from async
    /// to sync): sync writes wait for it, so no thread's record overtakes its queued ones.
    std::atomic<bool> open{true};
    /// Async mode (Config::async.enabled): the per-thread rings and writer thread in front of the sinks.
    /// Declared last, so it stops before the sinks it writes to go away.
    std::unique_ptr<AsyncWriter> writer;

    /// What this pipeline does with a logger's records, past the level checks.
    struct LoggerRules {
        LoggerMask admitted = kEveryLogger;  ///< the filtered sinks that take it
        Sampler* sampler = nullptr;
    };
    /// Cached in `logger` (one word: generation, 1 + the sampler's index or 0, mask) for this
    /// pipeline; worked out (cold) the first time a logger asks.
    [[nodiscard]] LoggerRules rules_for(const LoggerCore& logger) const noexcept {
        std::uint64_t cached = logger.rules_cache.load(std::memory_order_relaxed);
        if (cached >> 32 != generation) [[unlikely]] cached = work_out_rules(logger);
        const auto sampler = static_cast<std::size_t>(cached >> kSamplerShift & 0xFF);
        return {static_cast<LoggerMask>(cached) | ~((LoggerMask{1} << kSamplerShift) - 1),
                sampler == 0 ? nullptr : samplers[sampler - 1].second.get()};
    }
    /// Works out the generation and `unfiltered_level` from the routes and samplers (configure()).
    void seal_rules();

    static constexpr unsigned kSamplerShift = kMaxFilteredSinks;
    /// rules_for's cache word for `logger`, worked out and stored.
    std::uint64_t work_out_rules(const LoggerCore& logger) const noexcept;

    /// Hands one record of `channel` (its line, or its parts) to each of its sinks
    /// that takes it (Route::takes; `admitted`: the logger's mask) on the calling thread. In
    /// async mode records go to the writer's rings instead; only one too large for them comes
    /// here, after drain().
    void dispatch(const Channel& channel, const RecordView& record, LoggerMask admitted) const noexcept;
    /// Waits until the writer (if any) has written every record queued so far, then flushes
    /// every sink.
    void flush() const noexcept;
    /// Sleeps until `open` (configure() sets it once the previous pipeline is retired).
    void wait_until_open() const noexcept;
    void set_open(bool is_open) noexcept { open.store(is_open, std::memory_order_release); }
};

}  // namespace fieldlog::detail

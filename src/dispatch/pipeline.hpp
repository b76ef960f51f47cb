// SPDX-License-Identifier: MIT
// The dispatcher's snapshot of "where records go": the routing table, the clock, and in async
// mode the per-thread rings and writer thread in front of the sinks. A Pipeline never changes
// after it is published; configure() builds a new one and swaps it in (record/thread_context.hpp:
// how readers keep it alive without a global lock).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dispatch/async_writer.hpp"
#include "dispatch/routing.hpp"
#include "dispatch/sampler.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// The distinct FilterBits of the loggers that log through one pipeline, interned the first time
/// each logger asks (Pipeline::work_out_rules), so that its one-word cache can name them by
/// index. They lie in one array that grows by copying; the arrays it outgrew stay until the
/// pipeline goes, so a reader takes no lock and may hold an older one.
class FilterSets {
public:
    /// The most words of sets: the cache word's 24 bits name where a set starts.
    static constexpr std::size_t kMaxWords = std::size_t{1} << 24;

    /// Sets of `words` words from now on (configure()): with none (no filters), at() is
    /// kEveryLogger; else the set of the sinks without a filter is interned first.
    void start(std::size_t words);
    [[nodiscard]] std::size_t words() const noexcept { return words_; }
    /// The set at `start`, which intern() returned, on any thread after the cache word that
    /// carries it was loaded with acquire.
    [[nodiscard]] FilterBits at(std::uint32_t start) const noexcept {
        return sets_.load(std::memory_order_acquire) + start;
    }
    /// Where `bits` (words() of them) start, interned if new. Throws std::bad_alloc, or
    /// std::length_error past kMaxWords.
    std::uint32_t intern(std::span<const std::uint64_t> bits);
    /// fork(): prepare takes the lock, so that no child starts with it held by a thread it
    /// does not have; the parent and the child give it back.
    void lock_for_fork() noexcept { mutex_.lock(); }
    void unlock_after_fork() noexcept { mutex_.unlock(); }

private:
    std::size_t words_ = 0;
    std::atomic<const std::uint64_t*> sets_{kEveryLogger};
    std::mutex mutex_;
    std::size_t used_ = 0;      ///< words
    std::size_t capacity_ = 0;  ///< words
    std::vector<std::unique_ptr<std::uint64_t[]>> arrays_;  ///< the current one last
    std::unordered_map<std::string, std::uint32_t> known_;  ///< a set's bytes → where it starts
};

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
    /// The loggers' FilterBits, interned as work_out_rules finds them.
    mutable FilterSets filter_sets;
    /// The FilterBits of the crash path's `fatal` record (final_record.hpp), worked out ahead:
    /// a signal handler may not intern them.
    FilterBits final_record_admitted = kEveryLogger;
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
        FilterBits admitted = kEveryLogger;  ///< the filtered sinks that take it
        Sampler* sampler = nullptr;
    };
    /// Cached in `logger` (one word: generation, 1 + the sampler's index or 0, where its
    /// interned FilterBits are) for this pipeline; worked out (cold) the first time a logger asks.
    [[nodiscard]] LoggerRules rules_for(const LoggerCore& logger) const noexcept {
        std::uint64_t cached = logger.rules_cache.load(std::memory_order_acquire);
        if (cached >> 32 != generation) [[unlikely]] cached = work_out_rules(logger);
        const auto sampler = static_cast<std::size_t>(cached >> kSamplerShift & 0xFF);
        return {filter_sets.at(static_cast<std::uint32_t>(cached & kSetMask)),
                sampler == 0 ? nullptr : samplers[sampler - 1].second.get()};
    }
    /// Works out the generation, `unfiltered_level` and `final_record_admitted` from the routes
    /// and samplers (configure()).
    void seal_rules();

    static constexpr unsigned kSamplerShift = 24;
    /// The cache word's FilterSets::intern() result.
    static constexpr std::uint64_t kSetMask = (std::uint64_t{1} << kSamplerShift) - 1;
    /// rules_for's cache word for `logger`, worked out and stored.
    std::uint64_t work_out_rules(const LoggerCore& logger) const noexcept;

    /// Hands one record of `channel` (its line, or its parts) to each of its sinks
    /// that takes it (Route::takes; `admitted`: the logger's FilterBits) on the calling thread. In
    /// async mode records go to the writer's rings instead; only one too large for them comes
    /// here, after drain().
    void dispatch(const Channel& channel, const RecordView& record, FilterBits admitted) const noexcept;
    /// Waits until the writer (if any) has written every record queued so far, then flushes
    /// every sink.
    void flush() const noexcept;
    /// Sleeps until `open` (configure() sets it once the previous pipeline is retired).
    void wait_until_open() const noexcept;
    void set_open(bool is_open) noexcept { open.store(is_open, std::memory_order_release); }
};

}  // namespace fieldlog::detail

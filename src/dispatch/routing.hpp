// SPDX-License-Identifier: MIT
// Which sinks get which records: the running sinks, grouped into channels (one per distinct
// encoder: format + options, so a record is encoded once per format in use), each channel with
// its routes (sink, lowest level, which loggers). Built once by configure() through add(); then
// read, never changed, by sync dispatch (a channel's routes), the async writer (per sink, the
// lowest level it takes of each channel) and the crash path (both): the one place routes are
// worked out.
//
// Logger rules (SinkConfig::loggers / exclude) are decided once per logger and table, not per
// record: each filtered sink owns one bit of a LoggerMask, and a logger's mask (the filtered
// sinks that take it) is cached in its LoggerCore (Pipeline::rules_for). A table without rules
// never asks: its gates are the plain levels.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/ticker.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// A running sink: the sink, what it said about itself when it joined, its name and what it
/// was made from. Shared between consecutive configurations that keep the same sink (the same
/// name and an equal SinkTarget), so nothing is reopened, its counters go on, and per-thread
/// order in that destination holds across a swap. While it lives, the background thread ticks
/// the sink as often as info.tick_period asks.
class SinkHandle final : public Tickable {
public:
    SinkHandle(std::shared_ptr<Sink> made, SinkTarget made_from, std::string named);
    ~SinkHandle();
    SinkHandle(const SinkHandle&) = delete;
    SinkHandle& operator=(const SinkHandle&) = delete;

    const std::shared_ptr<Sink> sink;
    const SinkInfo info;
    const SinkTarget origin;  ///< with an equal name, an equal target in a new configuration reuses this handle
    const std::string name;   ///< the metrics label

    /// The sink's counters since this handle was made: a sink the program made and configures
    /// again under another name starts from zero, as a new one does.
    [[nodiscard]] SinkCounters counters() const noexcept;

    /// The background tick: sink->tick() under the sink's mutex; skipped when a writer holds it
    /// (the next period tries again): the ticker never waits on a sink.
    void tick(std::chrono::steady_clock::time_point now) noexcept override;

private:
    const SinkCounters at_start_;
};

/// Bit i: the i-th filtered sink of a routing table takes the logger.
using LoggerMask = std::uint32_t;
inline constexpr LoggerMask kEveryLogger = ~LoggerMask{0};
inline constexpr std::size_t kMaxFilteredSinks = 24;  // the cache word keeps 24 bits (pipeline.hpp)

/// Which loggers one sink takes (README: Routing by logger). A pattern "a.b" names that logger
/// and every logger below it ("a.b.c"); "a.b.*" only those below; "*" every logger, the root too.
struct LoggerFilter {
    std::vector<std::string> take;     ///< empty: every logger
    std::vector<std::string> exclude;  ///< wins over take

    [[nodiscard]] bool admits(std::string_view logger) const noexcept;
    /// Empty when `pattern` is well formed, else what is wrong with it.
    [[nodiscard]] static std::string_view check(std::string_view pattern) noexcept;
};

struct Route {
    Sink* sink;
    /// The gate: records below it skip the route without a look. For a filtered route it is
    /// `off`, and a record asks takes() instead.
    Level level;
    Level filtered_level = Level::off;  ///< a filtered route's level
    LoggerMask filter = 0;              ///< a filtered route's bit; 0: every logger

    [[nodiscard]] bool takes(Level record, LoggerMask admitted) const noexcept {
        return (admitted & filter) != 0 && record >= filtered_level;
    }
};

struct Channel {
    EncoderOptions options;
    /// `options` with the thread id on, for the crash path's `fatal` record (it always names its
    /// thread); made here because a signal handler cannot copy options.
    EncoderOptions final_record_options;
    /// The same for equal options in every pipeline (intern_options): context nodes cache their
    /// encodings under it, so a configure() that keeps the options keeps the caches.
    std::uint32_t options_id = 0;
    /// The gate, like Route::level: the lowest level any of its sinks takes, or `off` when a
    /// route is filtered (records ask takes()).
    Level min_level = Level::off;
    bool filtered = false;  ///< some route takes only some loggers
    std::vector<Route> routes;

    Level unfiltered_level = Level::off;  ///< lowest level its routes without rules take

    /// True when some route takes a record at `level` of a logger with mask `admitted`: the
    /// gate, then takes() for a filtered channel.
    [[nodiscard]] bool takes_record(Level level, LoggerMask admitted) const noexcept {
        return level >= min_level || (filtered && takes(level, admitted));
    }
    /// takes_record past the gate.
    [[nodiscard]] bool takes(Level level, LoggerMask admitted) const noexcept {
        if (level >= unfiltered_level) return true;
        for (const Route& route : routes) {
            if (route.takes(level, admitted)) return true;
        }
        return false;
    }
};

/// A small number naming `options`: equal options, equal number, for the life of the process.
/// Cold (configure() calls it); the table grows by one entry per distinct set of options.
std::uint32_t intern_options(const EncoderOptions& options);

struct RoutingTable {
    std::vector<std::shared_ptr<SinkHandle>> sinks;  ///< each running sink once
    std::vector<Channel> channels;
    /// The typed sinks' routes (SinkInfo::typed): no channel, as they take records unencoded.
    std::vector<Route> typed;
    Level min_level = Level::off;  ///< lowest level any sink takes
    std::vector<LoggerFilter> filters;  ///< the filtered sinks' rules; filter i owns bit i

    /// Routes records of `options`' encoding at `level` and above to `handle`, of the loggers
    /// `filter` admits (cold: configure()); a typed sink's records unencoded, whatever
    /// `options` say. Throws ConfigError past kMaxFilteredSinks.
    void add(const std::shared_ptr<SinkHandle>& handle, const EncoderOptions& options, Level level,
             const LoggerFilter& filter);

    /// The lowest level sink `sink` (an index into `sinks`) takes of channel `channel`; off: none.
    [[nodiscard]] Level lowest(std::size_t sink, std::size_t channel) const noexcept {
        return lowest_[sink * channels.size() + channel];
    }
    /// The bit sink `sink` takes loggers by; 0: it takes every logger.
    [[nodiscard]] LoggerMask filter_of(std::size_t sink) const noexcept { return sink_filter_[sink]; }
    /// True when sink `sink` takes every record of every channel and logger.
    [[nodiscard]] bool takes_everything(std::size_t sink) const noexcept;

    /// The filtered sinks that take `logger` (every bit set when none is filtered). The record
    /// path asks Pipeline::rules_for, which caches this per logger.
    [[nodiscard]] LoggerMask admitted(std::string_view logger) const noexcept;

private:
    /// Fills lowest_ from the channels' routes (add()).
    void work_out_lowest();

    std::vector<Level> lowest_;           // sinks × channels
    std::vector<LoggerMask> sink_filter_;  // per sink
};

}  // namespace fieldlog::detail

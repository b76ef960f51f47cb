// SPDX-License-Identifier: MIT
// Which sinks get which records: the running sinks, grouped into channels (one per distinct
// encoder: format + options, so a record is encoded once per format in use), each channel with
// its routes (sink, lowest level, which loggers). Built once by configure() through add(); then
// read, never changed, by sync dispatch (channel by channel), the async writer and the crash
// path (sink by sink): each asks Route::takes, the one rule.
//
// Logger rules (SinkConfig::loggers / exclude) are decided once per logger and table, not per
// record: each filtered sink owns one bit of a logger's FilterBits, interned per pipeline and
// named in the logger's one-word cache (Pipeline::rules_for). A table without rules never asks:
// its checks are the plain levels.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
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

/// Which sinks take a logger's records: bit 0 (always set) for every sink without a filter,
/// bit 1 + i for the routing table's filter i, in 64-bit words. Points into the pipeline's
/// interned sets (Pipeline::rules_for), or is kEveryLogger when the table has no filters.
using FilterBits = const std::uint64_t*;
inline constexpr std::uint64_t kEveryLoggerWord[1] = {~std::uint64_t{0}};
inline constexpr FilterBits kEveryLogger = kEveryLoggerWord;

/// Which loggers one sink takes (README: Routing by logger). A pattern "a.b" names that logger
/// and every logger below it ("a.b.c"); "a.b.*" only those below; "*" every logger, the root too.
struct LoggerFilter {
    std::vector<std::string> take;     ///< empty: every logger
    std::vector<std::string> exclude;  ///< wins over take

    [[nodiscard]] bool admits(std::string_view logger) const noexcept;
    /// Empty when `pattern` is well formed, else what is wrong with it.
    [[nodiscard]] static std::string_view check(std::string_view pattern) noexcept;
};

/// One sink's place in a channel: the one rule of which records reach it.
struct Route {
    Sink* sink;
    Level level;                    ///< the sink's level
    std::uint32_t filter_word = 0;  ///< the word of FilterBits its bit is in
    std::uint64_t filter_bit = 1;   ///< its bit: bit 0 without a filter, bit 1 + i for filter i

    /// True when the sink takes a record at `record` of a logger whose filter bits are
    /// `admitted` (Pipeline::rules_for). Sync dispatch, the async writer and the crash path
    /// all ask this, and nothing else.
    [[nodiscard]] bool takes(Level record, FilterBits admitted) const noexcept {
        return record >= level && (admitted[filter_word] & filter_bit) != 0;
    }
};

/// The sinks that take a record in one form: a line of one encoder (format and options, so a
/// record is encoded once per format in use), or its parts (SinkInfo::lines false: its sinks
/// encode for themselves, with the options their values would be written with).
struct Channel {
    EncoderOptions options;
    /// `options` with the thread id on, for the crash path's `fatal` record (it always names its
    /// thread); made here because a signal handler cannot copy options.
    EncoderOptions final_record_options;
    /// The same for equal options in every pipeline (intern_options): context nodes cache their
    /// encodings under it, so a configure() that keeps the options keeps the caches.
    std::uint32_t options_id = 0;
    bool lines = true;  ///< SinkInfo::lines of its sinks
    /// The lowest level a route takes: below it, no route is asked.
    Level lowest_level = Level::off;
    bool filtered = false;  ///< some route takes only some loggers
    std::vector<Route> routes;

    /// True when some route takes the record (Route::takes).
    [[nodiscard]] bool takes(Level level, FilterBits admitted) const noexcept {
        if (level < lowest_level) return false;
        if (!filtered) return true;
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
    Level lowest_level = Level::off;    ///< lowest level any sink takes
    std::vector<LoggerFilter> filters;  ///< the filtered sinks' rules; filter i owns bit i

    /// Routes records of `options`' encoding at `level` and above to `handle`, of the loggers
    /// `filter` admits (cold: configure()); a sink that reads parts, to the parts channel of
    /// those options.
    void add(const std::shared_ptr<SinkHandle>& handle, const EncoderOptions& options, Level level,
             const LoggerFilter& filter);

    /// Sink `sink`'s route (an index into `sinks`) in channel `channel`, or null when it takes
    /// nothing of it: how the async writer and the crash path, which go sink by sink, find the rule.
    [[nodiscard]] const Route* route(std::size_t sink, std::size_t channel) const noexcept {
        return routes_[sink * channels.size() + channel];
    }

    /// Fills `bits` (filter_words() of them) with the FilterBits of `logger`. The record path
    /// asks Pipeline::rules_for, which interns them per logger.
    void admitted(std::string_view logger, std::span<std::uint64_t> bits) const noexcept;
    [[nodiscard]] std::size_t filter_words() const noexcept { return filters.empty() ? 0 : (filters.size() + 64) / 64; }

private:
    /// Fills routes_ from the channels (add()).
    void index_routes();

    std::vector<const Route*> routes_;  // sinks × channels
};

}  // namespace fieldlog::detail

// Which sinks get which records: the running sinks, grouped into channels (one per distinct
// encoder: format + options, so a record is encoded once per format in use), each channel with
// its routes (sink, lowest level). Built once by configure() through add(); then read, never
// changed, by sync dispatch (a channel's routes), the async writer (per sink, the lowest level
// it takes of each channel) and the crash path (both): the one place routes are worked out.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
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

struct Route {
    Sink* sink;
    Level level;  ///< records below it do not go to this sink
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

struct RoutingTable {
    std::vector<std::shared_ptr<SinkHandle>> sinks;  ///< each running sink once
    std::vector<Channel> channels;
    Level min_level = Level::off;  ///< lowest level any sink takes

    /// Routes records of `options`' encoding at `level` and above to `handle` (cold: configure()).
    void add(const std::shared_ptr<SinkHandle>& handle, const EncoderOptions& options, Level level);

    /// The lowest level sink `sink` (an index into `sinks`) takes of channel `channel`; off: none.
    [[nodiscard]] Level lowest(std::size_t sink, std::size_t channel) const noexcept {
        return lowest_[sink * channels.size() + channel];
    }
    /// True when sink `sink` takes every record of every channel.
    [[nodiscard]] bool takes_everything(std::size_t sink) const noexcept;

private:
    std::vector<Level> lowest_;  // sinks × channels
};

}  // namespace fieldlog::detail

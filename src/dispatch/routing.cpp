// The routing table (see routing.hpp) and the running sinks' background tick.
#include "dispatch/routing.hpp"

#include <algorithm>
#include <mutex>

#include "dispatch/sink_calls.hpp"

namespace fieldlog::detail {
SinkHandle::SinkHandle(std::shared_ptr<Sink> made, SinkTarget made_from, std::string named)
    : sink(std::move(made)),
      info(sink->info()),
      origin(std::move(made_from)),
      name(std::move(named)),
      at_start_(sink->counters()) {
    if (info.tick_period.count() > 0) add_ticking(this, info.tick_period);
}

SinkCounters SinkHandle::counters() const noexcept {
    const SinkCounters now = sink->counters();
    return {now.records - at_start_.records, now.bytes - at_start_.bytes, now.dropped - at_start_.dropped,
            now.errors - at_start_.errors};
}

SinkHandle::~SinkHandle() {
    if (info.tick_period.count() > 0) remove_ticking(this);
}

void SinkHandle::tick(std::chrono::steady_clock::time_point now) noexcept {
    SinkMutex& mutex = sink->mutex();
    if (!mutex.try_lock()) return;  // a writer has it: the next period comes soon
    tick_sink(*sink, now);
    mutex.unlock();
}

std::uint32_t intern_options(const EncoderOptions& options) {
    static std::mutex mutex;
    static std::vector<EncoderOptions> known;
    const std::lock_guard lock(mutex);
    for (std::size_t i = 0; i < known.size(); ++i) {
        if (known[i] == options) return static_cast<std::uint32_t>(i);
    }
    known.push_back(options);
    return static_cast<std::uint32_t>(known.size() - 1);
}

void RoutingTable::add(const std::shared_ptr<SinkHandle>& handle, const EncoderOptions& options, Level level) {
    if (std::find(sinks.begin(), sinks.end(), handle) == sinks.end()) sinks.push_back(handle);
    auto channel = std::find_if(channels.begin(), channels.end(), [&](const Channel& c) { return c.options == options; });
    if (channel == channels.end()) {
        channels.push_back(Channel{.options = options, .options_id = intern_options(options), .min_level = Level::off, .routes = {}});
        channel = channels.end() - 1;
    }
    channel->routes.push_back(Route{handle->sink.get(), level});
    channel->min_level = std::min(channel->min_level, level);
    min_level = std::min(min_level, level);

    lowest_.assign(sinks.size() * channels.size(), Level::off);
    for (std::size_t c = 0; c < channels.size(); ++c) {
        for (const Route& route : channels[c].routes) {
            const auto s = static_cast<std::size_t>(
                std::find_if(sinks.begin(), sinks.end(), [&](const auto& h) { return h->sink.get() == route.sink; }) -
                sinks.begin());
            Level& lowest_level = lowest_[s * channels.size() + c];
            lowest_level = std::min(lowest_level, route.level);
        }
    }
}

bool RoutingTable::takes_everything(std::size_t sink) const noexcept {
    for (std::size_t c = 0; c < channels.size(); ++c) {
        if (lowest(sink, c) != Level::trace) return false;
    }
    return true;
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
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
    // Never destroyed: the exit handler configures once more, and a table first used after it
    // was registered (a first configuration of sinks that read parts only) would be destroyed before it.
    static auto* const mutex = new std::mutex;
    static auto* const known = new std::vector<EncoderOptions>;
    const std::lock_guard lock(*mutex);
    for (std::size_t i = 0; i < known->size(); ++i) {
        if ((*known)[i] == options) return static_cast<std::uint32_t>(i);
    }
    known->push_back(options);
    return static_cast<std::uint32_t>(known->size() - 1);
}

namespace {

/// `options` with the thread id on: the crash path's `fatal` record always names its thread.
EncoderOptions with_thread_id(EncoderOptions options) {
    options.call_facts = static_cast<std::uint8_t>(options.call_facts | thread_id_fact);
    return options;
}

/// True when `pattern` (checked by LoggerFilter::check) names `logger`.
bool matches(std::string_view pattern, std::string_view logger) noexcept {
    if (pattern == "*") return true;
    if (pattern.ends_with(".*")) {
        const std::string_view parent = pattern.substr(0, pattern.size() - 1);  // keeps the dot
        return logger.size() > parent.size() && logger.starts_with(parent);
    }
    return logger.starts_with(pattern) && (logger.size() == pattern.size() || logger[pattern.size()] == '.');
}

bool any_matches(const std::vector<std::string>& patterns, std::string_view logger) noexcept {
    return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return matches(p, logger); });
}

}  // namespace

bool LoggerFilter::admits(std::string_view logger) const noexcept {
    return (take.empty() || any_matches(take, logger)) && !any_matches(exclude, logger);
}

std::string_view LoggerFilter::check(std::string_view pattern) noexcept {
    if (pattern.empty()) return "is empty (\"*\" takes every logger)";
    if (pattern == "*") return {};
    const std::string_view name = pattern.ends_with(".*") ? pattern.substr(0, pattern.size() - 2) : pattern;
    if (name.empty() || name.front() == '.' || name.back() == '.' || name.find("..") != std::string_view::npos) {
        return "is not a dotted logger name (like \"db\", \"db.pool\" or \"db.*\")";
    }
    if (name.find('*') != std::string_view::npos) return "has a '*' other than a final \".*\" or a lone \"*\"";
    return {};
}

void RoutingTable::add(const std::shared_ptr<SinkHandle>& handle, const EncoderOptions& options, Level level,
                       const LoggerFilter& filter) {
    Route route{.sink = handle->sink.get(), .level = level};
    const bool filtered = !filter.take.empty() || !filter.exclude.empty();
    if (filtered) {  // bit 0 stands for the sinks without a filter
        route.filter_word = static_cast<std::uint32_t>((filters.size() + 1) / 64);
        route.filter_bit = std::uint64_t{1} << (filters.size() + 1) % 64;
        filters.push_back(filter);
    }
    if (std::find(sinks.begin(), sinks.end(), handle) == sinks.end()) sinks.push_back(handle);
    lowest_level = std::min(lowest_level, level);
    const bool lines = handle->info.lines;
    auto channel = std::find_if(channels.begin(), channels.end(), [&](const Channel& c) {
        return c.lines == lines && c.options == options;
    });
    if (channel == channels.end()) {
        // Line channels before those of parts: the async writer, which may stop a record at a
        // line that does not fit its batch, has then handed no parts of it yet.
        const auto place = lines ? std::find_if(channels.begin(), channels.end(), [](const Channel& c) { return !c.lines; })
                                 : channels.end();
        channel = channels.insert(place, Channel{.options = options,
                                                 .final_record_options = with_thread_id(options),
                                                 .options_id = lines ? intern_options(options) : 0,
                                                 .lines = lines,
                                                 .lowest_level = Level::off,
                                                 .routes = {}});
    }
    channel->routes.push_back(route);
    channel->lowest_level = std::min(channel->lowest_level, level);
    channel->filtered = channel->filtered || filtered;
    index_routes();
}

void RoutingTable::index_routes() {
    routes_.assign(sinks.size() * channels.size(), nullptr);
    for (std::size_t c = 0; c < channels.size(); ++c) {
        for (const Route& route : channels[c].routes) {
            const auto s = static_cast<std::size_t>(
                std::find_if(sinks.begin(), sinks.end(), [&](const auto& h) { return h->sink.get() == route.sink; }) -
                sinks.begin());
            routes_[s * channels.size() + c] = &route;
        }
    }
}

void RoutingTable::admitted(std::string_view logger, std::span<std::uint64_t> bits) const noexcept {
    std::fill(bits.begin(), bits.end(), 0);
    bits[0] = 1;  // the sinks without a filter
    for (std::size_t i = 0; i < filters.size(); ++i) {
        if (filters[i].admits(logger)) bits[(i + 1) / 64] |= std::uint64_t{1} << (i + 1) % 64;
    }
}

}  // namespace fieldlog::detail

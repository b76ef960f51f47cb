// SPDX-License-Identifier: MIT
#include "dispatch/pipeline.hpp"

#include <chrono>
#include <mutex>
#include <thread>

#include "dispatch/sink_calls.hpp"

namespace fieldlog::detail {

namespace {

std::atomic<std::uint32_t> g_generations{0};

}  // namespace

void Pipeline::seal_rules() {
    generation = g_generations.fetch_add(1, std::memory_order_relaxed) + 1;
    if (samplers.size() > 255) throw ConfigError("sampling: at most 255 entries");
    unfiltered_level = routing.filters.empty() && samplers.empty() ? routing.lowest_level : Level::off;
}

std::uint64_t Pipeline::work_out_rules(const LoggerCore& logger) const noexcept {
    const std::string_view name = logger.name.text;
    std::uint64_t sampler = 0;
    std::size_t best = 0;
    for (std::size_t i = 0; i < samplers.size(); ++i) {  // the longest name covering this logger
        const std::string& covered = samplers[i].first;
        const bool covers = covered == "*" || name == covered ||
                            (name.starts_with(covered) && name.size() > covered.size() && name[covered.size()] == '.');
        if (covers && covered.size() + 1 > best) {
            sampler = i + 1;
            best = covered.size() + 1;
        }
    }
    const LoggerMask mask = routing.admitted(name) & ((LoggerMask{1} << kSamplerShift) - 1);
    const std::uint64_t word = std::uint64_t{generation} << 32 | sampler << kSamplerShift | mask;
    // Racing threads work out the same word: whichever store lands, it is right.
    logger.rules_cache.store(word, std::memory_order_relaxed);
    return word;
}

void Pipeline::dispatch(const Channel& channel, const RecordView& record, LoggerMask admitted) const noexcept {
    // With a writer, only a record too large for its rings comes here, after drain().
    if (!writer && !open.load(std::memory_order_acquire)) [[unlikely]] wait_until_open();
    for (const Route& route : channel.routes) {
        if (!route.takes(record.level, admitted)) continue;
        const std::lock_guard lock(route.sink->mutex());
        deliver(*route.sink, record);
        if (flush_each_record) [[unlikely]] flush_sink(*route.sink);
    }
}

void Pipeline::wait_until_open() const noexcept {
    while (!open.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void Pipeline::flush() const noexcept {
    if (writer) writer->drain();
    for (const auto& handle : routing.sinks) {
        const std::lock_guard lock(handle->sink->mutex());
        flush_sink(*handle->sink);
    }
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
#include "dispatch/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/sink_calls.hpp"
#include "encode/final_record.hpp"

namespace fieldlog::detail {

namespace {

std::atomic<std::uint32_t> g_generations{0};

}  // namespace

void FilterSets::start(std::size_t words) {
    words_ = words;
    if (words_ == 0) return;
    std::vector<std::uint64_t> unfiltered(words_, 0);
    unfiltered[0] = 1;
    intern(unfiltered);
}

std::uint32_t FilterSets::intern(std::span<const std::uint64_t> bits) {
    const std::lock_guard lock(mutex_);
    std::string key(reinterpret_cast<const char*>(bits.data()), bits.size_bytes());
    if (const auto found = known_.find(key); found != known_.end()) return found->second;
    if (used_ + words_ > kMaxWords) throw std::length_error("more distinct logger filter sets than a cache word names");
    if (used_ + words_ > capacity_) {
        const std::size_t capacity = std::min(kMaxWords, std::max<std::size_t>(16 * words_, capacity_ * 2));
        auto grown = std::make_unique<std::uint64_t[]>(capacity);
        if (used_ != 0) std::copy_n(arrays_.back().get(), used_, grown.get());
        arrays_.reserve(arrays_.size() + 1);
        known_.reserve(known_.size() + 1);
        sets_.store(grown.get(), std::memory_order_release);
        arrays_.push_back(std::move(grown));
        capacity_ = capacity;
    }
    std::copy(bits.begin(), bits.end(), arrays_.back().get() + used_);
    const auto start = static_cast<std::uint32_t>(used_);
    known_.emplace(std::move(key), start);
    used_ += words_;
    return start;
}

void Pipeline::seal_rules() {
    generation = g_generations.fetch_add(1, std::memory_order_relaxed) + 1;
    if (samplers.size() > 255) throw ConfigError("sampling: at most 255 entries");
    unfiltered_level = routing.filters.empty() && samplers.empty() ? routing.lowest_level : Level::off;
    filter_sets.start(routing.filter_words());
    final_record_admitted = rules_for(final_record_logger()).admitted;
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
    std::uint64_t set = 0;  // with no filters, at(0) is kEveryLogger
    if (!routing.filters.empty()) {
        try {
            std::vector<std::uint64_t> bits(filter_sets.words());
            routing.admitted(name, bits);
            set = filter_sets.intern(bits);
        } catch (...) {  // out of memory or of room: the set interned first (the sinks without a
            // filter), not cached, so that filtered sinks miss the record rather than take it
            // wrongly, and the next tries again
            return std::uint64_t{generation} << 32 | sampler << kSamplerShift;
        }
    }
    const std::uint64_t word = std::uint64_t{generation} << 32 | sampler << kSamplerShift | set;
    // Racing threads work out the same word: whichever store lands, it is right. Release: a
    // reader that loads it reads the interned set.
    logger.rules_cache.store(word, std::memory_order_release);
    return word;
}

void Pipeline::dispatch(const Channel& channel, const RecordView& record, FilterBits admitted) const noexcept {
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

// SPDX-License-Identifier: MIT
// The async writer thread's sweeps and batches (async_merge.hpp).
#include "dispatch/async_merge.hpp"

#include <algorithm>
#include <mutex>

#include "dispatch/async_ring.hpp"
#include "dispatch/channels.hpp"
#include "dispatch/pipeline.hpp"
#include "dispatch/ring_entry.hpp"
#include "dispatch/sink_calls.hpp"
#include "record/context_node.hpp"
#include "record/thread_context.hpp"

namespace fieldlog::detail {

using namespace async_entry;

AsyncMerge::AsyncMerge(const Pipeline& pipeline, std::size_t ring_capacity)
    : pipeline_(pipeline),
      ring_share_(ring_capacity / 4),
      batch_(kMaxBatch),
      views_(kMaxBatch * std::max<std::size_t>(1, pipeline.routing.channels.size()) * 2) {
    runs_.reserve(kMaxBatch);  // a run has at least one record
    taken_.reserve(kMaxBatch);
    line_facts_.reserve(views_.size() / 2);  // a line per record and channel at most
    lines_.reserve(kLineBytes);
}

void AsyncMerge::look(RingSet& rings) noexcept {
    rings.look(sweep_rings_);
    for (AsyncRing* ring : sweep_rings_) ring->sweep_end = ring->queue.published();
}

bool AsyncMerge::holds_unread() const noexcept {
    return std::any_of(sweep_rings_.begin(), sweep_rings_.end(),
                       [](const AsyncRing* ring) { return ring->queue.published() != ring->read; });
}

std::size_t AsyncMerge::collect() noexcept {
    std::size_t count = 0;
    runs_.clear();
    const std::uint64_t limit = ring_share_;
    // Every ring with records gets a share of the batch, so the hold-back in write_batch (which
    // looks at the rings that have a run in it) always lets something through.
    std::size_t pending = 0;
    for (const AsyncRing* ring : sweep_rings_) pending += ring->read < ring->sweep_end ? 1 : 0;
    const std::size_t share = std::max<std::size_t>(1, kMaxBatch / std::max<std::size_t>(1, pending));
    for (AsyncRing* ring : sweep_rings_) {
        std::uint64_t position = ring->read;
        std::int64_t key = ring->read_key;
        const std::size_t begin = count;
        while (position < ring->sweep_end && count < kMaxBatch && count - begin < share && position - ring->read < limit) {
            const SpscRing::Entry entry = ring->queue.entry_at(position);
            key = order_key_of(entry.data, key);
            batch_[count++] = Pending{entry.data, key, position};
            position = entry.next;
        }
        ring->batch_end = position;
        ring->batch_end_key = key;
        if (count > begin) runs_.push_back(Run{ring, begin, count});
    }
    return count;
}

void AsyncMerge::write_batch(std::size_t collected) noexcept {
    // Hold-back: a ring this batch did not take to its sweep end may still hold a record older
    // than what others offer, so nothing later than its first record left out goes in this
    // batch. Records a thread logged after another's (a join, a lock) keep that order too
    // (unless more than kMaxBatch rings hold records at once: a ring without a run is not
    // waited for).
    std::int64_t limit = INT64_MAX;
    for (const Run& run : runs_) {
        const AsyncRing& ring = *run.ring;
        if (ring.batch_end < ring.sweep_end) {
            limit = std::min(limit, order_key_of(ring.queue.entry_at(ring.batch_end).data, ring.batch_end_key));
        }
    }
    // Merge the runs by time: each is in order already, and on equal keys the earlier run
    // goes first, so every ring keeps its own order.
    taken_.clear();
    lines_.clear();
    line_facts_.clear();
    for (std::size_t i = 0; i < collected; ++i) {
        Run* first = nullptr;
        for (Run& run : runs_) {
            if (run.begin < run.end && (first == nullptr || batch_[run.begin].order_key < batch_[first->begin].order_key)) first = &run;
        }
        if (batch_[first->begin].order_key > limit) break;  // never the first: limit is at least that key
        const char* entry = batch_[first->begin].record;
        // When the batch's lines are full, the rest go in the next.
        if (!take_record(record_of(entry), admitted_of(entry))) break;
        taken_.push_back(&record_of(entry));  // reserved: never allocates
        first->ring->read_key = batch_[first->begin].order_key;
        ++first->begin;
    }
    for (const Run& run : runs_) {  // what was held back is taken again by the next batch
        if (run.begin < run.end) run.ring->batch_end = batch_[run.begin].position;
    }

    RecordView* all = views_.data();
    RecordView* chosen = views_.data() + views_.size() / 2;
    const std::size_t count = line_facts_.size();
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const Line& line = line_facts_[i];
        all[i] = RecordView{{lines_.data() + line.offset, line.size}, line.level, line.time, line.logger};
        bytes += line.size;
    }
    const RoutingTable& routing = pipeline_.routing;
    for (std::size_t s = 0; s < routing.sinks.size(); ++s) {
        Sink& sink = *routing.sinks[s]->sink;
        const std::lock_guard lock(sink.mutex());
        std::size_t n = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const Line& line = line_facts_[i];
            const Route* route = routing.route(s, line.channel);
            if (route != nullptr && route->takes(line.level, line.admitted)) chosen[n++] = all[i];
        }
        if (n != 0) deliver_batch(sink, std::span<const RecordView>(chosen, n));
        for (const Run& run : runs_) run.ring->handed_upto[s].store(run.ring->batch_end, std::memory_order_relaxed);  // published by the unlock
    }
    ContextHome* const home = t_context != nullptr ? t_context->home : nullptr;
    for (const OwnedRecord* record : taken_) {  // the context references queue_record took
        release(home, record->bound);
        release(home, record->scope);
    }
    for (const Run& run : runs_) {
        run.ring->read = run.ring->batch_end;
        run.ring->queue.release(run.ring->batch_end);
    }
    if (lines_.capacity() > kLineBytes) {  // a record larger than the reserve passed
        std::vector<char>().swap(lines_);
        try {
            lines_.reserve(kLineBytes);
        } catch (...) {  // the next batch grows it as far as it can
        }
    }
    accepted_records_.store(accepted_records_.load(std::memory_order_relaxed) + taken_.size(), std::memory_order_relaxed);
    accepted_bytes_.store(accepted_bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
}

bool AsyncMerge::take_record(const OwnedRecord& queued, FilterBits admitted) noexcept {
    const std::size_t lines_before = lines_.size();
    const std::size_t facts_before = line_facts_.size();
    HoleFields room;
    const Record record = queued.record(room);
    FormBuffers buffers{line_, scratch_, nullptr, parts_};
    return for_each_channel(pipeline_, record, admitted, buffers, [&](const Channel& channel, const RecordView& view) {
        if (!channel.lines) {  // every line of the record fit: they come first
            pipeline_.dispatch(channel, view, admitted);
            return true;
        }
        if (lines_.size() + view.bytes.size() > lines_.capacity() && !taken_.empty()) {
            lines_.resize(lines_before);  // within capacity: never allocates
            line_facts_.resize(facts_before);
            return false;
        }
        try {
            const std::size_t offset = lines_.size();
            lines_.insert(lines_.end(), view.bytes.begin(), view.bytes.end());
            line_facts_.push_back(Line{offset, view.bytes.size(), view.time, admitted, view.logger,
                                       static_cast<std::uint32_t>(&channel - pipeline_.routing.channels.data()),
                                       view.level});  // reserved
        } catch (...) {  // no memory for a record larger than the reserve: this channel's sinks miss it
        }
        return true;
    });
}

}  // namespace fieldlog::detail

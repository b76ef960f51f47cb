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

namespace fieldlog::detail {

using namespace async_entry;

AsyncMerge::AsyncMerge(const Pipeline& pipeline, std::size_t ring_capacity)
    : pipeline_(pipeline),
      ring_share_(ring_capacity / 4),
      views_(kMaxBatch * std::max<std::size_t>(1, pipeline.routing.channels.size()) * 2) {
    taken_.reserve(kMaxBatch);
    line_facts_.reserve(views_.size() / 2);  // a line per record and channel at most
    lines_.reserve(kLineBytes);
}

namespace {

std::atomic<ContextHome*> g_writers_pool{nullptr};  // the last writer's, between writers

}  // namespace

void AsyncMerge::take_pool() noexcept {
    home_ = g_writers_pool.exchange(nullptr, std::memory_order_acquire);
    if (home_ != nullptr) return;
    try {
        home_ = adopt_home();
    } catch (...) {  // no memory: see home_
    }
}

void AsyncMerge::give_back_pool() noexcept {
    if (home_ == nullptr) return;
    if (ContextHome* other = g_writers_pool.exchange(home_, std::memory_order_acq_rel)) orphan_home(other);
    home_ = nullptr;
}

void AsyncMerge::look(RingSet& rings) noexcept {
    rings.look(sweep_rings_);
    for (AsyncRing* ring : sweep_rings_) ring->sweep_end = ring->queue.published();
}

bool AsyncMerge::holds_unread() const noexcept {
    return std::any_of(sweep_rings_.begin(), sweep_rings_.end(),
                       [](const AsyncRing* ring) { return ring->queue.published() != ring->read; });
}

std::size_t AsyncMerge::write_batch() noexcept {
    // Merge by time: the record taken next is the earliest of every ring's next one (on equal
    // keys the first ring's), so each ring keeps its own order. The batch ends where that
    // record cannot go in it (its ring gave its share, or the lines are full): nothing later
    // goes before it.
    taken_.clear();
    lines_.clear();
    line_facts_.clear();
    for (AsyncRing* ring : sweep_rings_) {
        ring->batch_end = ring->read;
        ring->batch_end_key = ring->read_key;
    }
    while (taken_.size() < kMaxBatch) {
        AsyncRing* first = nullptr;
        std::int64_t first_key = 0;
        for (AsyncRing* ring : sweep_rings_) {
            if (ring->batch_end >= ring->sweep_end) continue;
            const std::int64_t key = order_key_of(ring->queue.entry_at(ring->batch_end).data, ring->batch_end_key);
            if (first == nullptr || key < first_key) {
                first = ring;
                first_key = key;
            }
        }
        if (first == nullptr || first->batch_end - first->read >= ring_share_) break;
        const SpscRing::Entry entry = first->queue.entry_at(first->batch_end);
        if (!take_record(record_of(entry.data), admitted_of(entry.data))) break;
        taken_.push_back(&record_of(entry.data));  // reserved: never allocates
        first->batch_end = entry.next;
        first->batch_end_key = first_key;
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
        for (AsyncRing* ring : sweep_rings_) {  // published by the unlock
            if (ring->batch_end != ring->read) ring->handed_upto[s].store(ring->batch_end, std::memory_order_relaxed);
        }
    }
    for (const OwnedRecord* record : taken_) {  // the context references the ring's copy took
        release(home_, record->bound);
        release(home_, record->scope);
    }
    for (AsyncRing* ring : sweep_rings_) {
        if (ring->batch_end == ring->read) continue;
        ring->read = ring->batch_end;
        ring->read_key = ring->batch_end_key;
        ring->queue.release(ring->read);
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
    return taken_.size();
}

bool AsyncMerge::take_record(const OwnedRecord& queued, FilterBits admitted) noexcept {
    const std::size_t lines_before = lines_.size();
    const std::size_t facts_before = line_facts_.size();
    HoleFields room;
    const Record record = queued.record(room);
    FormBuffers buffers{line_, scratch_, home_, parts_};
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

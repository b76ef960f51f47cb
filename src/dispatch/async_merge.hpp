// SPDX-License-Identifier: MIT
// The async writer thread's work, sweep by sweep (the order it keeps: async_writer.hpp): one
// look at every ring of the set; batches of what that look saw, merged by time;
// each record made again from its owned copy and put through the per-channel loop of sync mode
// (channels.hpp): its lines go into the batch, each sink handed its share of them (Route::takes),
// and its parts to the sinks that read them at once; then each record's payload released and
// each ring's part freed. Used by the writer thread alone; metrics() reads its counters.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/buffer.hpp"
#include "dispatch/ring_set.hpp"
#include "dispatch/routing.hpp"
#include "fieldlog/owned_record.hpp"
#include "fieldlog/sink.hpp"
#include "record/context_pool.hpp"
#include "record/parts_view.hpp"

namespace fieldlog::detail {

struct Pipeline;

class AsyncMerge {
public:
    /// The most records one batch takes.
    static constexpr std::size_t kMaxBatch = 1024;

    /// Reserves every batch array and the room for a batch's lines: nothing allocates after
    /// this unless a single record's lines are larger than that room, or a context node's
    /// encoding is made (from the writers' pool). `pipeline` MUST outlive it.
    AsyncMerge(const Pipeline& pipeline, std::size_t ring_capacity);

    /// The thread that writes takes the writers' pool before its first sweep, and gives it
    /// back after its last: one writer at a time uses it, and the next configure()'s finds it
    /// warm.
    void take_pool() noexcept;
    void give_back_pool() noexcept;

    /// The sweep's look: what each ring of `rings` has published now is what its batches take.
    void look(RingSet& rings) noexcept;
    /// Takes the next batch of what the look saw, in time order, and hands the sinks their
    /// shares of it; returns how many records it took (0: nothing of it is left).
    std::size_t write_batch() noexcept;
    /// Whether a ring the last look saw has published records not yet written.
    [[nodiscard]] bool holds_unread() const noexcept;

    [[nodiscard]] std::uint64_t accepted_records() const noexcept {
        return accepted_records_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t accepted_bytes() const noexcept { return accepted_bytes_.load(std::memory_order_relaxed); }

private:
    struct Line {  // one record's line for one channel, in lines_
        std::size_t offset;
        std::size_t size;
        Timestamp time;
        FilterBits admitted;
        std::string_view logger;
        std::uint32_t channel;
        Level level;
    };

    /// Puts `record` (its logger's filter bits `admitted`) through the per-channel loop: its lines into
    /// the batch's, its parts to their sinks. False, adding nothing, when its lines would not fit
    /// in the reserved room (the first record of a batch always fits).
    bool take_record(const OwnedRecord& record, FilterBits admitted) noexcept;

    alignas(64) std::atomic<std::uint64_t> accepted_records_{0};
    std::atomic<std::uint64_t> accepted_bytes_{0};
    const Pipeline& pipeline_;
    // The writers' pool while this writer writes: the context encodings it makes come from
    // it, and the context references it gives back go through it. Null when none could be had:
    // then a context not encoded yet costs the record its lines.
    ContextHome* home_ = nullptr;
    const std::uint64_t ring_share_;  // the most of one ring a batch takes: a quarter
    std::vector<AsyncRing*> sweep_rings_;  // the set as of the sweep's look
    std::vector<const OwnedRecord*> taken_;  // the batch's records in the order they go out
    Buffer line_;                    // one line being encoded
    Buffer scratch_;                 // the encoders' scratch
    PartsViewStorage parts_;         // the views of parts made here
    std::vector<char> lines_;        // the batch's lines, back to back (capacity kept)
    std::vector<Line> line_facts_;   // where each is, and for whom
    std::vector<RecordView> views_;
};

}  // namespace fieldlog::detail

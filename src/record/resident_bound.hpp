// Bound fields resident in the record buffer. A child logger's JSON bound fields (ctx_10: 1.5 KB)
// stay in this thread's record buffer at kResidentOffset from one record to the next; a record
// from the same child writes its header to end there instead of copying them again. The buffer
// names what it holds by BoundFields::id, never by address (a new BoundFields may reuse a freed
// one's). Any record that may have written over them, or cut into them, forgets them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "encode/record_input.hpp"
#include "fieldlog/encoder.hpp"
#include "record/bound_fields.hpp"
#include "record/buffer.hpp"

namespace fieldlog::detail {

/// Room for the record header (ts, level, logger, msg) before the bound fields.
inline constexpr std::size_t kResidentOffset = 1024;

/// Where this record's bound fields go, and whether `resident_id` says they are there already.
inline ResidentBound resident_for(std::uint64_t resident_id, const BoundFields* bound, Format format) noexcept {
    if (bound == nullptr || format != Format::json) return {};
    const std::size_t size = bound->encoded[static_cast<std::size_t>(Format::json)].bytes.size();
    if (size == 0 || size > Buffer::kInlineCapacity - kResidentOffset) return {};
    return {kResidentOffset, resident_id == bound->id};
}

/// The id of the bound fields `buffer` holds at kResidentOffset after a record that started at
/// `start` (not 0: it used them; see JsonEncoder::record) was encoded into it, given the id it
/// held before. Called before the buffer is shrunk, after every record while one is held: the
/// cuts it takes may otherwise date from earlier records, which only makes it forget sooner.
inline std::uint64_t resident_after(std::uint64_t resident_id, Buffer& buffer, std::size_t start,
                                    const BoundFields* bound, std::size_t bound_size) noexcept {
    const Buffer::Cuts cuts = buffer.take_cuts();
    if (start != 0) {  // kept only if no duplicate key was cut out of them
        const bool intact = !buffer.on_heap() && cuts.lowest >= kResidentOffset + bound_size;
        return intact ? bound->id : 0;
    }
    const bool untouched = !buffer.on_heap() && cuts.high_water + kEncoderOverreach <= kResidentOffset;
    return untouched ? resident_id : 0;
}

}  // namespace fieldlog::detail

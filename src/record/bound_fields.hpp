// Bound fields: what Logger::with attaches, encoded once per format when the child logger is
// made and copied as bytes into every record. Immutable and shared between logger copies.
// Each format keeps its member table too, so a scope or call field that repeats a bound key
// can replace it (the duplicate-key rule, encode/members.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "encode/members.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {

struct BoundFields {
    struct Encoded {
        std::string bytes;
        std::vector<SegmentMember> members;
        std::uint64_t mask = 0;
    };
    std::array<Encoded, format_count> encoded;  ///< indexed by Format
    /// Unique for the process's life (never 0), unlike the address, which a later BoundFields
    /// may reuse: names the bound fields a thread's record buffer holds (record/resident_bound.hpp).
    std::uint64_t id = 0;
};

/// The bound fields of `bound` (may be null) in `format`. Inline: every record asks.
inline Segment bound_segment(const BoundFields* bound, Format format) noexcept {
    if (bound == nullptr) return {};
    const BoundFields::Encoded& e = bound->encoded[static_cast<std::size_t>(format)];
    return Segment(e.bytes, e.members, e.mask, segment_key_offset(format));
}

/// The parent's members followed by `fields`, in every format (with the running encoder options);
/// a child's key replaces the parent's.
std::shared_ptr<const BoundFields> make_bound_fields(const BoundFields* parent, std::span<const Field> fields);

}  // namespace fieldlog::detail

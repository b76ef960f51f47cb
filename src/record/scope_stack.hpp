// The per-thread state behind fieldlog::Scope: the encoded fields of every open scope, in
// every format, in fixed storage inside the ThreadContext. Opening or closing a scope updates
// the "effective" run (all layers, a later key replacing an earlier one) — by appending or
// truncating when no key repeats, else by rebuilding it — so the record path only takes a view
// of it: Logger::emit passes segment(format) to the encoder.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "encode/members.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/scope.hpp"

namespace fieldlog::detail {

/// One format's scope members: bytes and member table, in fixed storage.
struct ScopeRun {
    std::uint16_t size = 0;
    std::uint16_t count = 0;
    std::uint64_t mask = 0;
    std::array<SegmentMember, Scope::max_fields> members;
    std::array<char, Scope::capacity> bytes;

    /// Inline: every record asks.
    [[nodiscard]] Segment segment(Format format) const noexcept {
        return Segment(std::string_view(bytes.data(), size), std::span<const SegmentMember>(members.data(), count), mask,
                       segment_key_offset(format));
    }
    /// The bytes of member i, separator included.
    [[nodiscard]] std::string_view member(std::size_t i) const noexcept {
        const std::size_t end = i + 1 < count ? members[i + 1].start : size;
        return {bytes.data() + members[i].start, end - members[i].start};
    }
};

/// What a ScopeContext holds: the effective run of each format.
using ScopeRuns = std::array<ScopeRun, format_count>;

class ScopeStack {
public:
    /// The scope fields of this thread in `format`, for the record being encoded.
    [[nodiscard]] Segment segment(Format format) const noexcept {
        return effective_[static_cast<std::size_t>(format)].segment(format);
    }
    [[nodiscard]] const ScopeRuns& effective() const noexcept { return effective_; }

    /// Adds a layer made of `runs` (unique keys within each); what does not fit is left out at
    /// a member boundary, the same number of members in every format. Returns its id (0 when no
    /// layer can be opened: too deep) and how many members of each run it kept.
    struct Opened {
        std::uint32_t id;
        std::array<std::size_t, format_count> kept;
    };
    Opened open(const ScopeRuns& runs) noexcept;
    /// Removes the layer `id` (any position: scopes may be destroyed out of order).
    void close(std::uint32_t id) noexcept;
    /// Marks layer `id` to be removed by close_pending(): a scope closed while its thread is
    /// inside a logging call must not change the bytes that call is encoding.
    void close_later(std::uint32_t id) noexcept;
    [[nodiscard]] bool has_pending() const noexcept { return pending_ != 0; }
    void close_pending() noexcept;

private:
    struct Layer {
        std::uint32_t id;
        bool closing;
        /// Per format: its members were appended to the effective run as they are (no key of
        /// it repeats an outer one), so closing it, when on top, just truncates.
        std::array<bool, format_count> appended;
        std::array<std::uint16_t, format_count> first_byte;
        std::array<std::uint16_t, format_count> first_member;
    };
    void rebuild(std::size_t format) noexcept;

    std::array<ScopeRun, format_count> raw_;        ///< every layer's own members, in order
    std::array<ScopeRun, format_count> effective_;  ///< raw_ with repeated keys resolved
    std::array<Layer, Scope::max_depth> layers_;
    int depth_ = 0;
    int pending_ = 0;  ///< layers marked by close_later()
    std::uint32_t next_id_ = 1;
};

}  // namespace fieldlog::detail

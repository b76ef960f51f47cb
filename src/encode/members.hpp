// SPDX-License-Identifier: MIT
// The duplicate-key rule shared by every encoder (RFC 7493: no repeated member names). Within
// one object — the record's top level included — a key written again replaces the earlier
// member, which is cut out of the buffer; the survivor sits where it was written last. Encoders
// report each member as they write it; pre-encoded bound and scope runs bring their member
// tables along, so the common case costs one mask test per key and copies nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "base/buffer.hpp"
#include "fieldlog/encoder.hpp"

namespace fieldlog::detail {

/// One top-level member of a pre-encoded run: where its separator is (relative to the run)
/// and how long its key is. The key starts Segment::key_offset bytes after `start`.
struct SegmentMember {
    std::uint32_t start;
    std::uint32_t key_len;
};

/// A run of pre-encoded top-level members (bound or scope fields) in one format, each with a
/// one-byte leading separator.
struct Segment {
    std::string_view bytes;
    std::span<const SegmentMember> members;
    std::uint64_t mask = 0;          ///< OR of key_bit() over the members
    std::uint8_t key_offset = 0;     ///< separator (+ opening quote in JSON) before each key

    Segment() = default;
    Segment(std::string_view b, std::span<const SegmentMember> m, std::uint64_t k, std::uint8_t offset) noexcept
        : bytes(b), members(m), mask(k), key_offset(offset) {}
};

/// One format's encoding of a context node and all its ancestors (later keys replacing earlier
/// ones) under one set of encoder options: top-level members with leading separators. Made by
/// the context nodes (record/context_node.hpp); its member table and bytes follow it in memory.
struct EncodedContext {
    const EncodedContext* next;  ///< the node's encoding under other options, if any
    std::uint32_t options_id;
    std::uint32_t size;
    std::uint32_t count;
    std::uint64_t mask;

    [[nodiscard]] const SegmentMember* members() const noexcept {
        return reinterpret_cast<const SegmentMember*>(this + 1);
    }
    [[nodiscard]] const char* bytes() const noexcept { return reinterpret_cast<const char*>(members() + count); }
    /// The run, whose members' keys start `key_offset` bytes after them (the encoder's).
    [[nodiscard]] Segment segment(std::uint8_t key_offset) const noexcept {
        return Segment(std::string_view(bytes(), size), std::span<const SegmentMember>(members(), count), mask,
                       key_offset);
    }
};

/// A record's context as one channel writes it: its bound and scope nodes' encodings under
/// that channel's options (null: none).
struct EncodedContexts {
    const EncodedContext* bound = nullptr;
    const EncodedContext* scope = nullptr;
};

/// A cheap fingerprint of a key's bytes: equal keys have equal tags.
constexpr std::uint64_t key_tag(const char* p, std::size_t n) noexcept {
    if (n == 0) return 0;
    const auto byte = [&](std::size_t i) { return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])); };
    return (static_cast<std::uint64_t>(n) << 24) | (byte(0) << 16) | (byte(n / 2) << 8) | byte(n - 1);
}
/// The bit a tag sets in an object's 64-bit key mask.
constexpr std::uint64_t key_bit(std::uint64_t tag) noexcept {
    return std::uint64_t{1} << ((tag * 0x9E3779B97F4A7C15ULL) >> 58);
}

/// The members of every open object of one record, as offsets into the output buffer.
class MemberIndex {
public:
    static constexpr int kMaxLevels = 40;  ///< more than any encoder's depth limit

    explicit MemberIndex(Buffer& out) noexcept : out_(out) { levels_[0] = Level{0, 0}; }
    ~MemberIndex() {
        if (entries_ != inline_) [[unlikely]] release();
    }
    MemberIndex(const MemberIndex&) = delete;
    MemberIndex& operator=(const MemberIndex&) = delete;

    /// A nested object starts / ends (the top level is always open). Inline: every object pays them.
    void open_object() noexcept {
        ++depth_;
        levels_[depth_] = Level{count_, 0};
    }
    void close_object() noexcept {
        count_ = levels_[depth_].first;
        --depth_;
    }

    /// Appends a pre-encoded run (its keys already unique) to the top level, cutting out the
    /// earlier members whose keys it repeats. Inline: most records have no bound or no scope
    /// fields, and a run whose keys meet none before it is only copied and noted.
    void append_segment(const Segment& segment) {
        if (segment.members.empty()) return;
        if (!append_whole(segment.members.data(), segment.members.size(), segment.key_offset, segment.bytes,
                          segment.mask)) [[unlikely]]
            append_run(segment);
    }

    /// append_segment() of a context's encoding, its keys `key_offset` bytes into each member;
    /// nothing when it is null. The Segment is made only when its members go in one by one.
    void append_context(const EncodedContext* context, std::uint8_t key_offset) {
        if (context == nullptr || context->count == 0) return;
        const std::string_view bytes(context->bytes(), context->size);
        if (!append_whole(context->members(), context->count, key_offset, bytes, context->mask)) [[unlikely]]
            append_run(context->segment(key_offset));
    }

    /// Reports the member being written in the innermost open object: its separator starts at
    /// `start` and is `separator` bytes long, its key is out[key_start, key_start + key_len).
    /// An earlier member with the same key is cut out of the buffer. Returns how far every
    /// byte from `start` on moved left (0 unless something was cut before it).
    std::size_t add(std::size_t start, std::size_t separator, std::size_t key_start, std::size_t key_len) {
        const std::uint64_t tag = key_tag(out_.data() + key_start, key_len);
        const std::uint64_t bit = key_bit(tag);
        Level& level = levels_[depth_];
        if ((level.mask & bit) == 0 && count_ < capacity_) {  // a new key: no search
            level.mask |= bit;
            entries_[count_++] = Entry{start, key_start, static_cast<std::uint32_t>(key_len), static_cast<std::uint32_t>(tag),
                                       static_cast<std::uint32_t>(separator)};
            return 0;
        }
        return add_slow(start, separator, key_start, key_len, tag);
    }

    /// Deferred indexing of top-level members: claims `bit` in the top level's key mask when no
    /// key written there so far can have it (then the member needs no entry until a later key
    /// could repeat it); false, claiming nothing, otherwise. MUST: no nested object open.
    bool claim_top_bit(std::uint64_t bit) noexcept {
        if ((levels_[0].mask & bit) != 0) return false;
        levels_[0].mask |= bit;
        return true;
    }
    /// The entry of a top-level member whose bit claim_top_bit() claimed, written after every
    /// member indexed so far; `tag` is key_tag() of its key.
    void push_claimed(std::size_t start, std::size_t separator, std::size_t key_start, std::size_t key_len,
                      std::uint64_t tag) {
        push(Entry{start, key_start, static_cast<std::uint32_t>(key_len), static_cast<std::uint32_t>(tag),
                   static_cast<std::uint32_t>(separator)});
    }

    /// The top-level members written at or after `base`, relative to it, for making a Segment;
    /// writes at most `out.size()` of them and returns how many there are in all.
    std::size_t top_members(std::size_t base, std::span<SegmentMember> out) const noexcept;
    /// The key mask of the top level.
    [[nodiscard]] std::uint64_t top_mask() const noexcept { return levels_[0].mask; }

private:
    struct Entry {
        std::size_t start;
        std::size_t key_start;
        std::uint32_t key_len;
        std::uint32_t tag;  ///< key_tag() truncated: a fingerprint, compared before the bytes
        std::uint32_t separator;
    };
    struct Level {
        std::size_t first;  ///< index of its first entry
        std::uint64_t mask;
    };
    /// A run appended whole: what turning it into entries later needs of its Segment.
    struct SegmentRef {
        const SegmentMember* first;
        std::size_t base;
        std::uint32_t count;
        std::uint8_t key_offset;
        [[nodiscard]] std::span<const SegmentMember> members() const noexcept { return {first, count}; }
    };

    [[nodiscard]] bool same_key(std::size_t key_start, std::size_t key_len, const char* other, std::size_t other_len) const noexcept {
        return key_len == other_len && std::memcmp(out_.data() + key_start, other, key_len) == 0;
    }
    std::size_t add_slow(std::size_t start, std::size_t separator, std::size_t key_start, std::size_t key_len,
                         std::uint64_t full_tag);
    /// The run copied as one block, its members noted to become entries only when a later key
    /// needs them; false, with nothing written, when a key of it may repeat one written before.
    bool append_whole(const SegmentMember* members, std::size_t count, std::uint8_t key_offset,
                      std::string_view bytes, std::uint64_t mask) {
        if (depth_ != 0 || count_ != 0 || segment_count_ >= 2 || (levels_[0].mask & mask) != 0) return false;
        const auto members_count = static_cast<std::uint32_t>(count);
        segments_.refs[segment_count_++] = SegmentRef{members, out_.size(), members_count, key_offset};
        // A run with members has bytes: no empty-span test (Buffer::append's made the compiler
        // call an out-of-line part of it for every context).
        char* const o = out_.reserve(bytes.size());
        std::memcpy(o, bytes.data(), bytes.size());
        out_.commit(o + bytes.size());
        levels_[0].mask |= mask;
        return true;
    }
    /// append_segment() when a key of the run may repeat one already written.
    void append_run(const Segment& segment);
    void push(const Entry& entry) {
        if (count_ == capacity_) [[unlikely]] grow();
        entries_[count_++] = entry;
    }
    void grow();  ///< doubles the entry table, onto the heap
    void materialise_segments();
    /// Cuts entry `index` (of the innermost level) out of the buffer; returns the bytes removed.
    std::size_t erase(std::size_t index) noexcept;

    void release() noexcept;

    /// Storage made per record: only what is in use is ever written (the record path builds
    /// one index a record, so initialising the unused slots cost every record).
    union SegmentSlots {
        SegmentSlots() noexcept {}  // NOLINT: left uninitialised on purpose
        SegmentRef refs[2];
    };

    Buffer& out_;
    Level levels_[kMaxLevels];
    int depth_ = 0;
    SegmentSlots segments_;  ///< runs of the top level not yet turned into entries (segment_count_ of them)
    int segment_count_ = 0;
    // Members of the open objects of one record held without heap; beyond, the table moves to
    // the heap for that record (like the record buffer).
    static constexpr std::size_t kInlineEntries = 64;
    Entry inline_[kInlineEntries];
    Entry* entries_ = inline_;
    std::size_t count_ = 0;
    std::size_t capacity_ = kInlineEntries;
};

}  // namespace fieldlog::detail

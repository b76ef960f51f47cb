// SPDX-License-Identifier: MIT
// The duplicate-key rule: see members.hpp. The fast path (no repeated key) is a mask test and
// an append to a small inline table; cutting a member out is the rare path.
#include "encode/members.hpp"

#include <algorithm>
#include <new>

namespace fieldlog::detail {

void MemberIndex::release() noexcept { ::operator delete(entries_); }

void MemberIndex::grow() {
    auto* grown = static_cast<Entry*>(::operator new(capacity_ * 2 * sizeof(Entry)));
    std::memcpy(static_cast<void*>(grown), entries_, count_ * sizeof(Entry));
    if (entries_ != inline_) ::operator delete(entries_);
    entries_ = grown;
    capacity_ *= 2;
}

void MemberIndex::append_run(const Segment& segment) {
    // Some key may repeat one already written: add the members one by one.
    for (std::size_t i = 0; i < segment.members.size(); ++i) {
        const SegmentMember& m = segment.members[i];
        const std::size_t end = i + 1 < segment.members.size() ? segment.members[i + 1].start : segment.bytes.size();
        const std::size_t start = out_.size();
        out_.append(segment.bytes.data() + m.start, end - m.start);
        add(start, 1, start + segment.key_offset, m.key_len);
    }
}

void MemberIndex::materialise_segments() {
    std::size_t total = 0;
    for (int s = 0; s < segment_count_; ++s) total += segments_.refs[s].count;
    const std::size_t dynamic = count_;
    for (std::size_t i = 0; i < total; ++i) push(Entry{});  // room; moved into place below
    std::memmove(static_cast<void*>(entries_ + total), entries_, dynamic * sizeof(Entry));
    std::size_t next = 0;
    for (int s = 0; s < segment_count_; ++s) {
        const SegmentRef& ref = segments_.refs[s];
        for (const SegmentMember& m : ref.members()) {
            const std::size_t start = ref.base + m.start;
            const std::size_t key_start = start + ref.key_offset;
            entries_[next++] = Entry{start, key_start, m.key_len, static_cast<std::uint32_t>(key_tag(out_.data() + key_start, m.key_len)), 1};
        }
    }
    segment_count_ = 0;
}

std::size_t MemberIndex::add_slow(std::size_t start, std::size_t separator, std::size_t key_start, std::size_t key_len,
                                  std::uint64_t full_tag) {
    const std::uint64_t bit = key_bit(full_tag);
    const auto tag = static_cast<std::uint32_t>(full_tag);
    Level& level = levels_[depth_];
    const bool maybe_repeated = (level.mask & bit) != 0;
    level.mask |= bit;
    if (maybe_repeated && depth_ == 0) {
        for (int s = 0; s < segment_count_; ++s) {
            const SegmentRef& ref = segments_.refs[s];
            const std::span<const SegmentMember> members = ref.members();
            const bool hit = std::any_of(members.begin(), members.end(), [&](const SegmentMember& m) {
                const char* key = out_.data() + ref.base + m.start + ref.key_offset;
                return key_tag(key, m.key_len) == full_tag && same_key(key_start, key_len, key, m.key_len);
            });
            if (hit) {
                materialise_segments();
                break;
            }
        }
    }
    push(Entry{start, key_start, static_cast<std::uint32_t>(key_len), tag, static_cast<std::uint32_t>(separator)});
    if (!maybe_repeated) return 0;
    for (std::size_t i = level.first; i + 1 < count_; ++i) {
        const Entry& e = entries_[i];
        if (e.tag == tag && same_key(key_start, key_len, out_.data() + e.key_start, e.key_len)) return erase(i);
    }
    return 0;
}

std::size_t MemberIndex::erase(std::size_t index) noexcept {
    // The entry after `index` always exists: the member that repeats it was pushed last.
    const Entry& gone = entries_[index];
    Entry& next = entries_[index + 1];
    const std::size_t from = gone.start;
    // A first member has no separator of its own: take the next one's, which becomes first.
    const bool first = gone.separator == 0;
    const std::size_t to = first ? next.start + next.separator : next.start;
    const std::size_t removed = to - from;
    out_.erase(from, to);
    for (std::size_t i = index + 1; i < count_; ++i) {
        entries_[i].start -= removed;
        entries_[i].key_start -= removed;
    }
    if (first) {
        next.start = from;
        next.separator = 0;
    }
    std::memmove(static_cast<void*>(entries_ + index), entries_ + index + 1, (count_ - index - 1) * sizeof(Entry));
    --count_;
    return removed;
}

std::size_t MemberIndex::top_members(std::size_t base, std::span<SegmentMember> out) const noexcept {
    std::size_t n = 0;
    auto put = [&](std::size_t start, std::size_t key_len) {
        if (n < out.size()) out[n] = SegmentMember{static_cast<std::uint32_t>(start - base), static_cast<std::uint32_t>(key_len)};
        ++n;
    };
    for (int s = 0; s < segment_count_; ++s) {
        for (const SegmentMember& m : segments_.refs[s].members()) put(segments_.refs[s].base + m.start, m.key_len);
    }
    const std::size_t top_end = depth_ == 0 ? count_ : levels_[1].first;
    for (std::size_t i = 0; i < top_end; ++i) put(entries_[i].start, entries_[i].key_len);
    return n;
}

}  // namespace fieldlog::detail

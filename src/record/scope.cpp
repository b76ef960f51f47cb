// fieldlog::Scope and the per-thread ScopeStack behind it (scope_stack.hpp). Opening a scope
// encodes its fields once per format into this thread's record buffer, then copies the members
// that fit into fixed storage; no heap, no lock. The record path only reads segment().
#include "fieldlog/scope.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "dispatch/pipeline.hpp"
#include "encode/encode.hpp"
#include "record/scope_stack.hpp"
#include "record/thread_context.hpp"

namespace fieldlog {
namespace detail {

static_assert(sizeof(ScopeRuns) == kScopeContextBytes, "update kScopeContextBytes in fieldlog/scope.hpp");
static_assert(alignof(ScopeRuns) <= 8);
static_assert(Scope::capacity <= UINT16_MAX && Scope::max_fields <= UINT16_MAX);

ScopeStack::Opened ScopeStack::open(const ScopeRuns& runs) noexcept {
    if (depth_ == Scope::max_depth) return {0, {}};

    // The leading members that fit in every format (the same fields in every sink).
    std::size_t keep = Scope::max_fields;
    for (std::size_t f = 0; f < format_count; ++f) {
        const ScopeRun& in = runs[f];
        const ScopeRun& raw = raw_[f];
        std::size_t k = 0;
        while (k < in.count && raw.count + k < Scope::max_fields &&
               raw.size + in.members[k].start + in.member(k).size() <= Scope::capacity) {
            ++k;
        }
        keep = std::min(keep, k);
    }

    Layer& layer = layers_[static_cast<std::size_t>(depth_++)];
    layer.id = next_id_++;
    if (next_id_ == 0) next_id_ = 1;  // 0 means "inert"
    layer.closing = false;
    Opened opened{layer.id, {}};
    for (std::size_t f = 0; f < format_count; ++f) {
        const ScopeRun& in = runs[f];
        ScopeRun& raw = raw_[f];
        const std::size_t kept = std::min<std::size_t>(keep, in.count);
        opened.kept[f] = kept;
        layer.first_byte[f] = raw.size;
        layer.first_member[f] = raw.count;
        const std::size_t bytes = kept == 0 ? 0 : in.members[kept - 1].start + in.member(kept - 1).size();
        std::memcpy(raw.bytes.data() + raw.size, in.bytes.data(), bytes);
        for (std::size_t i = 0; i < kept; ++i) {
            raw.members[raw.count + i] = SegmentMember{static_cast<std::uint32_t>(raw.size + in.members[i].start), in.members[i].key_len};
        }
        raw.size = static_cast<std::uint16_t>(raw.size + bytes);
        raw.count = static_cast<std::uint16_t>(raw.count + kept);
        ScopeRun& effective = effective_[f];
        layer.appended[f] = (effective.mask & in.mask) == 0;
        if (layer.appended[f]) {
            std::memcpy(effective.bytes.data() + effective.size, in.bytes.data(), bytes);
            for (std::size_t i = 0; i < kept; ++i) {
                effective.members[effective.count + i] =
                    SegmentMember{static_cast<std::uint32_t>(effective.size + in.members[i].start), in.members[i].key_len};
            }
            effective.size = static_cast<std::uint16_t>(effective.size + bytes);
            effective.count = static_cast<std::uint16_t>(effective.count + kept);
            effective.mask |= in.mask;
        } else {
            rebuild(f);
        }
    }
    return opened;
}

void ScopeStack::close(std::uint32_t id) noexcept {
    int index = depth_ - 1;
    while (index >= 0 && layers_[static_cast<std::size_t>(index)].id != id) --index;
    if (index < 0) return;
    const auto i = static_cast<std::size_t>(index);
    if (layers_[i].closing) --pending_;
    const bool last = index + 1 == depth_;
    std::array<std::size_t, format_count> removed_bytes{};
    std::array<std::size_t, format_count> removed_members{};
    for (std::size_t f = 0; f < format_count; ++f) {
        ScopeRun& raw = raw_[f];
        const std::size_t first_byte = layers_[i].first_byte[f];
        const std::size_t end_byte = last ? raw.size : layers_[i + 1].first_byte[f];
        const std::size_t first_member = layers_[i].first_member[f];
        const std::size_t end_member = last ? raw.count : layers_[i + 1].first_member[f];
        const std::size_t bytes = end_byte - first_byte;
        const std::size_t members = end_member - first_member;
        std::memmove(raw.bytes.data() + first_byte, raw.bytes.data() + end_byte, raw.size - end_byte);
        for (std::size_t m = end_member; m < raw.count; ++m) {
            raw.members[m - members] = SegmentMember{static_cast<std::uint32_t>(raw.members[m].start - bytes), raw.members[m].key_len};
        }
        raw.size = static_cast<std::uint16_t>(raw.size - bytes);
        raw.count = static_cast<std::uint16_t>(raw.count - members);
        removed_bytes[f] = bytes;
        removed_members[f] = members;
        for (std::size_t j = i + 1; j < static_cast<std::size_t>(depth_); ++j) {
            layers_[j].first_byte[f] = static_cast<std::uint16_t>(layers_[j].first_byte[f] - bytes);
            layers_[j].first_member[f] = static_cast<std::uint16_t>(layers_[j].first_member[f] - members);
        }
    }
    const Layer gone = layers_[i];
    for (std::size_t j = i + 1; j < static_cast<std::size_t>(depth_); ++j) layers_[j - 1] = layers_[j];
    --depth_;
    for (std::size_t f = 0; f < format_count; ++f) {
        if (last && gone.appended[f]) {  // its members are the tail of the effective run
            ScopeRun& effective = effective_[f];
            effective.size = static_cast<std::uint16_t>(effective.size - removed_bytes[f]);
            effective.count = static_cast<std::uint16_t>(effective.count - removed_members[f]);
            effective.mask = 0;
            const std::size_t key_offset = segment_key_offset(static_cast<Format>(f));
            for (std::size_t m = 0; m < effective.count; ++m) {
                effective.mask |= key_bit(key_tag(effective.bytes.data() + effective.members[m].start + key_offset,
                                                  effective.members[m].key_len));
            }
        } else {
            rebuild(f);
        }
    }
}

void ScopeStack::close_later(std::uint32_t id) noexcept {
    for (int i = 0; i < depth_; ++i) {
        Layer& layer = layers_[static_cast<std::size_t>(i)];
        if (layer.id == id && !layer.closing) {
            layer.closing = true;
            ++pending_;
        }
    }
}

void ScopeStack::close_pending() noexcept {
    for (int i = depth_ - 1; i >= 0 && pending_ > 0; --i) {
        const Layer& layer = layers_[static_cast<std::size_t>(i)];
        if (layer.closing) close(layer.id);
    }
}

void ScopeStack::rebuild(std::size_t f) noexcept {
    const ScopeRun& raw = raw_[f];
    ScopeRun& effective = effective_[f];
    const std::size_t key_offset = segment_key_offset(static_cast<Format>(f));
    auto key = [&](std::size_t i) {
        return std::string_view(raw.bytes.data() + raw.members[i].start + key_offset, raw.members[i].key_len);
    };
    std::array<std::uint64_t, Scope::max_fields> tags;
    for (std::size_t i = 0; i < raw.count; ++i) tags[i] = key_tag(key(i).data(), key(i).size());
    effective.size = 0;
    effective.count = 0;
    effective.mask = 0;
    for (std::size_t i = 0; i < raw.count; ++i) {
        // A later layer's member with the same key replaces this one.
        bool replaced = false;
        for (std::size_t j = i + 1; j < raw.count && !replaced; ++j) replaced = tags[j] == tags[i] && key(j) == key(i);
        if (replaced) continue;
        const std::string_view member = raw.member(i);
        std::memcpy(effective.bytes.data() + effective.size, member.data(), member.size());
        effective.members[effective.count++] = SegmentMember{effective.size, raw.members[i].key_len};
        effective.size = static_cast<std::uint16_t>(effective.size + member.size());
        effective.mask |= key_bit(tags[i]);
    }
}

namespace {

/// Timestamp and duration options of the running pipeline (the same in all its channels).
EncoderOptions running_options(ThreadContext& context) noexcept {
    EncoderOptions options{};
    if (const Pipeline* pipeline = acquire_pipeline(context); pipeline != nullptr && !pipeline->channels.empty()) {
        options = pipeline->channels.front().options;
        options.colour = false;
    }
    release_pipeline(context);
    return options;
}

/// Members offered per format, before anything was left out.
using Offered = std::array<std::size_t, format_count>;

/// Encodes `fields` in every format into `runs`, each cut at a member boundary to fit.
Offered encode_scope(ThreadContext& context, std::span<const Field> fields, ScopeRuns& runs) noexcept {
    EncoderOptions options = running_options(context);
    Offered offered{};
    context.resident_bound = 0;  // the scope's fields are encoded over the bound fields kept there
    for (std::size_t f = 0; f < format_count; ++f) {
        options.format = static_cast<Format>(f);
        ScopeRun& run = runs[f];
        Buffer& out = context.record;
        // One entry more than can be kept, so the end of the last kept member is known.
        std::array<SegmentMember, Scope::max_fields + 1> table;
        FieldsRun encoded{.members = table, .count = 0, .mask = 0};
        out.clear();
        try {
            encode_fields(options, out, context.scratch, Segment{}, fields, encoded);
        } catch (...) {  // a user formatter threw, or memory ran out: the scope stays empty
            encoded.count = fields.size();
            encoded.members = {};
            encoded.mask = 0;
        }
        const std::size_t recorded = std::min(encoded.count, encoded.members.size());
        auto end_of = [&](std::size_t i) { return i + 1 < recorded ? table[i + 1].start : out.size(); };
        std::size_t n = std::min(recorded, Scope::max_fields);
        while (n > 0 && end_of(n - 1) > Scope::capacity) --n;
        const std::size_t bytes = n == 0 ? 0 : end_of(n - 1);
        std::memcpy(run.bytes.data(), out.data(), bytes);
        std::copy_n(table.begin(), n, run.members.begin());
        run.size = static_cast<std::uint16_t>(bytes);
        run.count = static_cast<std::uint16_t>(n);
        run.mask = encoded.mask;
        offered[f] = encoded.count;
        out.shrink();  // a huge value may have moved the buffer to the heap
        out.clear();
    }
    return offered;
}

/// Opens `runs` as a layer of this thread's scopes and counts what was left out (in the
/// format that lost the most, so a field cut in every format counts once). Returns its id.
std::uint32_t open_layer(ThreadContext& context, const Offered& offered, const ScopeRuns& runs) noexcept {
    const ScopeStack::Opened opened = context.scopes.open(runs);
    std::size_t dropped = 0;
    for (std::size_t f = 0; f < format_count; ++f) dropped = std::max(dropped, offered[f] - opened.kept[f]);
    if (dropped > 0) ThreadCounters::bump(context.counters.truncated_scopes, dropped);
    return opened.id;
}

}  // namespace
}  // namespace detail

ScopeContext::ScopeContext() noexcept { new (storage_) detail::ScopeRuns(); }

bool ScopeContext::empty() const noexcept {
    const auto* runs = std::launder(reinterpret_cast<const detail::ScopeRuns*>(storage_));
    return std::all_of(runs->begin(), runs->end(), [](const detail::ScopeRun& run) { return run.count == 0; });
}

Scope::Scope(std::span<const Field> fields) noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) return;
    if (context->busy) {  // opened from inside a logging call: its buffers are in use
        detail::ThreadCounters::bump(context->counters.truncated_scopes, fields.size());
        return;
    }
    context->busy = true;
    detail::ScopeRuns runs;
    const detail::Offered offered = detail::encode_scope(*context, fields, runs);
    id_ = detail::open_layer(*context, offered, runs);
    context->busy = false;
    if (id_ != 0) owner_ = context;
}

Scope::Scope(const ScopeContext& captured) noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) return;
    const auto* runs = std::launder(reinterpret_cast<const detail::ScopeRuns*>(captured.storage_));
    if (context->busy) {
        detail::ThreadCounters::bump(context->counters.truncated_scopes, (*runs)[0].count);
        return;
    }
    detail::Offered offered{};
    for (std::size_t f = 0; f < format_count; ++f) offered[f] = (*runs)[f].count;
    id_ = detail::open_layer(*context, offered, *runs);
    if (id_ != 0) owner_ = context;
}

Scope::~Scope() {
    // Not on its thread (misuse), or after the thread's context is gone (a static Scope outlives
    // the main thread's thread-locals): nothing safe to close.
    if (owner_ == nullptr || owner_ != detail::this_thread_context()) return;
    if (owner_->busy) {
        owner_->scopes.close_later(id_);
    } else {
        owner_->scopes.close(id_);
    }
}

ScopeContext Scope::capture() noexcept {
    ScopeContext captured;
    if (const detail::ThreadContext* context = detail::this_thread_context()) {
        *std::launder(reinterpret_cast<detail::ScopeRuns*>(captured.storage_)) = context->scopes.effective();
    }
    return captured;
}

}  // namespace fieldlog

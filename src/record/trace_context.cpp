// SPDX-License-Identifier: MIT
// fieldlog::TraceContext: the W3C traceparent and tracestate grammars (Trace Context level 1,
// with its rules for a later version: parse the four fields of a header of at least 55
// characters, ignore what follows them) and fresh ids from a per-thread SplitMix64 generator,
// seeded once per thread (and again in a forked child) from the system's random source. At the
// call site; no heap, no lock.
#include "fieldlog/trace_context.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <span>

#include "base/fork_hooks.hpp"
#include "base/platform.hpp"

namespace fieldlog {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

/// The value of a lowercase hex digit, or -1 (uppercase is not hex here: the spec says so).
int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/// Decodes 2 * out.size() lowercase hex digits at `text`; false if one is not.
template <std::size_t N>
bool decode_hex(const char* text, std::array<std::uint8_t, N>& out) noexcept {
    for (std::size_t i = 0; i < N; ++i) {
        const int high = hex_value(text[2 * i]);
        const int low = hex_value(text[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        out[i] = static_cast<std::uint8_t>(high << 4 | low);
    }
    return true;
}

template <std::size_t N>
char* encode_hex(const std::array<std::uint8_t, N>& bytes, char* out) noexcept {
    for (const std::uint8_t b : bytes) {
        *out++ = hex_digits[b >> 4];
        *out++ = hex_digits[b & 0xF];
    }
    return out;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& bytes) noexcept {
    return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }

std::string_view trim_ows(std::string_view s) noexcept {
    while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
    return s;
}

/// The fields of a traceparent, when it is valid.
struct ParsedTraceparent {
    TraceContext::TraceId trace_id{};
    TraceContext::SpanId span_id{};
    std::uint8_t flags = 0;
};

// Offsets of version 00's fields: vv-<32>-<16>-ff.
constexpr std::size_t trace_id_at = 3;
constexpr std::size_t parent_id_at = 36;
constexpr std::size_t flags_at = 53;

TraceparentError parse_traceparent(std::string_view text, ParsedTraceparent& out) noexcept {
    text = trim_ows(text);
    std::array<std::uint8_t, 1> version{};
    if (text.size() < 3 || !decode_hex(text.data(), version) || text[2] != '-') return TraceparentError::bad_version;
    if (version[0] == 0xFF) return TraceparentError::version_ff;
    if (version[0] == 0x00 ? text.size() != TraceContext::traceparent_size : text.size() < TraceContext::traceparent_size)
        return TraceparentError::bad_length;
    if (!decode_hex(text.data() + trace_id_at, out.trace_id) || text[parent_id_at - 1] != '-')
        return TraceparentError::bad_trace_id;
    if (all_zero(out.trace_id)) return TraceparentError::zero_trace_id;
    if (!decode_hex(text.data() + parent_id_at, out.span_id) || text[flags_at - 1] != '-')
        return TraceparentError::bad_parent_id;
    if (all_zero(out.span_id)) return TraceparentError::zero_parent_id;
    std::array<std::uint8_t, 1> flags{};
    if (!decode_hex(text.data() + flags_at, flags) ||
        (text.size() > TraceContext::traceparent_size && text[TraceContext::traceparent_size] != '-'))
        return TraceparentError::bad_flags;
    out.flags = flags[0] & TraceContext::sampled;
    return TraceparentError::none;
}

// tracestate keys (level 1): simple-key = lcalpha 0*255(keychar), or multi-tenant-key =
// (lcalpha / DIGIT) 0*240(keychar) "@" lcalpha 0*13(keychar);
// keychar = lcalpha / DIGIT / "_" / "-" / "*" / "/".
bool is_lcalpha(char c) noexcept { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_keychar(char c) noexcept {
    return is_lcalpha(c) || is_digit(c) || c == '_' || c == '-' || c == '*' || c == '/';
}

bool valid_key_part(std::string_view part, std::size_t max_size, bool digit_first) noexcept {
    if (part.empty() || part.size() > max_size) return false;
    if (!is_lcalpha(part[0]) && !(digit_first && is_digit(part[0]))) return false;
    return std::all_of(part.begin() + 1, part.end(), is_keychar);
}

bool valid_key(std::string_view key) noexcept {
    const std::size_t at = key.find('@');
    if (at == std::string_view::npos) return valid_key_part(key, 256, false);
    return valid_key_part(key.substr(0, at), 241, true) && valid_key_part(key.substr(at + 1), 14, false);
}

// value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E.
bool valid_value(std::string_view value) noexcept {
    if (value.empty() || value.size() > 256 || value.back() == ' ') return false;
    return std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7E && c != ',' && c != '='; });
}

struct Member {
    std::string_view text;  ///< key=value
    std::size_t key_size;
};

/// Writes `text`'s valid tracestate, canonical and truncated to `out`'s size, at `out`; returns
/// its size (0 when the list is empty or not valid).
std::size_t canonical_tracestate(std::string_view text, std::span<char> out) noexcept {
    std::array<Member, TraceContext::max_tracestate_members> members;
    std::size_t count = 0;
    for (;;) {
        const std::size_t comma = text.find(',');
        const std::string_view item = trim_ows(text.substr(0, comma));
        if (!item.empty()) {  // empty and whitespace-only members are allowed, and skipped
            const std::size_t equals = item.find('=');
            if (equals == std::string_view::npos || !valid_key(item.substr(0, equals)) ||
                !valid_value(item.substr(equals + 1)) || count == members.size())
                return 0;
            const std::string_view key = item.substr(0, equals);
            for (std::size_t i = 0; i < count; ++i) {
                if (members[i].text.substr(0, members[i].key_size) == key) return 0;  // one entry per key
            }
            members[count++] = Member{item, equals};
        }
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    std::array<bool, TraceContext::max_tracestate_members> kept{};
    std::size_t size = 0;
    for (std::size_t i = 0; i < count; ++i) {
        kept[i] = true;
        size += members[i].text.size() + (i > 0 ? 1 : 0);
    }
    // Truncation by whole members: those over 128 characters first, then from the end.
    const auto drop = [&](std::size_t i) {
        kept[i] = false;
        const bool another_kept = std::any_of(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(count),
                                              [](bool k) { return k; });
        size -= members[i].text.size() + (another_kept ? 1 : 0);
    };
    for (std::size_t i = count; i-- > 0 && size > out.size();) {
        if (members[i].text.size() > 128) drop(i);
    }
    for (std::size_t i = count; i-- > 0 && size > out.size();) {
        if (kept[i]) drop(i);
    }
    char* cursor = out.data();
    for (std::size_t i = 0; i < count; ++i) {
        if (!kept[i]) continue;
        if (cursor != out.data()) *cursor++ = ',';
        cursor = std::copy(members[i].text.begin(), members[i].text.end(), cursor);
    }
    return static_cast<std::size_t>(cursor - out.data());
}

// Ids: SplitMix64 per thread. A forked child starts from its parent's state, so the child
// handler moves the generation on and every generator reseeds at its next draw.
std::atomic<std::uint32_t> g_fork_generation{1};

struct IdGenerator {
    std::uint64_t state = 0;
    std::uint32_t generation = 0;  ///< g_fork_generation when seeded; 0: never
};
thread_local IdGenerator t_ids;

// Registered when the library loads (see add_fork_participant).
[[maybe_unused]] const bool g_reseeds_in_child =
    (detail::add_fork_participant(nullptr, nullptr, [] { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }),
     true);

void seed(IdGenerator& ids) noexcept {
    std::uint64_t seed_value = 0;
    if (!detail::random_bytes(&seed_value, sizeof seed_value)) {  // none: the clock and this thread's address
        seed_value = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                     reinterpret_cast<std::uintptr_t>(&ids);
    }
    ids.state = seed_value;
    ids.generation = g_fork_generation.load(std::memory_order_relaxed);
}

std::uint64_t next_random() noexcept {
    IdGenerator& ids = t_ids;
    if (ids.generation != g_fork_generation.load(std::memory_order_relaxed)) [[unlikely]] seed(ids);
    std::uint64_t z = (ids.state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// Fills `bytes` with random bytes, not all zero.
template <std::size_t N>
void fill_random(std::array<std::uint8_t, N>& bytes) noexcept {
    do {
        for (std::size_t i = 0; i < N; i += 8) {
            const std::uint64_t r = next_random();
            std::memcpy(bytes.data() + i, &r, std::min<std::size_t>(8, N - i));
        }
    } while (all_zero(bytes));
}

}  // namespace

std::string_view to_string(TraceparentError error) noexcept {
    switch (error) {
        case TraceparentError::none: return "valid";
        case TraceparentError::bad_version: return "version is not two lowercase hex digits followed by '-'";
        case TraceparentError::version_ff: return "version ff is forbidden";
        case TraceparentError::bad_length: return "version 00 is 55 characters, a later version at least 55";
        case TraceparentError::bad_trace_id: return "trace-id is not 32 lowercase hex digits followed by '-'";
        case TraceparentError::zero_trace_id: return "trace-id is all zeros";
        case TraceparentError::bad_parent_id: return "parent-id is not 16 lowercase hex digits followed by '-'";
        case TraceparentError::zero_parent_id: return "parent-id is all zeros";
        case TraceparentError::bad_flags: return "trace-flags are not two lowercase hex digits at the end or before '-'";
    }
    return "unknown";
}

std::optional<TraceContext> TraceContext::parse(std::string_view traceparent, std::string_view tracestate) noexcept {
    ParsedTraceparent fields;
    if (parse_traceparent(traceparent, fields) != TraceparentError::none) return std::nullopt;
    TraceContext context;
    context.trace_id_ = fields.trace_id;
    context.span_id_ = fields.span_id;
    context.flags_ = fields.flags;
    context.tracestate_size_ = static_cast<std::uint16_t>(canonical_tracestate(tracestate, context.tracestate_));
    return context;
}

TraceparentError TraceContext::check(std::string_view traceparent) noexcept {
    ParsedTraceparent fields;
    return parse_traceparent(traceparent, fields);
}

TraceContext TraceContext::root(std::uint8_t flags) noexcept {
    TraceContext context;
    fill_random(context.trace_id_);
    fill_random(context.span_id_);
    context.flags_ = flags & sampled;
    return context;
}

TraceContext TraceContext::child() const noexcept {
    TraceContext context = *this;
    fill_random(context.span_id_);
    return context;
}

char* TraceContext::format(char* out) const noexcept {
    *out++ = '0';
    *out++ = '0';
    *out++ = '-';
    out = encode_hex(trace_id_, out);
    *out++ = '-';
    out = encode_hex(span_id_, out);
    *out++ = '-';
    return encode_hex(std::array<std::uint8_t, 1>{flags_}, out);
}

FixedText<TraceContext::traceparent_size> TraceContext::traceparent() const noexcept {
    FixedText<traceparent_size> text;
    format(text.chars.data());
    return text;
}

FixedText<32> TraceContext::trace_id_hex() const noexcept {
    FixedText<32> text;
    encode_hex(trace_id_, text.chars.data());
    return text;
}

FixedText<16> TraceContext::span_id_hex() const noexcept {
    FixedText<16> text;
    encode_hex(span_id_, text.chars.data());
    return text;
}

FixedText<2> TraceContext::flags_hex() const noexcept {
    FixedText<2> text;
    encode_hex(std::array<std::uint8_t, 1>{flags_}, text.chars.data());
    return text;
}

}  // namespace fieldlog

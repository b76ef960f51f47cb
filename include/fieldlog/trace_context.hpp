// SPDX-License-Identifier: MIT
// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// headers a request's trace arrives in and leaves with. Parse the incoming headers, open a Scope
// from the context (every record inside carries trace_id, span_id and trace_flags), and send a
// child()'s headers on outgoing calls. A TraceContext is a plain value: parsing, formatting and
// new ids take no heap and no lock (ids come from a per-thread generator seeded from getrandom).
//
//   const auto incoming = fieldlog::TraceContext::parse(req.header("traceparent"), req.header("tracestate"));
//   const fieldlog::TraceContext ours = incoming ? incoming->child() : fieldlog::TraceContext::root();
//   fieldlog::Scope trace{ours};                                // … "trace_id":"…","span_id":"…","trace_flags":"01"
//   outgoing.set_header("traceparent", ours.child().traceparent().view());
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "fieldlog/export.hpp"

namespace fieldlog {

/// Why a `traceparent` value is refused (TraceContext::check), one spec rule each.
enum class TraceparentError : std::uint8_t {
    none,            ///< valid
    bad_version,     ///< not two lowercase hex digits followed by '-'
    version_ff,      ///< version ff is forbidden
    bad_length,      ///< version 00 is exactly 55 characters, a later version at least 55
    bad_trace_id,    ///< not 32 lowercase hex digits followed by '-'
    zero_trace_id,   ///< all zeros
    bad_parent_id,   ///< not 16 lowercase hex digits followed by '-'
    zero_parent_id,  ///< all zeros
    bad_flags,       ///< not 2 lowercase hex digits, then the end or (a later version) '-'
};

/// The rule `error` names, e.g. "trace-id is all zeros".
[[nodiscard]] FIELDLOG_API std::string_view to_string(TraceparentError error) noexcept;

/// Text of a fixed length, not terminated: a header or an id in lowercase hex.
template <std::size_t N>
struct FixedText {
    std::array<char, N> chars{};
    [[nodiscard]] constexpr std::string_view view() const noexcept { return {chars.data(), N}; }
};

/// One position in a distributed trace: trace id, span (parent) id, flags and the vendors'
/// tracestate. Copy it freely; it holds no reference to the headers it came from.
class FIELDLOG_API TraceContext {
public:
    using TraceId = std::array<std::uint8_t, 16>;
    using SpanId = std::array<std::uint8_t, 8>;

    /// The one flag this version of the spec defines; the others are dropped (sent as zero).
    static constexpr std::uint8_t sampled = 0x01;
    /// A traceparent as this library writes it: version 00.
    static constexpr std::size_t traceparent_size = 55;
    /// The tracestate kept, in characters: longer lists are truncated by whole members, those
    /// over 128 characters first, then from the end (the spec's rule).
    static constexpr std::size_t max_tracestate_size = 512;
    static constexpr std::size_t max_tracestate_members = 32;

    /// The context in a `traceparent` value (leading and trailing spaces and tabs ignored, as
    /// HTTP does), with `tracestate` when that is valid too; nullopt when the traceparent is not
    /// valid (check() says why). An invalid tracestate (bad key or value, a repeated key, more
    /// than 32 members) is dropped whole and never costs the traceparent. Never throws.
    [[nodiscard]] static std::optional<TraceContext> parse(std::string_view traceparent,
                                                           std::string_view tracestate = {}) noexcept;
    /// Why parse() refuses `traceparent`, or TraceparentError::none.
    [[nodiscard]] static TraceparentError check(std::string_view traceparent) noexcept;
    /// A new trace: fresh random trace id and span id, no tracestate; `flags` & sampled kept.
    [[nodiscard]] static TraceContext root(std::uint8_t flags = 0) noexcept;

    /// The same trace (id, flags, tracestate) with a fresh span id: the context of an outgoing
    /// call, or of this service's work on a request it received.
    [[nodiscard]] TraceContext child() const noexcept;

    [[nodiscard]] const TraceId& trace_id() const noexcept { return trace_id_; }
    [[nodiscard]] const SpanId& span_id() const noexcept { return span_id_; }
    [[nodiscard]] std::uint8_t flags() const noexcept { return flags_; }
    [[nodiscard]] bool is_sampled() const noexcept { return (flags_ & sampled) != 0; }
    /// The list members, canonical: no optional whitespace, no empty members. Empty if none.
    [[nodiscard]] std::string_view tracestate() const noexcept { return {tracestate_.data(), tracestate_size_}; }

    /// Writes the `traceparent` value (traceparent_size characters, version 00) at `out`;
    /// returns the end.
    char* format(char* out) const noexcept;
    /// The `traceparent` value.
    [[nodiscard]] FixedText<traceparent_size> traceparent() const noexcept;
    /// The ids and flags in lowercase hex, as records carry them.
    [[nodiscard]] FixedText<32> trace_id_hex() const noexcept;
    [[nodiscard]] FixedText<16> span_id_hex() const noexcept;
    [[nodiscard]] FixedText<2> flags_hex() const noexcept;

private:
    TraceContext() noexcept = default;

    TraceId trace_id_{};
    SpanId span_id_{};
    std::uint8_t flags_ = 0;
    std::uint16_t tracestate_size_ = 0;
    std::array<char, max_tracestate_size> tracestate_{};  ///< the first tracestate_size_ are set
};

}  // namespace fieldlog

// SPDX-License-Identifier: MIT
// libFuzzer target for TraceContext::parse (src/record/trace_context.cpp): any traceparent and
// tracestate bytes. parse() agrees with check() and with a restatement of the traceparent
// grammar written here; a context that parses formats back to the canonical header (version
// 00, the input's ids, the sampled flag alone), which parses to the same context; its
// tracestate is canonical (re-parsing it gives it back), within the limits, and empty when
// the input's list breaks a rule. Input: one byte, the traceparent's length (mod 101), the
// traceparent, then the tracestate. Seeds: tests/fuzz/corpus/trace_context/.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fieldlog/trace_context.hpp"

namespace {

using fieldlog::TraceContext;
using fieldlog::TraceparentError;

[[noreturn]] void fail(const char* what, std::string_view traceparent, std::string_view tracestate) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n  traceparent: %.*s\n  tracestate: %.*s\n", what,
                 static_cast<int>(traceparent.size()), traceparent.data(), static_cast<int>(tracestate.size()),
                 tracestate.data());
    std::abort();
}

bool lower_hex(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// The spec's traceparent rules, restated: the canonical header, or "" when it is not valid.
std::string expected_canonical(std::string_view h) {
    while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.remove_prefix(1);
    while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.remove_suffix(1);
    if (h.size() < 55 || !lower_hex(h.substr(0, 2)) || h.substr(0, 2) == "ff") return "";
    if (h.substr(0, 2) == "00" && h.size() != 55) return "";
    if (h[2] != '-' || h[35] != '-' || h[52] != '-' || (h.size() > 55 && h[55] != '-')) return "";
    const std::string_view trace_id = h.substr(3, 32);
    const std::string_view parent_id = h.substr(36, 16);
    const std::string_view flags = h.substr(53, 2);
    if (!lower_hex(trace_id) || !lower_hex(parent_id) || !lower_hex(flags)) return "";
    if (trace_id == std::string(32, '0') || parent_id == std::string(16, '0')) return "";
    const int low_digit = flags[1] >= 'a' ? flags[1] - 'a' + 10 : flags[1] - '0';
    return "00-" + std::string(trace_id) + "-" + std::string(parent_id) + "-0" + std::to_string(low_digit & 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::size_t split = std::min<std::size_t>(data[0] % 101, input.size());
    const std::string_view traceparent = input.substr(0, split);
    const std::string_view tracestate = input.substr(split);

    const auto context = TraceContext::parse(traceparent, tracestate);
    const std::string expected = expected_canonical(traceparent);
    if (context.has_value() != (TraceContext::check(traceparent) == TraceparentError::none))
        fail("parse and check disagree", traceparent, tracestate);
    if (context.has_value() == expected.empty()) fail("parse disagrees with the grammar", traceparent, tracestate);
    if (!context) return 0;

    const auto header = context->traceparent();
    if (header.view() != expected) fail("not formatted back to the canonical header", traceparent, tracestate);
    const std::string_view state = context->tracestate();
    const auto again = TraceContext::parse(header.view(), state);
    if (!again || again->traceparent().view() != header.view() || again->tracestate() != state)
        fail("the formatted context does not parse to itself", traceparent, tracestate);
    if (state.size() > TraceContext::max_tracestate_size) fail("tracestate over its limit", traceparent, tracestate);
    if (std::count(state.begin(), state.end(), ',') >= static_cast<std::ptrdiff_t>(TraceContext::max_tracestate_members))
        fail("more than 32 tracestate members", traceparent, tracestate);
    if (!state.empty() && (state.front() == ',' || state.back() == ',' || state.find(",,") != std::string_view::npos ||
                           state.find_first_of("\t") != std::string_view::npos || state.front() == ' ' ||
                           state.back() == ' ' || state.find(" ,") != std::string_view::npos ||
                           state.find(", ") != std::string_view::npos))
        fail("tracestate not canonical", traceparent, tracestate);
    // Members are kept whole and in order: each one kept appears in the input.
    std::size_t from = 0;
    while (from < state.size()) {
        const std::size_t comma = std::min(state.find(',', from), state.size());
        const std::string_view kept = state.substr(from, comma - from);
        if (tracestate.find(kept) == std::string_view::npos) fail("a tracestate member not from the input", traceparent, tracestate);
        from = comma + 1;
    }
    const TraceContext child = context->child();
    if (child.trace_id() != context->trace_id() || child.tracestate() != state || child.flags() != context->flags())
        fail("child() changed the trace", traceparent, tracestate);
    return 0;
}

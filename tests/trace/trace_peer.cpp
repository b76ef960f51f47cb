// SPDX-License-Identifier: MIT
// fieldlog's side of otel_crosscheck.py: reads "hex(traceparent) TAB hex(tracestate)" lines on
// stdin, parses each pair with fieldlog::TraceContext and formats the result again, and writes
// one line per input: "invalid", or "valid" TAB trace-id TAB span-id TAB flags TAB tracestate TAB
// injected traceparent TAB injected tracestate (what an outgoing call would send).
#include <iostream>
#include <optional>
#include <string>

#include <fieldlog/trace_context.hpp>

namespace {

std::optional<std::string> unhex(std::string_view text) {
    if (text.size() % 2 != 0) return std::nullopt;
    std::string out;
    for (std::size_t i = 0; i < text.size(); i += 2) {
        const auto digit = [](char c) {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            return -1;
        };
        const int high = digit(text[i]);
        const int low = digit(text[i + 1]);
        if (high < 0 || low < 0) return std::nullopt;
        out += static_cast<char>(high << 4 | low);
    }
    return out;
}

}  // namespace

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        const std::size_t tab = line.find('\t');
        const auto traceparent = unhex(std::string_view(line).substr(0, tab));
        const auto tracestate = tab == std::string::npos ? std::nullopt : unhex(std::string_view(line).substr(tab + 1));
        if (!traceparent || !tracestate) {
            std::cerr << "fieldlog_trace_peer: expected two hex fields per line\n";
            return 2;
        }
        const auto context = fieldlog::TraceContext::parse(*traceparent, *tracestate);
        if (!context) {
            std::cout << "invalid\n";
            continue;
        }
        std::cout << "valid\t" << context->trace_id_hex().view() << '\t' << context->span_id_hex().view() << '\t'
                  << context->flags_hex().view() << '\t' << context->tracestate() << '\t'
                  << context->traceparent().view() << '\t' << context->tracestate() << '\n';
    }
    return 0;
}

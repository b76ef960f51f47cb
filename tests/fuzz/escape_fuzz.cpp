// SPDX-License-Identifier: MIT
// libFuzzer target for the string escapers (src/encode/text.cpp, logfmt and console encoders):
// any bytes. JSON: the escaped string parses as a strict JSON string and decodes to the input
// with U+FFFD substituted per maximal subpart. logfmt/console quoted values decode the same way
// (C1 controls escaped too); bare values need no quotes; keys and console text keep one line
// and never carry a control character; every long-text copy the CPU runs stops at the first
// unsafe byte; a message's text is the input with U+FFFD substituted; and a double made of the
// first 8 bytes, with the 9th's precision, is written with a fixed precision as fmt writes it.
// Seeds: tests/fuzz/corpus/escape/.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/buffer.hpp"
#include "encode/console_encoder.hpp"
#include "encode/logfmt_encoder.hpp"
#include "encode/text.hpp"
#include "fuzz_support.hpp"

namespace {

using fieldlog::detail::Buffer;

/// Decodes `quoted` (with its quotes) as a JSON string.
std::string decode(std::string_view quoted) {
    fuzz::JsonParser parser("{\"v\":" + std::string(quoted) + "}");
    const auto members = parser.top_object();
    if (members.size() != 1 || !members[0].is_string) fuzz::fail("not one JSON string", quoted);
    return members[0].string_value;
}

/// No C0 control, DEL or C1 control: safe to print on a terminal.
void check_terminal_safe(std::string_view text, const char* what) {
    for (const std::uint32_t cp : fuzz::code_points(text)) {
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) fuzz::fail(what, text);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::string expected = fuzz::replaced(input);
    static Buffer out;  // one buffer, reused: it must shrink back after large inputs

    out.clear();
    fieldlog::detail::append_json_string(out, input);
    if (decode(out.view()) != expected) fuzz::fail("JSON escaping does not round-trip", out.view());

    for (const bool console : {false, true}) {
        out.clear();
        const bool needs_quotes = fieldlog::detail::logfmt_needs_quotes(input, console);
        if (needs_quotes) {
            out.push_back('"');
            fieldlog::detail::append_escaped(out, input, console);
            out.push_back('"');
            if (decode(out.view()) != expected) fuzz::fail("quoted logfmt value does not round-trip", out.view());
            if (console) check_terminal_safe(out.view(), "console value carries a control character");
        } else {
            // A bare value is the input itself: valid UTF-8 and nothing that ends a token.
            if (input.empty() || expected != input) fuzz::fail("bare logfmt value is empty or not UTF-8", input);
            for (const std::uint32_t cp : fuzz::code_points(input)) {
                if (cp <= 0x20 || cp == '=' || cp == '"' || cp == 0x7F || (console && cp >= 0x80 && cp <= 0x9F)) {
                    fuzz::fail("bare logfmt value would break the line", input);
                }
            }
        }
    }

    out.clear();
    fieldlog::detail::append_utf8_repaired(out, input);
    if (out.view() != expected) fuzz::fail("message text is not the input repaired", out.view());

    if (size >= 9) {
        double v = 0;
        std::memcpy(&v, data, sizeof v);
        const unsigned precision = data[8] % 10;
        out.clear();
        if (fieldlog::detail::append_fixed(out, v, precision) && out.view() != fmt::format("{:.{}f}", v, precision)) {
            fuzz::fail("fixed-precision double differs from fmt's", out.view());
        }
    }

    out.clear();
    fieldlog::detail::append_logfmt_key(out, input);
    const std::string_view key = out.view();
    if (key.empty() || !fuzz::valid_utf8(key)) fuzz::fail("logfmt key empty or not UTF-8", key);
    for (const std::uint32_t cp : fuzz::code_points(key)) {
        if (cp <= 0x20 || cp == '=' || cp == '"' || (cp >= 0x7F && cp <= 0x9F)) fuzz::fail("bad logfmt key", key);
    }
    // Each replaced byte or ill-formed subpart becomes one '_': the key never grows.
    if (key.size() > (input.empty() ? 1 : input.size())) fuzz::fail("logfmt key longer than its input", key);

    out.clear();
    fieldlog::detail::append_console_text(out, input);
    if (!fuzz::valid_utf8(out.view())) fuzz::fail("console text not UTF-8", out.view());
    check_terminal_safe(out.view(), "console text carries a control character");

#if defined(__SSE2__)
    // Each copy of long text this CPU runs, not only the one the escaper chose: the safe prefix
    // by the byte table, copied as it was.
    if (size > fieldlog::detail::kShortJsonText) {
        std::size_t safe = 0;
        while (safe < size && fieldlog::detail::kJsonSafe[data[safe]]) ++safe;
        std::string copied(size, '\0');
        for (const fieldlog::detail::CopySafePrefix copy : fieldlog::detail::json_safe_copies()) {
            if (copy(copied.data(), data, size) != safe) fuzz::fail("a long-text copy ends its safe prefix elsewhere", input);
            if (input.compare(0, safe, copied, 0, safe) != 0) fuzz::fail("a long-text copy changed a safe byte", input);
        }
    }
#endif

    out.shrink();
    return 0;
}

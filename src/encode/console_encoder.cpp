// The console format: see console_encoder.hpp.
#include "encode/console_encoder.hpp"

#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

constexpr char kHex[] = "0123456789abcdef";

/// Upper-case level names padded to one width, so messages line up.
constexpr std::string_view kLevelNames[] = {"TRACE", "DEBUG", "INFO ", "WARN ", "ERROR", "FATAL", "OFF  "};
/// SGR colour per level: grey, cyan, green, yellow, red, bold red.
constexpr std::string_view kLevelColours[] = {"\x1b[90m", "\x1b[36m", "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[1;31m", ""};
constexpr std::string_view kColourReset = "\x1b[0m";

void append_unicode_escape(Buffer& out, unsigned char c) {
    char* o = out.reserve(6);
    *o++ = '\\';
    *o++ = 'u';
    *o++ = '0';
    *o++ = '0';
    *o++ = kHex[c >> 4];
    *o++ = kHex[c & 0xF];
    out.commit(o);
}

/// Code points in UTF-8 text (bytes that do not continue a sequence).
std::size_t code_points(const char* p, std::size_t n) noexcept {
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) count += (static_cast<unsigned char>(p[i]) & 0xC0) != 0x80;
    return count;
}

}  // namespace

void append_console_text(Buffer& out, std::string_view text) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    for (std::size_t i = 0; i < n;) {
        std::size_t run = i;
        while (run < n && p[run] >= 0x20 && p[run] < 0x7F) ++run;
        out.append(text.data() + i, run - i);
        i = run;
        if (i == n) break;
        const unsigned char c = p[i];
        if (c < 0x80) {
            if (c == '\n') {
                out.append("\\n");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c == '\r') {
                out.append("\\r");
            } else {
                append_unicode_escape(out, c);
            }
            ++i;
            continue;
        }
        const int length = utf8_sequence(p + i, n - i);
        if (length < 0) {
            out.append(kReplacement);
            i += static_cast<std::size_t>(-length);
        } else if (c == 0xC2 && p[i + 1] <= 0x9F) {  // C1 control
            append_unicode_escape(out, p[i + 1]);
            i += 2;
        } else {
            out.append(text.data() + i, static_cast<std::size_t>(length));
            i += static_cast<std::size_t>(length);
        }
    }
}

void ConsoleEncoder::record(const RecordInput& r) {
    write_timestamp(r.time);
    out_.push_back(' ');
    const auto level = static_cast<std::size_t>(r.level);
    if (options_.colour) out_.append(kLevelColours[level]);
    out_.append(kLevelNames[level]);
    if (options_.colour) out_.append(kColourReset);
    out_.push_back(' ');
    if (!r.logger.text.empty()) {
        append_console_text(out_, r.logger.text);
        out_.append(": ");
    }
    const std::size_t message_start = out_.size();
    if (r.message.formatted()) {
        scratch_.clear();
        fmt::vformat_to(std::back_inserter(scratch_), r.message.text(), r.message.args());
        append_console_text(out_, scratch_.view());
        scratch_.shrink();
    } else {
        append_console_text(out_, r.message.text());
    }
    const auto has_bytes = [](const EncodedContext* context) { return context != nullptr && context->size != 0; };
    if (has_bytes(r.bound) || has_bytes(r.scope) || !r.fields.empty() || options_.call_facts != 0) {
        const std::size_t width = code_points(out_.data() + message_start, out_.size() - message_start);
        if (width < kMessageWidth) {
            char* o = out_.reserve(kMessageWidth - width);
            for (std::size_t i = width; i < kMessageWidth; ++i) *o++ = ' ';
            out_.commit(o);
        }
    }
    record_fields(r);
    out_.push_back('\n');
}

}  // namespace fieldlog::detail

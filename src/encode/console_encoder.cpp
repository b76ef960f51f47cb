// SPDX-License-Identifier: MIT
// The console format: see console_encoder.hpp.
#include "encode/console_encoder.hpp"

#include "encode/console_style.hpp"
#include "encode/message_text.hpp"
#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

constexpr char kHex[] = "0123456789abcdef";

/// Upper-case level names padded to one width, so messages line up.
constexpr std::string_view kLevelNames[] = {"TRACE", "DEBUG", "INFO ", "WARN ", "ERROR", "FATAL", "OFF  "};
/// SGR colour per level: grey, cyan, green, yellow, red, bold red.
constexpr std::string_view kLevelColours[] = {"\x1b[90m", "\x1b[36m", "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[1;31m", ""};
/// Ends a logger name cut to its column: U+2026 HORIZONTAL ELLIPSIS, one column wide.
constexpr std::string_view kCut = "\xE2\x80\xA6";

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

bool starts_code_point(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

/// Code points in UTF-8 text (bytes that do not continue a sequence).
std::size_t code_points(const char* p, std::size_t n) noexcept {
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) count += starts_code_point(p[i]);
    return count;
}

/// The bytes of the first `count` code points of UTF-8 text p[0, n).
std::size_t first_code_points(const char* p, std::size_t n, std::size_t count) noexcept {
    std::size_t i = 0;
    for (std::size_t seen = 0; i < n; ++i) {
        if (starts_code_point(p[i]) && seen++ == count) break;
    }
    return i;
}

void pad(Buffer& out, std::size_t columns) {
    char* o = out.reserve(columns);
    for (std::size_t i = 0; i < columns; ++i) *o++ = ' ';
    out.commit(o);
}

/// `text` up to its first line break (`\n` or `\r\n`), and what follows that break.
struct Lines {
    std::string_view first;
    std::string_view rest;
};
Lines split_first_line(std::string_view text) noexcept {
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) return {text, {}};
    std::string_view first = text.substr(0, newline);
    if (first.ends_with('\r')) first.remove_suffix(1);
    return {first, text.substr(newline + 1)};
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

void ConsoleEncoder::write_logger(std::string_view name) {
    const std::size_t width = options_.logger_width;
    if (width == 0) {  // no column: the name as it is
        if (!name.empty()) {
            append_console_text(out_, name);
            out_.append(": ");
        }
        return;
    }
    if (name.empty()) {
        pad(out_, width + 2);
        return;
    }
    const std::size_t start = out_.size();
    append_console_text(out_, name);
    std::size_t columns = code_points(out_.data() + start, out_.size() - start);
    if (columns > width) {  // cut, so the columns after it stay where they are
        out_.truncate(start + first_code_points(out_.data() + start, out_.size() - start, width - 1));
        out_.append(kCut);
        columns = width;
    }
    out_.push_back(':');
    pad(out_, width - columns + 1);
}

void ConsoleEncoder::write_further_lines(std::string_view rest) {
    while (!rest.empty()) {
        const Lines lines = split_first_line(rest);
        out_.push_back('\n');
        out_.append(kConsoleIndent);
        append_console_text(out_, lines.first);
        rest = lines.rest;
    }
}

inline void ConsoleEncoder::record(const Record& r, const EncodedContexts& context) {
    const bool colour = options_.colour;
    if (colour) out_.append(kSgrDim);
    write_timestamp(r.time);
    if (colour) out_.append(kSgrReset);
    out_.push_back(' ');
    const auto level = static_cast<std::size_t>(r.level);
    if (colour) out_.append(kLevelColours[level]);
    out_.append(kLevelNames[level]);
    if (colour) out_.append(kSgrReset);
    out_.push_back(' ');
    write_logger(r.logger.name.text);

    // The fields encode through scratch_ too, so a formatted message is made again for
    // its further lines (only a multi-line one has any).
    const auto message_text = [&]() -> std::string_view {
        if (r.message.kind() == Message::Kind::plain) return r.message.text();
        scratch_.clear();
        append_message_text(scratch_, r.message, options_.redact);
        return scratch_.view();
    };
    if (colour) out_.append(kSgrBold);
    const std::size_t message_start = out_.size();
    const Lines message = split_first_line(message_text());
    append_console_text(out_, message.first);
    const std::size_t width = code_points(out_.data() + message_start, out_.size() - message_start);
    const bool multi_line = !message.rest.empty();
    if (colour) out_.append(kSgrReset);
    const auto has_bytes = [](const EncodedContext* context) { return context != nullptr && context->size != 0; };
    if ((has_bytes(context.bound) || has_bytes(context.scope) || !r.fields.empty() || options_.call_facts != 0) && width < kMessageWidth) {
        pad(out_, kMessageWidth - width);
    }
    record_fields(r, context);
    if (multi_line) write_further_lines(split_first_line(message_text()).rest);
    if (r.message.kind() != Message::Kind::plain) scratch_.shrink();
    out_.push_back('\n');
}

void ConsoleEncoder::write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options,
                                  const Record& record, const EncodedContexts& context) {
    ConsoleEncoder(out, scratch, options).record(record, context);
}

}  // namespace fieldlog::detail

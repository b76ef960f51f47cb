#include "encode/text.hpp"

#include <array>
#include <cstring>
#include <string>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace fieldlog::detail {
namespace {

// 1 for bytes that go into a JSON string unchanged: printable ASCII except '"' and '\\'.
constexpr std::array<bool, 256> kJsonSafe = [] {
    std::array<bool, 256> table{};
    for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
    return table;
}();

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

int utf8_sequence(const unsigned char* p, std::size_t n) noexcept {
    const unsigned char lead = p[0];
    int length;
    unsigned char second_low = 0x80;
    unsigned char second_high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) second_low = 0xA0;   // no overlong forms
        if (lead == 0xED) second_high = 0x9F;  // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) second_low = 0x90;   // no overlong forms
        if (lead == 0xF4) second_high = 0x8F;  // nothing above U+10FFFF
    } else {
        return -1;  // 0x80–0xC1, 0xF5–0xFF never start a sequence
    }
    for (int i = 1; i < length; ++i) {
        if (static_cast<std::size_t>(i) >= n) return -i;
        const unsigned char low = i == 1 ? second_low : 0x80;
        const unsigned char high = i == 1 ? second_high : 0xBF;
        if (p[i] < low || p[i] > high) return -i;
    }
    return length;
}

void append_json_escaped(Buffer& out, std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        std::size_t run = i;
        while (run < n && kJsonSafe[p[run]]) ++run;
        if (run > i) {
            out.append(s.data() + i, run - i);
            i = run;
            if (i == n) break;
        }
        const unsigned char c = p[i];
        if (c >= 0x80) {
            const int length = utf8_sequence(p + i, n - i);
            if (length > 0) {
                out.append(s.data() + i, static_cast<std::size_t>(length));
                i += static_cast<std::size_t>(length);
            } else {
                out.append(kReplacement);
                i += static_cast<std::size_t>(-length);
            }
            continue;
        }
        char* o = out.reserve(6);
        *o++ = '\\';
        switch (c) {
            case '"': *o++ = '"'; break;
            case '\\': *o++ = '\\'; break;
            case '\n': *o++ = 'n'; break;
            case '\r': *o++ = 'r'; break;
            case '\t': *o++ = 't'; break;
            default:
                *o++ = 'u';
                *o++ = '0';
                *o++ = '0';
                *o++ = kHex[c >> 4];
                *o++ = kHex[c & 0xF];
        }
        out.commit(o);
        ++i;
    }
}

void append_int(Buffer& out, std::int64_t v) {
    const fmt::format_int text(v);
    out.append(text.data(), text.size());
}

void append_uint(Buffer& out, std::uint64_t v) {
    const fmt::format_int text(v);
    out.append(text.data(), text.size());
}

void append_double(Buffer& out, double v) {
    char* o = out.reserve(32);  // shortest round trip needs at most 24 chars
    out.commit(fmt::format_to(o, FMT_COMPILE("{}"), v));
}

void append_go_duration(Buffer& out, std::int64_t nanos) {
    // Follows Go's time.Duration.String: build right to left into a fixed array.
    char buf[32];
    std::size_t w = sizeof buf;
    std::uint64_t u = nanos < 0 ? 0 - static_cast<std::uint64_t>(nanos) : static_cast<std::uint64_t>(nanos);
    const bool negative = nanos < 0;

    auto put_fraction = [&](std::uint64_t v, int precision) {
        bool printed = false;
        for (int i = 0; i < precision; ++i) {
            const auto digit = static_cast<char>(v % 10);
            printed = printed || digit != 0;
            if (printed) buf[--w] = static_cast<char>('0' + digit);
            v /= 10;
        }
        if (printed) buf[--w] = '.';
        return v;
    };
    auto put_int = [&](std::uint64_t v) {
        if (v == 0) {
            buf[--w] = '0';
            return;
        }
        while (v > 0) {
            buf[--w] = static_cast<char>('0' + v % 10);
            v /= 10;
        }
    };

    if (u < 1'000'000'000ULL) {
        int precision = 0;
        buf[--w] = 's';
        --w;
        if (u == 0) {
            out.append("0s");
            return;
        } else if (u < 1'000ULL) {
            buf[w] = 'n';
        } else if (u < 1'000'000ULL) {
            precision = 3;
            // U+00B5 MICRO SIGN, as Go writes it
            ++w;
            buf[--w] = '\xB5';
            buf[--w] = '\xC2';
        } else {
            precision = 6;
            buf[w] = 'm';
        }
        u = put_fraction(u, precision);
        put_int(u);
    } else {
        buf[--w] = 's';
        u = put_fraction(u, 9);
        put_int(u % 60);
        u /= 60;
        if (u > 0) {
            buf[--w] = 'm';
            put_int(u % 60);
            u /= 60;
            if (u > 0) {
                buf[--w] = 'h';
                put_int(u);
            }
        }
    }
    if (negative) buf[--w] = '-';
    out.append(buf + w, sizeof buf - w);
}

void append_base64(Buffer& out, std::span<const std::byte> bytes) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char* o = out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const auto v = (std::to_integer<unsigned>(bytes[i]) << 16) |
                       (std::to_integer<unsigned>(bytes[i + 1]) << 8) | std::to_integer<unsigned>(bytes[i + 2]);
        *o++ = kAlphabet[(v >> 18) & 63];
        *o++ = kAlphabet[(v >> 12) & 63];
        *o++ = kAlphabet[(v >> 6) & 63];
        *o++ = kAlphabet[v & 63];
    }
    if (const std::size_t rest = bytes.size() - i; rest > 0) {
        unsigned v = std::to_integer<unsigned>(bytes[i]) << 16;
        if (rest == 2) v |= std::to_integer<unsigned>(bytes[i + 1]) << 8;
        *o++ = kAlphabet[(v >> 18) & 63];
        *o++ = kAlphabet[(v >> 12) & 63];
        *o++ = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    out.commit(o);
}

void append_error_code(Buffer& out, const std::error_code& ec) {
    const std::error_category& category = ec.category();
    if (category == std::generic_category() || category == std::system_category()) {
        const char* text = strerrordesc_np(ec.value());
        out.append(text != nullptr ? std::string_view(text) : std::string_view("Unknown error"));
    } else {
        out.append(ec.message());
    }
    out.append(" (");
    out.append(category.name());
    out.push_back(':');
    append_int(out, ec.value());
    out.push_back(')');
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
#include "encode/text.hpp"

#include "encode/json_safe.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#if FIELDLOG_SSE2_SCANS
#include <emmintrin.h>
#endif
// The AVX2 text copy, chosen at run time: x86-64 with GCC or clang.
#if FIELDLOG_SSE2_SCANS && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FIELDLOG_DETAIL_AVX2_TEXT 1
#include <immintrin.h>
#else
#define FIELDLOG_DETAIL_AVX2_TEXT 0
#endif

#include <fmt/compile.h>
#include <fmt/format.h>

namespace fieldlog::detail {
namespace {

constexpr char kHex[] = "0123456789abcdef";

/// How many leading bytes of p[0, n) go into a JSON string unchanged, decided 16 bytes (or
/// two overlapping words) at a time instead of a table look-up per byte.
std::size_t json_safe_prefix(const unsigned char* p, std::size_t n) noexcept {
#if FIELDLOG_SSE2_SCANS
    if (n >= 16) {
        const auto mask_at = [p](std::size_t at) noexcept {
            return unsafe_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at)));
        };
        std::size_t i = 0;
        for (; i + 16 <= n; i += 16) {
            if (const unsigned mask = mask_at(i); mask != 0) return i + static_cast<std::size_t>(std::countr_zero(mask));
        }
        if (i == n) return n;
        // The tail: the last 16 bytes, overlapping bytes already known to be safe.
        const unsigned mask = mask_at(n - 16);
        return mask != 0 ? n - 16 + static_cast<std::size_t>(std::countr_zero(mask)) : n;
    }
#endif
    if (n <= kShortJsonText && copy_short_safe(nullptr, p, n)) return n;
    std::size_t i = 0;
    while (i < n && kJsonSafe[p[i]]) ++i;
    return i;
}

#if FIELDLOG_SSE2_SCANS
/// A CopySafePrefix for n > 16, 16 bytes a step: one pass, no library call (the bytes written
/// past the safe ones are overwritten by the caller).
std::size_t copy_safe_prefix_sse2(char* o, const unsigned char* p, std::size_t n) noexcept {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), v);
        if (const unsigned mask = unsafe_mask(v); mask != 0) return i + static_cast<std::size_t>(std::countr_zero(mask));
    }
    if (i == n) return n;
    // The tail: the last 16 bytes, overlapping bytes already known to be safe.
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + n - 16), v);
    const unsigned mask = unsafe_mask(v);
    return mask != 0 ? n - 16 + static_cast<std::size_t>(std::countr_zero(mask)) : n;
}

#if FIELDLOG_DETAIL_AVX2_TEXT
/// The bytes unsafe_mask looks for, as AVX2 vectors.
struct UnsafeBytes32 {
    __m256i below_space;
    __m256i quote;
    __m256i backslash;
};

/// Copies the 32 bytes at p + at to o + at; returns their JSON-unsafe bytes as a bit mask (as
/// unsafe_mask: a signed compare catches the control bytes and every byte from 0x80 on).
[[gnu::target("avx2")]] inline std::uint32_t copy_32_unsafe_mask(
    const UnsafeBytes32& unsafe, char* o, const unsigned char* p, std::size_t at) noexcept {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + at));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + at), v);
    const __m256i hit = _mm256_or_si256(
        _mm256_cmpgt_epi8(unsafe.below_space, v),
        _mm256_or_si256(_mm256_cmpeq_epi8(v, unsafe.quote), _mm256_cmpeq_epi8(v, unsafe.backslash)));
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(hit));
}

/// copy_safe_prefix_sse2's contract, 32 bytes a step, and the last two steps without a loop
/// (messages and long values are mostly 17–100 bytes). Built for AVX2 whatever the compiler's
/// target; called only where the CPU has it (json_safe_copies).
[[gnu::target("avx2")]] std::size_t copy_safe_prefix_avx2(char* o, const unsigned char* p, std::size_t n) noexcept {
    if (n <= 32) {  // 17–32 bytes: the first 16 and the last 16, overlapping
        const __m128i head = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i tail = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), head);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + n - 16), tail);
        if (const unsigned mask = unsafe_mask(head); mask != 0) return static_cast<std::size_t>(std::countr_zero(mask));
        const unsigned mask = unsafe_mask(tail);
        return mask != 0 ? n - 16 + static_cast<std::size_t>(std::countr_zero(mask)) : n;
    }
    const UnsafeBytes32 unsafe{_mm256_set1_epi8(0x20), _mm256_set1_epi8('"'), _mm256_set1_epi8('\\')};
    std::size_t i = 0;
    for (; n - i > 64; i += 32) {
        if (const std::uint32_t mask = copy_32_unsafe_mask(unsafe, o, p, i); mask != 0)
            return i + static_cast<std::size_t>(std::countr_zero(mask));
    }
    // 33–64 bytes left: the next 32, then the last 32 (overlapping bytes known to be safe).
    if (const std::uint32_t mask = copy_32_unsafe_mask(unsafe, o, p, i); mask != 0)
        return i + static_cast<std::size_t>(std::countr_zero(mask));
    const std::uint32_t mask = copy_32_unsafe_mask(unsafe, o, p, n - 32);
    return mask != 0 ? n - 32 + static_cast<std::size_t>(std::countr_zero(mask)) : n;
}

#endif  // FIELDLOG_DETAIL_AVX2_TEXT

}  // namespace

std::span<const CopySafePrefix> json_safe_copies() noexcept {
#if FIELDLOG_DETAIL_AVX2_TEXT
    static constexpr CopySafePrefix with_avx2[] = {copy_safe_prefix_sse2, copy_safe_prefix_avx2};
    __builtin_cpu_init();  // may run before libgcc's constructor has (a static initializer logs)
    if (__builtin_cpu_supports("avx2")) return with_avx2;
#endif
    static constexpr CopySafePrefix sse2[] = {copy_safe_prefix_sse2};
    return sse2;
}

namespace {

std::size_t choose_copy_safe_prefix(char* o, const unsigned char* p, std::size_t n) noexcept;

/// The best copy for this CPU, chosen by the first call (a relaxed pointer: every thread that
/// races to choose stores the same one).
constinit std::atomic<CopySafePrefix> g_copy_safe_prefix{choose_copy_safe_prefix};

std::size_t choose_copy_safe_prefix(char* o, const unsigned char* p, std::size_t n) noexcept {
    const CopySafePrefix chosen = json_safe_copies().back();
    g_copy_safe_prefix.store(chosen, std::memory_order_relaxed);
    return chosen(o, p, n);
}

inline std::size_t copy_safe_prefix(char* o, const unsigned char* p, std::size_t n) noexcept {
    return g_copy_safe_prefix.load(std::memory_order_relaxed)(o, p, n);
}
#endif  // FIELDLOG_SSE2_SCANS

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

namespace {

/// The general case of append_json_escaped: safe runs copied whole, the rest escaped or
/// replaced byte by byte.
void append_escaped_loop(Buffer& out, std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const std::size_t run = i + json_safe_prefix(p + i, n - i);
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

}  // namespace

void append_utf8_repaired(Buffer& out, std::string_view s) {
    // ASCII, most text, is checked eight bytes a step and copied whole.
    std::uint64_t high = 0;
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t word;
        std::memcpy(&word, s.data() + i, sizeof word);
        high |= word;
    }
    for (; i < s.size(); ++i) high |= static_cast<unsigned char>(s[i]);
    if ((high & 0x8080'8080'8080'8080u) == 0) {
        out.append(s);
        return;
    }
    for_each_repaired_run(s, [&](std::string_view run) { out.append(run); });
}

void append_json_escaped(Buffer& out, std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    if (n <= kShortJsonText) {
        char* o = out.reserve(kShortJsonText);
        if (copy_short_safe(o, p, n)) {
            out.commit(o + n);
            return;
        }
        append_escaped_loop(out, s);
        return;
    }
#if FIELDLOG_SSE2_SCANS
    char* o = out.reserve(n);
    const std::size_t safe = copy_safe_prefix(o, p, n);
    out.commit(o + safe);
    if (safe == n) return;
    s.remove_prefix(safe);
#endif
    append_escaped_loop(out, s);
}

void append_json_string_general(Buffer& out, std::string_view s) {
#if FIELDLOG_SSE2_SCANS
    if (const std::size_t n = s.size(); n > kShortJsonText) {
        // Quotes and text in one reservation; the escaper takes over at the first unsafe byte.
        char* o = out.reserve(n + 2);
        o[0] = '"';
        const std::size_t safe = copy_safe_prefix(o + 1, reinterpret_cast<const unsigned char*>(s.data()), n);
        if (safe == n) [[likely]] {
            o[n + 1] = '"';
            out.commit(o + n + 2);
            return;
        }
        out.commit(o + 1 + safe);
        append_escaped_loop(out, s.substr(safe));
        out.push_back('"');
        return;
    }
#endif
    out.push_back('"');
    append_json_escaped(out, s);
    out.push_back('"');
}

// Digits straight into the buffer (20 chars at most, with the sign): no copy, no memcpy call.
std::string_view source_file_tail(std::string_view path) noexcept {
    const std::size_t last = path.rfind('/');
    if (last == std::string_view::npos || last == 0) return path;
    const std::size_t before = path.rfind('/', last - 1);
    return before == std::string_view::npos ? path : path.substr(before + 1);
}

void append_int_general(Buffer& out, std::int64_t v) {
    char* o = out.reserve(20);
    out.commit(fmt::format_to(o, FMT_COMPILE("{}"), v));
}

void append_uint_general(Buffer& out, std::uint64_t v) {
    char* o = out.reserve(20);
    out.commit(fmt::format_to(o, FMT_COMPILE("{}"), v));
}

void append_double(Buffer& out, double v) {
    char* o = out.reserve(32);  // shortest round trip needs at most 24 chars
    out.commit(fmt::format_to(o, FMT_COMPILE("{}"), v));
}

bool append_fixed(Buffer& out, double v, unsigned precision) {
    static constexpr std::array<std::uint32_t, 10> kPow10{1,       10,       100,       1000,      10000,
                                                          100000,  1000000,  10000000,  100000000, 1000000000};
    if (!std::isfinite(v) || precision >= kPow10.size()) return false;
    // v = significand * 2^exponent exactly, so v * 10^precision = scaled * 2^exponent, with
    // scaled below 2^83: one 128-bit product, then a shift that rounds half to even.
    __extension__ using Wide = unsigned __int128;
    const auto bits = std::bit_cast<std::uint64_t>(v);
    const auto biased = static_cast<int>((bits >> 52) & 0x7ff);
    std::uint64_t significand = bits & ((std::uint64_t{1} << 52) - 1);
    int exponent = -1074;
    if (biased != 0) {
        significand |= std::uint64_t{1} << 52;
        exponent = biased - 1075;
    }
    const Wide scaled = static_cast<Wide>(significand) * kPow10[precision];
    Wide rounded = 0;
    if (exponent >= 0) {
        if (exponent >= 64 || (scaled >> (64 - exponent)) != 0) return false;
        rounded = scaled << exponent;
    } else if (exponent > -128) {
        const int shift = -exponent;
        rounded = scaled >> shift;
        const Wide rest = scaled & ((static_cast<Wide>(1) << shift) - 1);
        const Wide half = static_cast<Wide>(1) << (shift - 1);
        if (rest > half || (rest == half && (rounded & 1) != 0)) ++rounded;
        if ((rounded >> 64) != 0) return false;
    }  // else below half of the last digit: 0
    const auto units = static_cast<std::uint64_t>(rounded);
    char* o = out.reserve(1 + 20 + 1 + kPow10.size());
    if ((bits >> 63) != 0) *o++ = '-';  // as fmt: -0.0, and a negative that rounds to zero
    o = fmt::format_to(o, FMT_COMPILE("{}"), units / kPow10[precision]);
    if (precision != 0) {
        *o++ = '.';
        std::uint32_t fraction = static_cast<std::uint32_t>(units % kPow10[precision]);
        for (unsigned i = precision; i-- > 0; fraction /= 10) o[i] = static_cast<char>('0' + fraction % 10);
        o += precision;
    }
    out.commit(o);
    return true;
}

void append_float_value(Buffer& out, double v, std::string_view quote) {
    if (std::isfinite(v)) {
        append_double(out, v);
        return;
    }
    out.append(quote);
    out.append(std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
    out.append(quote);
}

namespace {

/// Go's time.Duration.String, with `us` for µs when AsciiMicro.
template <bool AsciiMicro>
void append_duration_text(Buffer& out, std::int64_t nanos) {
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
            if constexpr (AsciiMicro) {
                buf[w] = 'u';
            } else {
                // U+00B5 MICRO SIGN, as Go writes it
                ++w;
                buf[--w] = '\xB5';
                buf[--w] = '\xC2';
            }
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

}  // namespace

void append_go_duration(Buffer& out, std::int64_t nanos) { append_duration_text<false>(out, nanos); }
void append_go_duration_ascii(Buffer& out, std::int64_t nanos) { append_duration_text<true>(out, nanos); }

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

namespace {

std::atomic<bool> g_signal_safe_text{false};

/// What a category's name may add in a signal handler: with the parentheses, ':' and the value,
/// the text stays within what the crash path's line bound allows an error code.
constexpr std::size_t kSignalSafeNameBytes = 64;

/// `(name:value)` with the name's bytes that JSON escapes (and any past 0x7e) as '?'.
void append_error_code_in_handler(Buffer& out, const char* name, int value) {
    out.push_back('(');
    for (std::size_t i = 0; i < kSignalSafeNameBytes && name[i] != '\0'; ++i) {
        const auto byte = static_cast<unsigned char>(name[i]);
        out.push_back(byte >= 0x20 && byte <= 0x7e && byte != '"' && byte != '\\' ? name[i] : '?');
    }
    out.push_back(':');
    append_int(out, value);
    out.push_back(')');
}

}  // namespace

void set_signal_safe_text(bool on) noexcept { g_signal_safe_text.store(on, std::memory_order_relaxed); }

void append_error_code(Buffer& out, const std::error_code& ec) {
    const std::error_category& category = ec.category();
    if (category == std::generic_category() || category == std::system_category()) {
        const char* text = strerrordesc_np(ec.value());
        out.append(text != nullptr ? std::string_view(text) : std::string_view("Unknown error"));
    } else if (g_signal_safe_text.load(std::memory_order_relaxed)) [[unlikely]] {
        append_error_code_in_handler(out, category.name(), ec.value());
        return;
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

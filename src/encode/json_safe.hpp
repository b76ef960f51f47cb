// SPDX-License-Identifier: MIT
// Which bytes go into a JSON string unchanged, and the branch-light copy of short safe text
// (keys and most values are at most 16 bytes). Inline: the JSON encoder's key path uses it
// without a call; text.cpp builds the general escaper on it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/platform.hpp"

#if FIELDLOG_SSE2_SCANS
#include <emmintrin.h>
#endif

namespace fieldlog::detail {

// 1 for bytes that go into a JSON string unchanged: printable ASCII except '"' and '\\'.
inline constexpr std::array<bool, 256> kJsonSafe = [] {
    std::array<bool, 256> table{};
    for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
    return table;
}();

#if FIELDLOG_SSE2_SCANS
/// The JSON-unsafe bytes of `v` as a bit mask, 16 bytes at once. A signed compare with 0x20
/// catches the control bytes and, as negative numbers, every byte from 0x80 on.
inline unsigned unsafe_mask(__m128i v) noexcept {
    const __m128i hit = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    return static_cast<unsigned>(_mm_movemask_epi8(hit));
}
#else
/// Non-zero when one of the 8 bytes in `v` is not JSON-safe (exact as a yes/no answer: the
/// borrow tricks only add false hits above a true one).
constexpr std::uint64_t unsafe_bytes(std::uint64_t v) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    const auto zero_byte = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
    return ((v - ones * 0x20) & ~v & highs)                                  // below 0x20
           | zero_byte(v ^ (ones * '"')) | zero_byte(v ^ (ones * '\\'))  // '"', '\\'
           | (v & highs);                                                    // UTF-8 to check
}
#endif

/// True when every byte of the two words is JSON-safe.
inline bool all_safe(std::uint64_t a, std::uint64_t b) noexcept {
#if FIELDLOG_SSE2_SCANS
    return unsafe_mask(_mm_set_epi64x(static_cast<long long>(b), static_cast<long long>(a))) == 0;
#else
    return (unsafe_bytes(a) | unsafe_bytes(b)) == 0;
#endif
}

template <std::size_t Size>
inline std::uint64_t load_word(const unsigned char* p) noexcept {
    std::uint64_t v = 0;
    std::memcpy(&v, p, Size);
    return v;
}
template <std::size_t Size>
inline void store_word(char* o, std::uint64_t v) noexcept {
    std::memcpy(o, &v, Size);
}

/// Copies p[0, n), 4 <= n <= 2 * Size, to `o` (when not null) if every byte is JSON-safe:
/// two overlapping loads decide, two overlapping stores copy.
template <std::size_t Size>
[[gnu::always_inline]] inline bool copy_two_words(char* o, const unsigned char* p, std::size_t n) noexcept {
    const std::uint64_t head = load_word<Size>(p);
    const std::uint64_t tail = load_word<Size>(p + n - Size);
    // Two 4-byte words are checked as one 8-byte word: zero padding would read as control bytes.
    const bool safe = Size == 8 ? all_safe(head, tail) : all_safe(head | (tail << 32), head | (tail << 32));
    if (!safe) return false;
    if (o != nullptr) {
        store_word<Size>(o + n - Size, tail);
        store_word<Size>(o, head);
    }
    return true;
}

/// Copies p[0, n), n <= 16, to `o` (when not null) if every byte is JSON-safe, with no loop
/// and no library call: keys and most values are this short. False, writing nothing, otherwise.
[[gnu::always_inline]] inline bool copy_short_safe(char* o, const unsigned char* p, std::size_t n) noexcept {
    if (n >= 8) return copy_two_words<8>(o, p, n);
    if (n >= 4) return copy_two_words<4>(o, p, n);
    if (n == 0) return true;
    const unsigned char first = p[0];  // 1 to 3 bytes: first, middle and last cover them all
    const unsigned char middle = p[n / 2];
    const unsigned char last = p[n - 1];
    if (!(kJsonSafe[first] && kJsonSafe[middle] && kJsonSafe[last])) return false;
    if (o != nullptr) {
        o[0] = static_cast<char>(first);
        o[n / 2] = static_cast<char>(middle);
        o[n - 1] = static_cast<char>(last);
    }
    return true;
}

/// The longest text copy_short_json_safe() takes.
inline constexpr std::size_t kShortJsonText = 16;

/// Copies `s` to `o` when it has at most kShortJsonText bytes and all of them go into a JSON
/// string unchanged; returns the end, or nullptr having written nothing. `o` has room for
/// kShortJsonText bytes.
[[gnu::always_inline]] inline char* copy_short_json_safe(char* o, std::string_view s) noexcept {
    const std::size_t n = s.size();
    if (n > kShortJsonText || !copy_short_safe(o, reinterpret_cast<const unsigned char*>(s.data()), n)) return nullptr;
    return o + n;
}

/// Writes `s` quoted at `o` (room for kShortJsonText + 2 bytes) when it has at most
/// kShortJsonText bytes, all JSON-safe; returns the end, or nullptr having written nothing
/// that counts.
[[gnu::always_inline]] inline char* copy_short_json_string(char* o, std::string_view s) noexcept {
    if (copy_short_json_safe(o + 1, s) == nullptr) return nullptr;
    o[0] = '"';
    o[s.size() + 1] = '"';
    return o + s.size() + 2;
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// Text helpers shared by every encoder: UTF-8 validation with U+FFFD substitution by maximal
// subpart (what Python's bytes.decode('utf-8', 'replace') does), JSON string escaping, and
// the textual forms of durations, bytes, error codes and time values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <system_error>

#include "base/buffer.hpp"
#include "encode/json_safe.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

/// Length of the well-formed UTF-8 sequence starting at p[0] (p[0] >= 0x80), or, negated,
/// the length of the maximal subpart to replace by one U+FFFD (at least 1).
int utf8_sequence(const unsigned char* p, std::size_t n) noexcept;

/// `s` with each ill-formed UTF-8 sequence replaced by U+FFFD (as every encoder does):
/// calls on_run(bytes) for each piece, in order.
template <typename OnRun>
void for_each_repaired_run(std::string_view s, OnRun&& on_run) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    std::size_t run_start = 0;
    std::size_t i = 0;
    while (i < s.size()) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        const int length = utf8_sequence(p + i, s.size() - i);
        if (length > 0) {
            i += static_cast<std::size_t>(length);
            continue;
        }
        if (i > run_start) on_run(s.substr(run_start, i - run_start));
        on_run(kReplacement);
        i += static_cast<std::size_t>(-length);
        run_start = i;
    }
    if (run_start < s.size()) on_run(s.substr(run_start));
}

/// Appends `s` escaped for the inside of a JSON string (RFC 8259), invalid UTF-8 replaced.
void append_json_escaped(Buffer& out, std::string_view s);
/// Appends `s` as it is but for invalid UTF-8, replaced as append_json_escaped() does: the
/// bytes a JSON string of `s` stands for.
void append_utf8_repaired(Buffer& out, std::string_view s);

/// A copy of text longer than 16 bytes: copies p[0, n) to `o` and returns how many leading
/// bytes are JSON-safe (bytes past those may be written too).
using CopySafePrefix = std::size_t (*)(char* o, const unsigned char* p, std::size_t n) noexcept;
#if FIELDLOG_SSE2_SCANS
/// The copies this CPU can run (SSE2, then AVX2 where it has it), the best last: the escapers
/// use that one; the tests check each.
std::span<const CopySafePrefix> json_safe_copies() noexcept;
#endif

/// Appends `s` as a quoted JSON string: any string.
void append_json_string_general(Buffer& out, std::string_view s);
/// The same; inline, a short plain string (most values) is copied in the caller with no call.
[[gnu::always_inline]] inline void append_json_string(Buffer& out, std::string_view s) {
    char* o = out.reserve(kShortJsonText + 2);
    if (char* end = copy_short_json_string(o, s)) [[likely]] {
        out.commit(end);
        return;
    }
    append_json_string_general(out, s);
}

/// Go's time.Duration.String(): "0s", "1.5µs", "1.25ms", "2h3m4.5s".
void append_go_duration(Buffer& out, std::int64_t nanos);
/// append_go_duration with `us` for microseconds, so the text is ASCII: "1.5us".
void append_go_duration_ascii(Buffer& out, std::int64_t nanos);

/// RFC 4648 base64 with padding.
void append_base64(Buffer& out, std::span<const std::byte> bytes);

/// "Connection refused (system:111)". For the generic and system categories the message comes
/// from a static table (no heap); other categories call message(), which may allocate: while
/// set_signal_safe_text(true) holds, they are written as "(name:value)" instead, the name cut
/// to 64 bytes and each byte JSON would escape written as '?' (so it escapes to itself).
void append_error_code(Buffer& out, const std::error_code& ec);
/// On from the moment the crash path encodes from a signal handler (control/crash.cpp), which
/// must not run a category's message(); process-wide, as that path ends the process.
void set_signal_safe_text(bool on) noexcept;

/// append_rfc3339 for a time value in a field: the same text through a second per-thread
/// cache, so that field times (often days or years from now) and the record's own time do not
/// evict each other's cached second.
char* append_rfc3339_value(char* out, Timestamp t, const TimestampFormat& f) noexcept;
/// A time value in JSON: append_rfc3339_value's text, quoted unless numeric.
void append_json_time_value(Buffer& out, Timestamp t, const TimestampFormat& f);

/// "00" to "99": two digits per look-up.
inline constexpr std::array<char, 200> kDigitPairs = [] {
    std::array<char, 200> table{};
    for (int i = 0; i < 100; ++i) {
        table[static_cast<std::size_t>(2 * i)] = static_cast<char>('0' + i / 10);
        table[static_cast<std::size_t>(2 * i + 1)] = static_cast<char>('0' + i % 10);
    }
    return table;
}();

/// The last two components of a source file's path ("src/http/server.cpp" → "http/server.cpp"):
/// what a caller field shows, enough to find the file and short enough to read.
std::string_view source_file_tail(std::string_view path) noexcept;

/// Every integer: fmt's compiled writer (the sign, any length).
void append_int_general(Buffer& out, std::int64_t v);
void append_uint_general(Buffer& out, std::uint64_t v);

/// Writes u < 10,000 at `o` (room for 4 bytes) from the digit-pair table; returns the end.
inline char* write_small_uint(char* o, std::uint32_t u) noexcept {
    if (u < 10) {
        *o = static_cast<char>('0' + u);
        return o + 1;
    }
    if (u < 100) {
        std::memcpy(o, &kDigitPairs[2 * u], 2);
        return o + 2;
    }
    const std::uint32_t high = u / 100;
    const std::uint32_t low = u - high * 100;
    if (high < 10) {
        *o = static_cast<char>('0' + high);
        std::memcpy(o + 1, &kDigitPairs[2 * low], 2);
        return o + 3;
    }
    std::memcpy(o, &kDigitPairs[2 * high], 2);
    std::memcpy(o + 2, &kDigitPairs[2 * low], 2);
    return o + 4;
}

/// Appends a signed/unsigned integer or a shortest-round-trip double: the common small
/// non-negative integers (counts, statuses, ids below 10,000) from the digit-pair table, the
/// rest through fmt.
inline void append_int(Buffer& out, std::int64_t v) {
    if (static_cast<std::uint64_t>(v) < 10000) {
        out.commit(write_small_uint(out.reserve(4), static_cast<std::uint32_t>(v)));
        return;
    }
    append_int_general(out, v);
}
inline void append_uint(Buffer& out, std::uint64_t v) {
    if (v < 10000) {
        out.commit(write_small_uint(out.reserve(4), static_cast<std::uint32_t>(v)));
        return;
    }
    append_uint_general(out, v);
}
void append_double(Buffer& out, double v);
/// `v` with `precision` (at most 9) digits after the point, as fmt's "{:.Nf}" writes it: the
/// exact binary value rounded half to even. False, and nothing written, for what this does not
/// cover: a NaN or an infinity, and a magnitude of 2^64 / 10^precision or more.
bool append_fixed(Buffer& out, double v, unsigned precision);
/// A float64 field value: the shortest round trip, or NaN, +Inf and -Inf (which no JSON number
/// can say) as those words between `quote`s ("\"" in JSON, nothing in logfmt).
void append_float_value(Buffer& out, double v, std::string_view quote);

}  // namespace fieldlog::detail

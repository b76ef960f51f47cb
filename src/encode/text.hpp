// Text helpers shared by every encoder: UTF-8 validation with U+FFFD substitution by maximal
// subpart (what Python's bytes.decode('utf-8', 'replace') does), JSON string escaping, and
// the textual forms of durations, bytes, error codes and time values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>

#include "base/buffer.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

/// Length of the well-formed UTF-8 sequence starting at p[0] (p[0] >= 0x80), or, negated,
/// the length of the maximal subpart to replace by one U+FFFD (at least 1).
int utf8_sequence(const unsigned char* p, std::size_t n) noexcept;

/// Appends `s` escaped for the inside of a JSON string (RFC 8259), invalid UTF-8 replaced.
void append_json_escaped(Buffer& out, std::string_view s);

/// Appends `s` as a quoted JSON string.
void append_json_string(Buffer& out, std::string_view s);

/// Go's time.Duration.String(): "0s", "1.5µs", "1.25ms", "2h3m4.5s".
void append_go_duration(Buffer& out, std::int64_t nanos);

/// RFC 4648 base64 with padding.
void append_base64(Buffer& out, std::span<const std::byte> bytes);

/// "Connection refused (system:111)". For the generic and system categories the message comes
/// from a static table (no heap); other categories call message(), which may allocate.
void append_error_code(Buffer& out, const std::error_code& ec);

/// append_rfc3339 for a time value in a field: the same text through a second per-thread
/// cache, so that field times (often days or years from now) and the record's own time do not
/// evict each other's cached second.
char* append_rfc3339_value(char* out, Timestamp t, const TimestampFormat& f) noexcept;

/// Appends a signed/unsigned integer or a shortest-round-trip double.
void append_int(Buffer& out, std::int64_t v);
void append_uint(Buffer& out, std::uint64_t v);
void append_double(Buffer& out, double v);
/// A float64 field value: the shortest round trip, or NaN, +Inf and -Inf (which no JSON number
/// can say) as those words between `quote`s ("\"" in JSON, nothing in logfmt).
void append_float_value(Buffer& out, double v, std::string_view quote);

}  // namespace fieldlog::detail

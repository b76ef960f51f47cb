// SPDX-License-Identifier: MIT
// A small strict JSON reader for flat objects ({"key": scalar, ...}): what POST /transactions
// bodies are, and what one log record is (the service's tests read records with it). No heap:
// members are views into the text, or into a caller's scratch buffer for strings with escapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace http_service {

enum class JsonType : std::uint8_t { string, number, boolean, null };

/// One member of a flat object. `text` is the decoded string, or the literal of a number,
/// boolean or null; `number` holds a number's value.
struct JsonMember {
    std::string_view key;
    JsonType type = JsonType::null;
    std::string_view text;
    double number = 0;
};

/// The result of parse_flat_object: the members read, or what is wrong (a static string).
struct FlatObject {
    std::size_t size = 0;
    std::string_view error;
    [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

/// Reads `text` (RFC 8259, whitespace around allowed) as one object whose values are strings,
/// numbers, booleans or null, into `members` in document order. Rejects nested values, invalid
/// UTF-8, unpaired surrogates, more members than `members` holds, and anything after the object.
/// Strings with escapes are decoded into `scratch` (an error when it is too small).
FlatObject parse_flat_object(std::string_view text, std::span<JsonMember> members, std::span<char> scratch) noexcept;

/// Length of the valid UTF-8 sequence at the start of `text` (1 for ASCII), or 0 when it is
/// not one (a bad lead or continuation byte, an overlong form, a surrogate, past U+10FFFF).
[[nodiscard]] std::size_t utf8_sequence(std::string_view text) noexcept;

/// The first member named `key`, or nullptr.
[[nodiscard]] const JsonMember* find_member(std::span<const JsonMember> members, std::string_view key) noexcept;

}  // namespace http_service

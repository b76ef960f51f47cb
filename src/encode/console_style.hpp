// SPDX-License-Identifier: MIT
// What the console format writes besides the text itself, shared by the console encoder and
// the key=value writer under it: the ANSI SGR sequences of its colour scheme, and the indent of
// the lines a record continues on (a multi-line message or string value).
#pragma once

#include <cstdint>
#include <string_view>

namespace fieldlog::detail {

inline constexpr std::string_view kSgrDim = "\x1b[2m";   ///< the time and the keys
inline constexpr std::string_view kSgrBold = "\x1b[1m";  ///< the message
inline constexpr std::string_view kSgrReset = "\x1b[0m";

/// The start of every line after a record's first: never a timestamp's first character.
inline constexpr std::string_view kConsoleIndent = "    ";

/// Bytes between a console member's start (its space) and its key: the dim sequence with colour.
constexpr std::uint8_t console_key_offset(bool colour) noexcept {
    return static_cast<std::uint8_t>(1 + (colour ? kSgrDim.size() : 0));
}

}  // namespace fieldlog::detail

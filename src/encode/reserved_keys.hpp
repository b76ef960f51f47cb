// SPDX-License-Identifier: MIT
// The keys a record writes itself: ts, level, logger, msg, and caller, function and tid when its
// options ask (reserved always, so what a user field is called does not depend on them). A
// user field at a record's top level with one of these names is written as "fields.<name>"
// (logrus's convention), in every format, so no line ever has two members called "msg".
#pragma once

#include <string_view>

namespace fieldlog::detail {

inline constexpr std::string_view kReservedKeyPrefix = "fields.";

/// By length and then first letter: every top-level key of every record is asked, and
/// most leave after those two compares.
constexpr bool is_reserved_key(std::string_view key) noexcept {
    switch (key.size()) {
        case 2: return key == "ts";
        case 3: return (key[0] == 'm' && key == "msg") || (key[0] == 't' && key == "tid");
        case 5: return key[0] == 'l' && key == "level";
        case 6: return (key[0] == 'l' && key == "logger") || (key[0] == 'c' && key == "caller");
        case 8: return key[0] == 'f' && key == "function";
        default: return false;
    }
}

}  // namespace fieldlog::detail

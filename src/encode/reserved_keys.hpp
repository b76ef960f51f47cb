// The keys every record writes itself (ts, level, logger, msg). A user field at a record's top
// level with one of these names is written as "fields.<name>" (logrus's convention), in every
// format, so no line ever has two members called "msg".
#pragma once

#include <string_view>

namespace fieldlog::detail {

inline constexpr std::string_view kReservedKeyPrefix = "fields.";

/// Inline, by length first: every top-level key of every record is asked.
[[gnu::always_inline]] constexpr bool is_reserved_key(std::string_view key) noexcept {
    switch (key.size()) {
        case 2: return key == "ts";
        case 3: return key == "msg";
        case 5: return key == "level";
        case 6: return key == "logger";
        default: return false;
    }
}

}  // namespace fieldlog::detail

// The keys every record writes itself (ts, level, logger, msg). A user field at a record's top
// level with one of these names is written as "fields.<name>" (logrus's convention), in every
// format, so no line ever has two members called "msg".
#pragma once

#include <string_view>

namespace fieldlog::detail {

inline constexpr std::string_view kReservedKeyPrefix = "fields.";

constexpr bool is_reserved_key(std::string_view key) noexcept {
    return key == "ts" || key == "level" || key == "logger" || key == "msg";
}

}  // namespace fieldlog::detail

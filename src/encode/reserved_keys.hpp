// SPDX-License-Identifier: MIT
// The keys a record writes itself: ts, level, logger, msg, and caller, function and tid when its
// options ask (reserved always, so what a user field is called does not depend on them). A
// user field at a record's top level with one of these names is written as "fields.<name>"
// (logrus's convention), in every format, so no line ever has two members called "msg".
#pragma once

#include <string_view>

#include "fieldlog/message_template.hpp"  // is_reserved_key, which templates check at compile time

namespace fieldlog::detail {

inline constexpr std::string_view kReservedKeyPrefix = "fields.";

}  // namespace fieldlog::detail

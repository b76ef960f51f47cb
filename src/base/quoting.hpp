// SPDX-License-Identifier: MIT
// A string as error messages show it: in double quotes, escaped so that it reads on one line.
#pragma once

#include <string>
#include <string_view>

namespace fieldlog::detail {

/// `text` in double quotes, with quotes, backslashes and control characters escaped.
std::string in_quotes(std::string_view text);

}  // namespace fieldlog::detail

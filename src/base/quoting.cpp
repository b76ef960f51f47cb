// SPDX-License-Identifier: MIT
// A string as error messages show it.
#include "base/quoting.hpp"

#include <fmt/format.h>

namespace fieldlog::detail {

std::string in_quotes(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out + '"';
}

}  // namespace fieldlog::detail

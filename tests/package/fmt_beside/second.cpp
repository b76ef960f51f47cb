// SPDX-License-Identifier: MIT
// A shared library of the program's with fmt code of its own, as libspdlog.so has: here its
// copy of fmt's formatting core stands for one from an older fmt (which knows no "{:?}" and
// says "invalid type specifier"). It is only reached when fmt's shared library binds to it,
// which happens when the program no longer exports its own copy.
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace fmt {
inline namespace v9 {
namespace detail {

template <>
void vformat_to<char>(buffer<char>& buf, basic_string_view<char> format,
                      basic_format_args<FMT_BUFFER_CONTEXT(type_identity_t<char>)>, locale_ref) {
    const std::string_view text(format.data(), format.size());
    if (text.find(":?") != std::string_view::npos) throw format_error("invalid type specifier");
    buf.append(text.data(), text.data() + text.size());
}

}  // namespace detail
}  // namespace v9
}  // namespace fmt

/// The second library's own use of fmt, through its copy.
std::string second_format() {
    fmt::memory_buffer out;
    fmt::detail::vformat_to(out, fmt::string_view("second"), fmt::format_args{});
    return fmt::to_string(out);
}

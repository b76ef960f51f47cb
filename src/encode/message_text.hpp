// SPDX-License-Identifier: MIT
// A record's message as text: what every encoder writes as msg, and what an owned copy keeps.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "base/buffer.hpp"
#include "fieldlog/logger.hpp"

namespace fieldlog::detail {

/// Appends the text of a formatted or templated `message`: fmt's output, or the template with
/// each hole's value written in (message_template.hpp; docs/message-templates.md), a hole whose
/// name matches a rule of `redact` as kRedacted. Throws what a user formatter throws, or bad_alloc.
void append_message_text(Buffer& out, const Message& message, std::span<const std::string> redact);

/// True when every hole of the templated `message` is a string, a bool or a number: its text is
/// then made with no encoder, no buffer of its own and no heap (as the crash path needs).
inline bool has_scalar_holes(const Message& message) noexcept {
    for (std::size_t i = 0; i < message.site().hole_count; ++i) {
        switch (message.holes()[i].value.kind()) {
            case Value::Kind::string:
            case Value::Kind::boolean:
            case Value::Kind::int64:
            case Value::Kind::uint64:
            case Value::Kind::float64: break;
            default: return false;
        }
    }
    return true;
}

}  // namespace fieldlog::detail

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

}  // namespace fieldlog::detail

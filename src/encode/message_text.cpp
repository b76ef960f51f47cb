// SPDX-License-Identifier: MIT
#include "encode/message_text.hpp"

#include <iterator>

#include <fmt/format.h>

#include "encode/json_encoder.hpp"
#include "encode/redact.hpp"
#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

/// A hole's value as the message shows it: with its spec (a number or a string: the template
/// was checked so), else strings as they are, numbers as fmt writes them, anything else as its
/// JSON.
void append_hole(Buffer& out, const TemplateHole& hole, const Value& value) {
    if (!hole.spec.empty()) {
        // ".Nf", the usual spec of a measured figure, without fmt's parse of the format.
        const std::string_view spec = hole.spec;
        if (value.kind() == Value::Kind::float64 && spec.size() == 3 && spec[0] == '.' && spec[1] >= '0' &&
            spec[1] <= '9' && spec[2] == 'f' && append_fixed(out, value.as_double(), static_cast<unsigned>(spec[1] - '0')))
            return;
        const auto formatted = [&](const auto& v) { fmt::format_to(std::back_inserter(out), fmt::runtime(hole.format), v); };
        switch (value.kind()) {
            case Value::Kind::string: formatted(value.as_string()); return;
            case Value::Kind::boolean: formatted(value.as_bool()); return;
            case Value::Kind::int64: formatted(value.as_int64()); return;
            case Value::Kind::uint64: formatted(value.as_uint64()); return;
            case Value::Kind::float64: formatted(value.as_double()); return;
            default: break;  // a null C string: as its JSON
        }
    }
    const auto append = [&out](std::string_view text) { out.append(text.data(), text.size()); };
    const auto number = [&append](auto v) {
        const fmt::format_int text(v);
        append({text.data(), text.size()});
    };
    switch (value.kind()) {
        case Value::Kind::string: append_utf8_repaired(out, value.as_string()); return;
        case Value::Kind::boolean: append(value.as_bool() ? "true" : "false"); return;
        case Value::Kind::int64: number(value.as_int64()); return;
        case Value::Kind::uint64: number(value.as_uint64()); return;
        case Value::Kind::float64: {
            char text[32];  // a double's shortest form takes at most 24
            append({text, static_cast<std::size_t>(fmt::format_to(text, "{}", value.as_double()) - text)});
            return;
        }
        default: {
            static const EncoderOptions json{};
            Buffer scratch;
            JsonEncoder encoder(out, scratch, json);
            encoder.expect_value();
            encoder.value(value);
            encoder.close_all();
        }
    }
}

}  // namespace

void append_message_text(Buffer& out, const Message& message, std::span<const std::string> redact) {
    if (message.kind() == Message::Kind::formatted) {
        fmt::vformat_to(std::back_inserter(out), message.text(), message.args());
        return;
    }
    const TemplateSite& site = message.site();
    for (std::size_t i = 0; i < site.hole_count; ++i) {
        const TemplateHole& hole = site.holes[i];
        out.append(hole.before.data(), hole.before.size());
        if (!redact.empty() && matches_any(redact, hole.name)) {
            out.append(kRedacted.data(), kRedacted.size());
        } else {
            append_hole(out, hole, message.holes()[i].value);
        }
    }
    out.append(site.after.data(), site.after.size());
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// Redaction and the value-size cap (EncoderOptions::redact, max_value_bytes): what an encoder
// asks before it writes a member's value. Every encoder asks where it writes a key, at every
// depth, so call, bound, scope and nested fields and user types all pass here; the typed
// sinks' fields pass through RedactingEncoder on their way from the record path.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/buffer.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {

/// The value written in place of a redacted key's value, in every format.
inline constexpr std::string_view kRedacted = "[REDACTED]";

/// True when `key` matches `pattern`: `*` stands for any run of bytes, every other byte must
/// equal, ASCII letters in either case.
bool glob_matches(std::string_view pattern, std::string_view key) noexcept;

/// True when `key` matches one of `rules`. Out of line: only an encoder with rules calls it.
bool matches_any(std::span<const std::string> rules, std::string_view key) noexcept;

/// True when the value under `key` must not be written under `options`; one test with no rule.
inline bool redacts(const EncoderOptions& options, std::string_view key) noexcept {
    return !options.redact.empty() && matches_any(options.redact, key);
}

/// True when a string of `size` bytes is longer than the cap of `options` (0: no cap).
inline bool over_cap(const EncoderOptions& options, std::size_t size) noexcept {
    return options.max_value_bytes != 0 && size > options.max_value_bytes;
}

/// The longest prefix of `text` of at most `cap` bytes that ends between UTF-8 sequences.
std::string_view cut_at_utf8_boundary(std::string_view text, std::size_t cap) noexcept;

/// Cuts the text `buffer` holds to at most `cap` bytes at a UTF-8 boundary and appends the
/// marker `…[truncated N bytes]`, N the bytes cut: the one form every format writes.
void cap_in_place(Buffer& buffer, std::size_t cap);

/// A ValueEncoder that passes every call on to `inner` but writes kRedacted for the value of
/// a key the rules name (the value given after it is dropped, a container with all it holds).
/// How the typed sinks (the test observer) see user types and nested objects redacted.
class RedactingEncoder final : public ValueEncoder {
public:
    RedactingEncoder(ValueEncoder& inner, std::span<const std::string> rules) noexcept : inner_(inner), rules_(rules) {}

    void value(const Value& v) override;
    void begin_array() override;
    void end_array() override;
    void begin_object() override;
    void key(std::string_view k) override;
    void end_object() override;
    void formatted(fmt::string_view format, fmt::format_args args) override;

private:
    /// True (and the value consumed) when the value being given is one to drop.
    bool dropping_value() noexcept;
    ValueEncoder& inner_;
    std::span<const std::string> rules_;
    bool redact_next_ = false;  ///< the key just given was redacted: its value is dropped
    int skipped_ = 0;           ///< depth inside a dropped container
};

/// A typed record's container or user type with the rules to see it through: written through
/// RedactingEncoder by its fieldlog_encode.
struct RedactedValue {
    Value original;
    std::span<const std::string> rules;
};
void fieldlog_encode(ValueEncoder& enc, const RedactedValue& redacted);

/// Appends `fields` to `out` as a typed sink may see them under `rules`: a named key's value is
/// kRedacted, a container or user type is wrapped in a RedactedValue kept in `held`. MUST:
/// `held` has capacity for every field, so the Values of `out` that point into it stay put.
void append_redacted_fields(std::span<const std::string> rules, std::span<const Field> fields, std::vector<Field>& out,
                            std::vector<RedactedValue>& held);

}  // namespace fieldlog::detail

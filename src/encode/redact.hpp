// SPDX-License-Identifier: MIT
// Redaction and the value-size cap (EncoderOptions::redact, max_value_bytes): what an encoder
// asks before it writes a member's value. Every encoder asks where it writes a key, at every
// depth, so call, bound, scope and nested fields and user types all pass here; the
// fields of sinks that read parts pass through RedactingEncoder on their way from the record path.
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

/// True when `options` set redaction rules or a value cap: an encoder's member loop then goes
/// through a RedactingEncoder. The one test a member list pays without them.
inline bool is_guarded(const EncoderOptions& options) noexcept {
    return !options.redact.empty() || options.max_value_bytes != 0;
}

/// The longest prefix of `text` of at most `cap` bytes that ends between UTF-8 sequences.
std::string_view cut_at_utf8_boundary(std::string_view text, std::size_t cap) noexcept;

/// Cuts the text `buffer` holds to at most `cap` bytes at a UTF-8 boundary and appends the
/// marker `…[truncated N bytes]`, N the bytes cut: the one form every format writes.
void cap_in_place(Buffer& buffer, std::size_t cap);

/// What a RedactingEncoder applies: the rules, and the cap (0: none) with the buffer a cut
/// string is assembled in (unused without a cap).
struct ValuePolicy {
    std::span<const std::string> rules;
    std::size_t max_value_bytes = 0;
    Buffer* scratch = nullptr;
};

/// The policy of `options`, cut strings assembled in `scratch`.
inline ValuePolicy policy_of(const EncoderOptions& options, Buffer& scratch) noexcept {
    return ValuePolicy{options.redact, options.max_value_bytes, &scratch};
}

/// A ValueEncoder that passes every call on to `inner` but writes kRedacted for the value of
/// a key the rules name (the value given after it is dropped, a container with all it holds)
/// and cuts a string over the cap. Containers come apart into calls through it, and a user
/// type writes through one of its own (RedactedValue), so every key at every depth passes it.
/// The one place redaction happens: the encoders' member loops go through it when rules or a
/// cap are set, and so do the fields of sinks that read parts.
class RedactingEncoder final : public ValueEncoder {
public:
    RedactingEncoder(ValueEncoder& inner, const ValuePolicy& policy) noexcept : inner_(inner), policy_(policy) {}

    void value(const Value& v) override;
    void begin_array() override;
    void end_array() override;
    void begin_object() override;
    void key(std::string_view k) override;
    void end_object() override;
    void formatted(fmt::string_view format, fmt::format_args args) override;

private:
    /// True (and the value consumed) when the value being given is one to drop.
    bool dropping_value();
    ValueEncoder& inner_;
    ValuePolicy policy_;
    bool redact_next_ = false;  ///< the key just given was redacted: its value is dropped
    int skipped_ = 0;           ///< depth inside a dropped container
};

/// A container or user type to be written through a RedactingEncoder of its own around the
/// encoder that writes it: so a user type keeps its encoder's framing (what it leaves open is
/// closed, what cannot be written is not asked to write itself).
struct RedactedValue {
    Value original;
    ValuePolicy policy;
};
void fieldlog_encode(ValueEncoder& enc, const RedactedValue& redacted);

/// Appends `fields` to `out` as a sink that reads parts may see them under `rules`: a named
/// key's value is kRedacted, a container or user type is wrapped in a RedactedValue kept in
/// `held`. MUST: `held` has capacity for every field, so the Values of `out` that point into it
/// stay put.
void append_redacted_fields(std::span<const std::string> rules, std::span<const Field> fields, std::vector<Field>& out,
                            std::vector<RedactedValue>& held);

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// Redaction and the value-size cap: see redact.hpp. The glob match keeps one resume point for
// the last `*`, so it needs no recursion and no heap.
#include "encode/redact.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/value_calls.hpp"

namespace fieldlog::detail {
namespace {

constexpr char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool is_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

bool glob_matches(std::string_view pattern, std::string_view key) noexcept {
    constexpr std::size_t none = std::string_view::npos;
    std::size_t p = 0;
    std::size_t k = 0;
    std::size_t star = none;  // the last `*` seen, and where in the key its run ends so far
    std::size_t star_end = 0;
    // After a `*`, the key moves on to where the literal after it can start: most keys have
    // few of its first byte, so the run is found without trying each place.
    const auto skip_to_literal = [&] {
        if (p == pattern.size() || pattern[p] == '*') return;
        const char first = ascii_lower(pattern[p]);
        while (k < key.size() && ascii_lower(key[k]) != first) ++k;
        star_end = k;
    };
    while (k < key.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_end = k;
            skip_to_literal();
        } else if (p < pattern.size() && ascii_lower(pattern[p]) == ascii_lower(key[k])) {
            ++p;
            ++k;
        } else if (star != none) {  // the last `*` takes one byte more
            p = star + 1;
            k = ++star_end;
            skip_to_literal();
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

bool matches_any(std::span<const std::string> rules, std::string_view key) noexcept {
    return std::any_of(rules.begin(), rules.end(), [key](const std::string& rule) { return glob_matches(rule, key); });
}

std::string_view cut_at_utf8_boundary(std::string_view text, std::size_t cap) noexcept {
    if (text.size() <= cap) return text;
    std::size_t end = cap;
    // A sequence is at most four bytes: step back over at most three continuation bytes.
    for (int steps = 0; end > 0 && steps < 3 && is_continuation(text[end]); ++steps) --end;
    if (is_continuation(text[end])) end = cap;  // not UTF-8 here: cut where the cap says
    return text.substr(0, end);
}

void cap_in_place(Buffer& buffer, std::size_t cap) {
    const std::size_t size = buffer.size();
    const std::size_t kept = cut_at_utf8_boundary(buffer.view(), cap).size();
    buffer.truncate(kept);
    fmt::format_to(std::back_inserter(buffer), "\xE2\x80\xA6[truncated {} bytes]", size - kept);
}

bool RedactingEncoder::dropping_value() {
    if (skipped_ > 0) return true;
    if (!redact_next_) return false;
    redact_next_ = false;
    return true;
}

void RedactingEncoder::value(const Value& v) {
    if (dropping_value()) return;
    switch (v.kind()) {
        case Value::Kind::string:
            if (policy_.max_value_bytes != 0 && v.as_string().size() > policy_.max_value_bytes) {
                Buffer& scratch = *policy_.scratch;
                scratch.clear();
                scratch.append(v.as_string());
                cap_in_place(scratch, policy_.max_value_bytes);
                inner_.value(Value(scratch.view()));
                return;
            }
            inner_.value(v);
            return;
        case Value::Kind::object:
        case Value::Kind::array: write_as_calls(*this, v); return;  // their keys pass here too
        case Value::Kind::custom: {
            const RedactedValue redacted{v, policy_};
            inner_.value(Value(redacted));
            return;
        }
        default: inner_.value(v);
    }
}

void RedactingEncoder::begin_array() {
    if (dropping_value()) {
        ++skipped_;
        return;
    }
    inner_.begin_array();
}

void RedactingEncoder::begin_object() {
    if (dropping_value()) {
        ++skipped_;
        return;
    }
    inner_.begin_object();
}

void RedactingEncoder::end_array() {
    if (skipped_ > 0) {
        --skipped_;
        return;
    }
    inner_.end_array();
}

void RedactingEncoder::end_object() {
    if (skipped_ > 0) {
        --skipped_;
        return;
    }
    inner_.end_object();
}

void RedactingEncoder::key(std::string_view k) {
    if (skipped_ > 0) return;
    inner_.key(k);
    redact_next_ = matches_any(policy_.rules, k);
    // The key keeps its place and gets the marker; what is given for it next is dropped.
    if (redact_next_) inner_.value(Value(kRedacted));
}

void RedactingEncoder::formatted(fmt::string_view format, fmt::format_args args) {
    if (dropping_value()) return;
    if (policy_.max_value_bytes == 0) {
        inner_.formatted(format, args);
        return;
    }
    Buffer& scratch = *policy_.scratch;
    scratch.clear();
    fmt::vformat_to(std::back_inserter(scratch), format, args);
    if (scratch.size() > policy_.max_value_bytes) cap_in_place(scratch, policy_.max_value_bytes);
    inner_.value(Value(scratch.view()));
}

void fieldlog_encode(ValueEncoder& enc, const RedactedValue& redacted) {
    RedactingEncoder guard(enc, redacted.policy);
    if (redacted.original.kind() == Value::Kind::custom) {
        redacted.original.encode_custom_into(guard);
    } else {
        guard.value(redacted.original);
    }
}

void append_redacted_fields(std::span<const std::string> rules, std::span<const Field> fields, std::vector<Field>& out,
                            std::vector<RedactedValue>& held) {
    for (const Field& f : fields) {
        if (matches_any(rules, f.key)) {
            out.push_back(Field{f.key, Value(kRedacted)});
            continue;
        }
        switch (f.value.kind()) {
            case Value::Kind::object:
            case Value::Kind::array:
            case Value::Kind::custom:
                held.push_back(RedactedValue{f.value, ValuePolicy{rules}});
                out.push_back(Field{f.key, Value(held.back())});
                break;
            default: out.push_back(f);
        }
    }
}

}  // namespace fieldlog::detail

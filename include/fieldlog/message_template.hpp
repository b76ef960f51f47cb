// SPDX-License-Identifier: MIT
// Message templates: a message whose named holes are the record's fields.
//
//   using namespace fieldlog::literals;
//   log.info("request {method} {path} done in {latency_us:.1f} us"_tpl, method, path, latency_us);
//
// writes the fields method, path and latency_us, each with its own type, and the message
// "request GET /orders done in 1250.5 us". The template is parsed and checked at compile time,
// once per text: a hole per value, each named ({status}, not {} or {0}), each name once, no name
// the record writes itself (ts, level, logger, msg, caller, function, tid), and a format spec
// ({latency_us:.1f}) only on a number or a string, checked by fmt. A spec shapes the message
// only: the field keeps its value. `{{` and `}}` write a brace. Fields after the values go through
// fieldlog::format, as for a fmt message:
//
//   log.info(fieldlog::format("request {method} done"_tpl, method), {{"trace_id", id}});
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <fmt/core.h>

#include "fieldlog/field.hpp"

namespace fieldlog {

namespace detail {

/// The keys a record writes itself: ts, level, logger, msg, and caller, function and tid when its
/// options ask. By length and then first letter: every top-level key of every record is asked,
/// and most leave after those two compares.
constexpr bool is_reserved_key(std::string_view key) noexcept {
    switch (key.size()) {
        case 2: return key == "ts";
        case 3: return (key[0] == 'm' && key == "msg") || (key[0] == 't' && key == "tid");
        case 5: return key[0] == 'l' && key == "level";
        case 6: return (key[0] == 'l' && key == "logger") || (key[0] == 'c' && key == "caller");
        case 8: return key[0] == 'f' && key == "function";
        default: return false;
    }
}

}  // namespace detail

/// A template's text as a template argument: what "..."_tpl makes a type of.
template <std::size_t N>
struct TemplateText {
    constexpr TemplateText(const char (&text)[N]) noexcept {  // NOLINT: implicit by design
        for (std::size_t i = 0; i < N; ++i) chars[i] = text[i];
    }
    [[nodiscard]] constexpr std::string_view view() const noexcept { return {chars, N - 1}; }

    char chars[N]{};
};

/// A message template, made by the literal "..."_tpl (fieldlog::literals).
template <TemplateText Text>
struct Template {};

namespace literals {
template <TemplateText Text>
consteval Template<Text> operator""_tpl() noexcept {
    return {};
}
}  // namespace literals

/// One hole of a template: its name, its format spec ("" for none) and the fmt format that
/// writes its value with it ("{:.1f}"), and the text before it, braces unescaped.
struct TemplateHole {
    std::string_view name;
    std::string_view spec;
    std::string_view format;
    std::string_view before;
};

/// A template as parsed at compile time, in static storage: one for each text.
struct TemplateSite {
    std::string_view text;  ///< as written: what the sampler and rate limits group by
    const TemplateHole* holes;
    std::size_t hole_count;
    std::string_view after;  ///< the text after the last hole, braces unescaped
};

namespace detail {

enum class TemplateError : unsigned char { none, unbalanced, unnamed, bad_name, duplicate, reserved, too_many, wide_spec };

inline constexpr std::size_t kMaxHoles = 32;
/// The widest width or precision a spec may ask, so that a rendered hole has a known bound.
inline constexpr std::size_t kMaxSpecNumber = 64;
/// The longest name a hole may have, in bytes.
inline constexpr std::size_t kMaxHoleName = 64;

/// A template's parse: the holes' places in the text, the unescaped literal pieces and the
/// holes' fmt formats back to back in `chars`.
template <std::size_t N>
struct ParsedTemplate {
    struct Span {
        std::size_t at = 0;
        std::size_t size = 0;
    };
    struct Hole {
        Span name, spec, format, before;
    };
    TemplateError error = TemplateError::none;
    std::size_t count = 0;
    Hole holes[kMaxHoles]{};
    Span after{};
    char chars[2 * N + 3 * kMaxHoles]{};  // every literal byte once, each format's "{:" "}" around its spec
};

/// Where `c` first is in `text` from `from`, or text.size(). A loop, not string_view::find: GCC
/// does not evaluate find's null test at compile time under -fsanitize=undefined.
constexpr std::size_t position_of(char c, std::string_view text, std::size_t from = 0) noexcept {
    while (from < text.size() && text[from] != c) ++from;
    return from;
}

constexpr bool is_name_start(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool is_name_char(char c) noexcept { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

template <std::size_t N>
constexpr ParsedTemplate<N> parse_template(std::string_view text) noexcept {
    ParsedTemplate<N> p;
    std::size_t used = 0;
    std::size_t piece = 0;  // where the literal piece being read starts in chars
    const auto fail = [&p](TemplateError error) {
        p.error = error;
        return p;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '}') {
            if (i + 1 >= text.size() || text[i + 1] != '}') return fail(TemplateError::unbalanced);
            p.chars[used++] = '}';
            ++i;
            continue;
        }
        if (c != '{') {
            p.chars[used++] = c;
            continue;
        }
        if (i + 1 < text.size() && text[i + 1] == '{') {
            p.chars[used++] = '{';
            ++i;
            continue;
        }
        const std::size_t close = position_of('}', text, i);
        if (close == text.size()) return fail(TemplateError::unbalanced);
        const std::string_view inside = text.substr(i + 1, close - i - 1);
        const std::size_t colon = position_of(':', inside);
        const std::string_view name = inside.substr(0, colon);
        const std::string_view spec = colon == inside.size() ? std::string_view() : inside.substr(colon + 1);
        if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return fail(TemplateError::unnamed);
        if (!is_name_start(name[0]) || name.size() > kMaxHoleName) return fail(TemplateError::bad_name);
        for (const char n : name) {
            if (!is_name_char(n)) return fail(TemplateError::bad_name);
        }
        if (is_reserved_key(name)) return fail(TemplateError::reserved);
        std::size_t number = 0;
        for (const char d : spec) {
            number = d >= '0' && d <= '9' ? number * 10 + static_cast<std::size_t>(d - '0') : 0;
            if (number > kMaxSpecNumber) return fail(TemplateError::wide_spec);
        }
        if (p.count == kMaxHoles) return fail(TemplateError::too_many);
        for (std::size_t h = 0; h < p.count; ++h) {
            const auto& other = p.holes[h].name;
            if (text.substr(other.at, other.size) == name) return fail(TemplateError::duplicate);
        }
        auto& hole = p.holes[p.count++];
        hole.before = {piece, used - piece};
        hole.name = {i + 1, name.size()};
        hole.spec = {spec.empty() ? 0 : i + 2 + name.size(), spec.size()};
        hole.format.at = used;
        for (const char f : std::string_view("{:")) p.chars[used++] = f;
        for (const char f : spec) p.chars[used++] = f;
        p.chars[used++] = '}';
        hole.format.size = used - hole.format.at;
        piece = used;
        i = close;
    }
    p.after = {piece, used - piece};
    return p;
}

/// The parse and the site of the template `Text`: constants, so a call site refers to them in
/// static storage, made once for all calls with that text.
template <TemplateText Text>
struct SiteOf {
    static constexpr std::string_view text = Text.view();
    static constexpr ParsedTemplate<sizeof(Text.chars)> parsed = parse_template<sizeof(Text.chars)>(text);
    static constexpr std::string_view piece(typename ParsedTemplate<sizeof(Text.chars)>::Span s) noexcept {
        return {parsed.chars + s.at, s.size};
    }
    static constexpr std::array<TemplateHole, parsed.count> make_holes() noexcept {
        std::array<TemplateHole, parsed.count> made{};
        for (std::size_t i = 0; i < parsed.count; ++i) {
            const auto& h = parsed.holes[i];
            made[i] = TemplateHole{text.substr(h.name.at, h.name.size), text.substr(h.spec.at, h.spec.size),
                                   piece(h.format), piece(h.before)};
        }
        return made;
    }
    static constexpr std::array<TemplateHole, parsed.count> holes = make_holes();
    static constexpr TemplateSite site{text, holes.data(), holes.size(), piece(parsed.after)};
};

/// Always false: names the refused hole (its index I) in the compiler's note.
template <std::size_t I>
inline constexpr bool hole_with_spec_is_a_number_or_string = false;

template <typename T>
concept TemplateSpecValue =
    std::is_arithmetic_v<std::remove_cvref_t<T>> || std::is_convertible_v<const T&, std::string_view>;

/// fmt's check of hole I's spec against its value's type, at compile time.
template <typename Site, std::size_t I, typename Arg>
consteval void check_spec() {
    constexpr TemplateHole hole = Site::holes[I];
    if constexpr (!hole.spec.empty()) {
        if constexpr (!TemplateSpecValue<Arg>) {
            static_assert(hole_with_spec_is_a_number_or_string<I>,
                          "fieldlog: a hole's format spec shapes a number or a string only: drop the spec, or "
                          "format the value into a string first");
        } else {
            using Formatted = std::conditional_t<std::is_arithmetic_v<std::remove_cvref_t<Arg>>,
                                                 std::remove_cvref_t<Arg>, std::string_view>;
            [[maybe_unused]] constexpr fmt::format_string<Formatted> checked(hole.format);
        }
    }
}

}  // namespace detail

}  // namespace fieldlog

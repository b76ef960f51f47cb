// SPDX-License-Identifier: MIT
// Loggers: the call site of the flow. A Logger is a cheap handle (a registry entry plus the
// context node of the fields it carries); its level check (enabled()) is inline, and everything
// past it runs out of line in src/record/: Record → encoder → dispatcher → sinks.
//
//   call site ─► level check ─► per-thread record buffer ─► encoder ─► dispatcher ─► sinks
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/core.h>

#include "fieldlog/backtrace.hpp"
#include "fieldlog/export.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/message_template.hpp"

/// Calls below this level are removed at compile time (0 = trace … 6 = off).
#ifndef FIELDLOG_ACTIVE_LEVEL
#define FIELDLOG_ACTIVE_LEVEL 0
#endif

namespace fieldlog {

namespace detail {
struct LoggerAccess;

/// Arguments for a fmt message: at least one, and not one field list (which picks the
/// overloads taking std::span<const Field>).
template <typename... Args>
concept format_arguments =
    sizeof...(Args) > 0 && !(sizeof...(Args) == 1 && (std::is_convertible_v<Args, std::span<const Field>> && ...));

/// Always false: names the mistake in the error of a call that gives a fmt message fields.
template <typename... Args>
inline constexpr bool fmt_message_with_fields = false;

/// Always false: names the mistake in the error of a call that gives a template's values fields.
template <typename... Args>
inline constexpr bool template_with_fields = false;

// A template's values followed by fields (log.info("took {ms} ms"_tpl, ms, {{"k", v}})) match
// these, whose first error says what to write instead.
#define FIELDLOG_DETAIL_TEMPLATE_WITH_FIELDS_HINT(prefix, name, suffix, ...)                                 \
    template <::fieldlog::TemplateText Text, typename A>                                                   \
    prefix void name(__VA_ARGS__ ::fieldlog::Template<Text>, A&&, Fields) suffix {                          \
        static_assert(::fieldlog::detail::template_with_fields<A>,                                        \
                      "fieldlog: a template takes no fields after its values: write "                     \
                      "log.info(fieldlog::format(\"took {ms} ms\"_tpl, ms), {{\"key\", value}})");        \
    }                                                                                                      \
    template <::fieldlog::TemplateText Text, typename A, typename B>                                       \
    prefix void name(__VA_ARGS__ ::fieldlog::Template<Text>, A&&, B&&, Fields) suffix {                     \
        static_assert(::fieldlog::detail::template_with_fields<A, B>,                                     \
                      "fieldlog: a template takes no fields after its values: write "                     \
                      "log.info(fieldlog::format(\"{what} took {ms} ms\"_tpl, what, ms), {{\"key\", value}})"); \
    }

// A fmt message followed by fields (log.info("took {} ms", ms, {{"k", v}})) matches one of these
// overloads, whose first error says what to write instead; without them the compiler lists
// every overload that did not fit.
#define FIELDLOG_DETAIL_FMT_WITH_FIELDS_HINT(prefix, name, suffix, ...)                                      \
    template <typename A>                                                                                  \
    prefix void name(__VA_ARGS__, A&&, Fields) suffix {                                                    \
        static_assert(::fieldlog::detail::fmt_message_with_fields<A>,                                     \
                      "fieldlog: a fmt message takes no fields after its arguments: write "              \
                      "log.info(fieldlog::format(\"took {} ms\", ms), {{\"key\", value}})");           \
    }                                                                                                      \
    template <typename A, typename B>                                                                      \
    prefix void name(__VA_ARGS__, A&&, B&&, Fields) suffix {                                               \
        static_assert(::fieldlog::detail::fmt_message_with_fields<A, B>,                                  \
                      "fieldlog: a fmt message takes no fields after its arguments: write "              \
                      "log.info(fieldlog::format(\"{} took {} ms\", what, ms), {{\"key\", value}})");  \
    }                                                                                                      \
    template <typename A, typename B, typename C>                                                          \
    prefix void name(__VA_ARGS__, A&&, B&&, C&&, Fields) suffix {                                          \
        static_assert(::fieldlog::detail::fmt_message_with_fields<A, B, C>,                               \
                      "fieldlog: a fmt message takes no fields after its arguments: write "              \
                      "log.info(fieldlog::format(\"...\", a, b, c), {{\"key\", value}})");              \
    }

struct EncodedName;  // the name in the encoders' own forms (src/encode/encoded_name.hpp)

/// A logger's name, with the forms the encoders write it in, made once with the name. It owns
/// `encoded` through a plain pointer: std::shared_ptr would bring <memory> to every call site.
struct LoggerName {
    explicit LoggerName(std::string_view name = {});
    LoggerName(const LoggerName&) = delete;
    LoggerName& operator=(const LoggerName&) = delete;
    ~LoggerName();

    std::string text;
    const EncodedName* encoded;  ///< never null; owned
};

/// One named logger in the registry; lives for the whole program.
struct LoggerBacktrace;

struct LoggerCore {
    explicit LoggerCore(std::string_view logger_name) : name(logger_name) {}

    std::atomic<Level> level{Level::info};
    LoggerName name;
    /// The running pipeline's rules for this logger, worked out once per pipeline
    /// (Pipeline::rules_for, src/dispatch/pipeline.hpp); 0 until first asked.
    mutable std::atomic<std::uint64_t> rules_cache{0};
    /// Records of this logger that rate limits kept back (Metrics::loggers).
    mutable std::atomic<std::uint64_t> suppressed{0};
    /// Logger::keep_backtrace's kept records (src/record/backtrace.hpp): made on first use and
    /// never freed, as a thread may still be looking at it; `backtrace_on` while it keeps.
    std::atomic<LoggerBacktrace*> backtrace{nullptr};
    std::atomic<bool> backtrace_on{false};
};

struct ContextNode;  // the fields Logger::with attached (src/record/context_node.hpp)
/// A logger copy shares its context node: these keep its reference count.
FIELDLOG_API void retain_context(ContextNode* node) noexcept;
FIELDLOG_API void release_context(ContextNode* node) noexcept;

/// Per level: how many open backtraces (scopes' on any thread, and loggers'; backtrace.hpp)
/// keep records at that level, plus how many scopes open on any thread have a level at or below
/// it (scope.hpp). While one does, the level check lets such records through to Logger::emit,
/// which keeps them when their thread has that backtrace open, or their logger, and writes them
/// when their thread has such a scope open.
FIELDLOG_API extern std::atomic<std::uint32_t> below_level_takers[level_count];

/// True when some open backtrace keeps records at `level`, or some open scope's level lets them through.
inline bool taken_below_level(Level level) noexcept {
    return level < Level::off && below_level_takers[static_cast<std::size_t>(level)].load(std::memory_order_relaxed) != 0;
}

/// True when calls at `level` survive FIELDLOG_ACTIVE_LEVEL (a template so that the default 0
/// does not produce an always-true comparison warning in users' code).
template <int ActiveLevel>
constexpr bool compiled_in(Level level) noexcept {
    if constexpr (ActiveLevel <= 0) {
        return true;
    } else {
        return static_cast<int>(level) >= ActiveLevel;
    }
}

}  // namespace detail

/// Where a logging call is: the file as the compiler was given it, the line, the function's
/// name. SourceLocation's role, with the same layout under every compiler (clang 14 with
/// libstdc++ 12 has no SourceLocation, and a header must not change layout with the
/// compiler of the program that includes it).
class SourceLocation {
public:
    /// The place of the call this is a default argument of.
    static constexpr SourceLocation current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE(),
                                            const char* function = __builtin_FUNCTION()) noexcept {
        return SourceLocation(file, function, line);
    }
    constexpr SourceLocation() noexcept = default;

    [[nodiscard]] constexpr const char* file_name() const noexcept { return file_; }
    [[nodiscard]] constexpr unsigned line() const noexcept { return line_; }
    [[nodiscard]] constexpr const char* function_name() const noexcept { return function_; }

private:
    constexpr SourceLocation(const char* file, const char* function, unsigned line) noexcept
        : file_(file), function_(function), line_(line) {}

    const char* file_ = "";
    const char* function_ = "";
    unsigned line_ = 0;
};

/// A message: plain text, a fmt format string with its arguments (formatted straight into the
/// record buffer), or a template (message_template.hpp) with its holes' fields; and where in the
/// source the call is (written when the sink's `caller` option is on). Made implicitly at the
/// call site, which is what SourceLocation::current() as a default argument names.
class FIELDLOG_API Message {
public:
    enum class Kind : unsigned char { plain, formatted, templated };

    constexpr Message(std::string_view text,  // NOLINT: implicit by design
                      SourceLocation where = SourceLocation::current()) noexcept
        : text_(text), where_(where) {}
    constexpr Message(const char* text,  // NOLINT
                      SourceLocation where = SourceLocation::current()) noexcept
        : text_(text), where_(where) {}
    Message(const std::string& text,  // NOLINT
            SourceLocation where = SourceLocation::current()) noexcept
        : text_(text), where_(where) {}
    Message(fmt::string_view format, fmt::format_args args,
            SourceLocation where = SourceLocation::current()) noexcept
        : text_(format.data(), format.size()), args_(args), where_(where), kind_(Kind::formatted) {}
    /// A template's message; `holes` are its values as fields, in the order of its holes.
    constexpr Message(const TemplateSite& site, const Field* holes, SourceLocation where) noexcept
        : text_(site.text), template_{&site, holes}, where_(where), kind_(Kind::templated) {}

    /// The text as written: plain text, a fmt format string or a template.
    [[nodiscard]] constexpr std::string_view text() const noexcept { return text_; }
    [[nodiscard]] constexpr Kind kind() const noexcept { return kind_; }
    [[nodiscard]] constexpr bool formatted() const noexcept { return kind_ == Kind::formatted; }
    /// A formatted message's arguments.
    [[nodiscard]] fmt::format_args args() const noexcept { return args_; }
    /// A templated message's template and holes.
    [[nodiscard]] constexpr const TemplateSite& site() const noexcept { return *template_.site; }
    [[nodiscard]] constexpr const Field* holes() const noexcept { return template_.holes; }
    [[nodiscard]] constexpr SourceLocation where() const noexcept { return where_; }

private:
    struct TemplateRef {
        const TemplateSite* site;
        const Field* holes;
    };
    std::string_view text_;
    union {
        fmt::format_args args_{};
        TemplateRef template_;
    };
    SourceLocation where_;
    Kind kind_ = Kind::plain;
};

namespace detail {
/// A compile-time checked fmt format string and the place of the call it was written in: the
/// parameter type of every fmt overload, so `log.info("took {} ms", ms)` knows its caller.
template <typename... Args>
struct LocatedFormat {
    template <typename Text>
        requires std::is_convertible_v<const Text&, std::string_view>
    consteval LocatedFormat(const Text& text,  // NOLINT: implicit by design
                            SourceLocation at = SourceLocation::current())
        : format(text), where(at) {}

    fmt::format_string<Args...> format;
    SourceLocation where;
};

/// Copies p[0, n), n <= 16, to `o` with no loop and no library call: two overlapping words, or
/// first, middle and last byte.
[[gnu::always_inline]] inline void copy_short(char* o, const char* p, std::size_t n) noexcept {
    if (n >= 8) {
        std::memcpy(o + n - 8, p + n - 8, 8);
        std::memcpy(o, p, 8);
    } else if (n >= 4) {
        std::memcpy(o + n - 4, p + n - 4, 4);
        std::memcpy(o, p, 4);
    } else if (n > 0) {
        o[0] = p[0];
        o[n / 2] = p[n / 2];
        o[n - 1] = p[n - 1];
    }
}

/// Copies p[0, n) to `at`, which has room for it, and returns the end of the copy. Inline, with
/// no library call for short text: every key and string of a record's owned copy comes here.
[[gnu::always_inline]] inline char* copy_bytes(char* at, const char* p, std::size_t n) noexcept {
    if (n <= 16) {  // keys and short values
        copy_short(at, p, n);
    } else if (n <= 48) {  // ids, paths: 16-byte moves, the last one ending at the end
        std::memcpy(at, p, 16);
        if (n > 32) std::memcpy(at + 16, p + 16, 16);
        std::memcpy(at + n - 16, p + n - 16, 16);
    } else {
        std::memcpy(at, p, n);
    }
    return at + n;
}
/// copy_bytes for `s`, whose copy it gives in `out`.
[[gnu::always_inline]] inline char* copy_text(char* at, std::string_view s, std::string_view& out) noexcept {
    out = std::string_view(at, s.size());
    return copy_bytes(at, s.data(), s.size());
}

/// The kind of a hole whose value's type fixes it: the kinds the async writer and the crash
/// path render into a message with no heap. `c_string` is a character pointer, which may be null;
/// `none`: a value of another type.
enum class HoleKind : unsigned char { boolean, int64, uint64, float64, string, c_string, none };

/// The kind of a value of type T, made as Value's constructors make it.
template <typename T>
consteval HoleKind hole_kind() noexcept {
    using U = std::remove_cvref_t<T>;
    if constexpr (std::same_as<U, bool>) return HoleKind::boolean;
    else if constexpr (std::signed_integral<U> && !std::same_as<U, char>) return HoleKind::int64;
    else if constexpr (std::unsigned_integral<U> && !std::same_as<U, char> && !std::same_as<U, char8_t>)
        return HoleKind::uint64;
    else if constexpr (std::floating_point<U>) return HoleKind::float64;
    else if constexpr (std::same_as<U, std::string> || std::same_as<U, std::string_view>) return HoleKind::string;
    else if constexpr (std::is_convertible_v<const T&, const char*> && !HasFieldlogEncode<U>) return HoleKind::c_string;
    else return HoleKind::none;
}

/// Whether every one of these types has a HoleKind.
template <typename... Args>
inline constexpr bool kHoleKindsOnly = ((hole_kind<Args>() != HoleKind::none) && ...);

/// A hole's value as its call gives it: a string's bytes and size, or a scalar's bits in `word`.
struct HoleValue {
    const char* data;
    std::uint64_t word;
};

template <typename T>
HoleValue hole_value(const T& v) noexcept {
    constexpr HoleKind kind = hole_kind<T>();
    if constexpr (kind == HoleKind::string) {
        return {v.data(), v.size()};
    } else if constexpr (kind == HoleKind::c_string) {
        const char* s = v;
        return {s, s != nullptr ? std::char_traits<char>::length(s) : 0};
    } else if constexpr (kind == HoleKind::float64) {
        return {nullptr, __builtin_bit_cast(std::uint64_t, static_cast<double>(v))};  // <bit> is a large header
    } else if constexpr (kind == HoleKind::int64) {
        return {nullptr, static_cast<std::uint64_t>(static_cast<std::int64_t>(v))};
    } else {
        return {nullptr, static_cast<std::uint64_t>(v)};
    }
}

/// A hole's value as a field's, referring to the string the call gave.
template <HoleKind K>
[[gnu::always_inline]] inline Value hole_field_value(const HoleValue& value) noexcept {
    if constexpr (K == HoleKind::boolean) return Value(value.word != 0);
    else if constexpr (K == HoleKind::int64) return Value(static_cast<std::int64_t>(value.word));
    else if constexpr (K == HoleKind::uint64) return Value(value.word);
    else if constexpr (K == HoleKind::float64) return Value(__builtin_bit_cast(double, value.word));
    else if constexpr (K == HoleKind::c_string)
        return value.data != nullptr ? Value(std::string_view(value.data, value.word)) : Value(nullptr);
    else return Value(std::string_view(value.data, value.word));
}

/// Writes a template's values (kinds K) as its fields, named by the holes of `site`, to `out`.
/// One function for each list of kinds.
template <HoleKind... K>
void write_holes(const TemplateSite& site, const HoleValue* values, Field* out) noexcept {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((new (out + I) Field(site.holes[I].name, hole_field_value<K>(values[I]))), ...);
    }(std::make_index_sequence<sizeof...(K)>{});
}

// The packed form of a template's values, the async ring's: a word per hole (a scalar's bits, a
// string's size), then the strings' bytes in hole order. MUST: no null character pointer.

/// The room the packed form of `holes` values whose strings take `chars` bytes needs.
constexpr std::size_t packed_size(std::size_t holes, std::size_t chars) noexcept { return holes * 8 + chars; }

/// Writes the packed form of `values` (kinds K) to `out`, which has packed_size() bytes.
template <HoleKind... K>
void pack_holes(const HoleValue* values, char* out) noexcept {
    char* at = out + packed_size(sizeof...(K), 0);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((std::memcpy(out + 8 * I, &values[I].word, 8)), ...);
        ((at = K == HoleKind::string || K == HoleKind::c_string ? copy_bytes(at, values[I].data, values[I].word) : at),
         ...);
    }(std::make_index_sequence<sizeof...(K)>{});
}

/// The fields of a packed form (kinds K) to `out`, named by the holes of `site`, their strings
/// referring into `in`.
template <HoleKind... K>
void unpack_holes(const TemplateSite& site, const char* in, Field* out) noexcept {
    const char* at = in + packed_size(sizeof...(K), 0);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((new (out + I) Field(site.holes[I].name, [&] {
              HoleValue value{nullptr, 0};
              std::memcpy(&value.word, in + 8 * I, 8);
              if constexpr (K == HoleKind::string || K == HoleKind::c_string) {
                  value.data = at;
                  at += value.word;
              }
              return hole_field_value<K>(value);
          }())),
         ...);
    }(std::make_index_sequence<sizeof...(K)>{});
}

/// What the record path does with the values of one list of kinds.
struct HoleCodec {
    void (*write)(const TemplateSite& site, const HoleValue* values, Field* out) noexcept;  ///< write_holes
    void (*pack)(const HoleValue* values, char* out) noexcept;                              ///< pack_holes
    void (*unpack)(const TemplateSite& site, const char* in, Field* out) noexcept;           ///< unpack_holes
};
template <HoleKind... K>
inline constexpr HoleCodec kHoleCodec{&write_holes<K...>, &pack_holes<K...>, &unpack_holes<K...>};

/// A template call whose values all have a HoleKind: what the record path makes the record of
/// in one pass (the async ring entry straight from the values).
struct TemplateCall {
    const TemplateSite* site;
    SourceLocation where;
    const HoleCodec* codec;
    const HoleValue* values;
    std::size_t chars;  ///< the strings' bytes; kNullString when a character pointer is null
};
inline constexpr std::size_t kNullString = SIZE_MAX;

/// The bytes of the strings among `values` (kinds `K`), or kNullString.
template <HoleKind... K>
std::size_t hole_chars(const HoleValue* values) noexcept {
    std::size_t chars = 0;
    bool null = false;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((chars += K == HoleKind::string || K == HoleKind::c_string ? values[I].word : 0), ...);
        ((null |= K == HoleKind::c_string && values[I].data == nullptr), ...);
    }(std::make_index_sequence<sizeof...(K)>{});
    return null ? kNullString : chars;
}

/// A template with the types of its values, and the place of the call it was written in: the
/// parameter type of every template overload, so the checks see the text and the values.
template <typename... Args>
struct LocatedTemplate {
    template <TemplateText Text>
    consteval LocatedTemplate(Template<Text>,  // NOLINT: implicit by design
                              SourceLocation at = SourceLocation::current())
        : site(&SiteOf<Text>::site), where(at) {
        using Site = SiteOf<Text>;
        constexpr TemplateError error = Site::parsed.error;
        static_assert(error != TemplateError::unbalanced,
                      "fieldlog: a template's braces come in pairs: write {{ or }} for a brace of the text");
        static_assert(error != TemplateError::unnamed,
                      "fieldlog: a template names every hole ({status}): for positional holes ({} or {0}) "
                      "drop _tpl and write a fmt message");
        static_assert(error != TemplateError::bad_name,
                      "fieldlog: a hole's name is a letter or _, then letters, digits, _ or . (64 bytes at most)");
        static_assert(error != TemplateError::duplicate, "fieldlog: a template names each hole once");
        static_assert(error != TemplateError::reserved,
                      "fieldlog: a hole may not be named ts, level, logger, msg, caller, function or tid (the "
                      "record writes those itself): rename it ({user_msg}), or give the value as a field after "
                      "the message, where it is written as fields.<name>");
        static_assert(error != TemplateError::too_many, "fieldlog: a template has 32 holes at most");
        static_assert(error != TemplateError::wide_spec, "fieldlog: a hole's width and precision are 64 at most");
        if constexpr (error == TemplateError::none) {
            static_assert(Site::parsed.count == sizeof...(Args), "fieldlog: a template takes one value per hole");
            if constexpr (Site::parsed.count == sizeof...(Args)) {
                [&]<std::size_t... I>(std::index_sequence<I...>) {
                    (check_spec<Site, I, Args>(), ...);
                }(std::index_sequence_for<Args...>{});
                if constexpr (kHoleKindsOnly<Args...>) codec = &kHoleCodec<hole_kind<Args>()...>;
            }
        }
    }

    const TemplateSite* site;
    SourceLocation where;
    /// The codec of these values' kinds, when each has a HoleKind; else null.
    const HoleCodec* codec = nullptr;
};

/// A template's values as fields, named by its holes.
template <std::size_t N>
struct TemplateHoles {
    template <typename... Args>
    TemplateHoles(const TemplateSite& site, const Args&... args) noexcept  // NOLINT: one field per value
        : TemplateHoles(site, std::index_sequence_for<Args...>{}, args...) {}
    template <std::size_t... I, typename... Args>
    TemplateHoles(const TemplateSite& site, std::index_sequence<I...>, const Args&... args) noexcept
        : fields{Field(site.holes[I].name, args)...} {}

    Field fields[N];
};
template <>
struct TemplateHoles<0> {
    explicit TemplateHoles(const TemplateSite&) noexcept {}
    static constexpr const Field* fields = nullptr;
};
}  // namespace detail

/// A template with its values, made by fieldlog::format(); converts to a Message whose holes
/// are its values as fields.
template <std::size_t N>
class TemplateMessage {
public:
    template <typename... Args>
    TemplateMessage(const TemplateSite& site, SourceLocation where, const Args&... args) noexcept
        : holes_(site, args...), message_(site, holes_.fields, where) {}
    TemplateMessage(const TemplateMessage&) = delete;
    TemplateMessage& operator=(const TemplateMessage&) = delete;

    [[nodiscard]] const Message& message() const noexcept { return message_; }
    [[nodiscard]] std::span<const Field> holes() const noexcept { return {holes_.fields, N}; }

private:
    detail::TemplateHoles<N> holes_;
    Message message_;
};

/// A template (checked at compile time) for a call that also has fields:
///   log.info(fieldlog::format("user {user} logged in"_tpl, id), {{"ip", ip}});
/// NOTE: it refers to its arguments; use it within the logging call's full expression.
template <typename... Args>
[[nodiscard]] TemplateMessage<sizeof...(Args)> format(detail::LocatedTemplate<std::type_identity_t<Args>...> text,
                                                      const Args&... args) {
    return TemplateMessage<sizeof...(Args)>(*text.site, text.where, args...);
}

/// A fmt message with its arguments, made by fieldlog::format(); converts to a Message.
template <typename... Args>
class FormatMessage {
public:
    FormatMessage(fmt::string_view format, SourceLocation where, const Args&... args)
        : format_(format), where_(where), store_(fmt::make_format_args(args...)) {}
    operator Message() const noexcept { return Message(format_, store_, where_); }  // NOLINT: implicit by design

private:
    fmt::string_view format_;
    SourceLocation where_;
    fmt::format_arg_store<fmt::format_context, std::remove_cvref_t<Args>...> store_;
};

/// A fmt message (checked at compile time) for a call that also has fields:
///   log.info(fieldlog::format("user {} logged in", id), {{"ip", ip}});
/// Formatted straight into the record buffer: no heap.
/// NOTE: it refers to its arguments; use it within the logging call's full expression.
template <typename... Args>
[[nodiscard]] FormatMessage<Args...> format(detail::LocatedFormat<std::type_identity_t<Args>...> format,
                                            Args&&... args) {
    return FormatMessage<Args...>(fmt::string_view(format.format), format.where, args...);
}

/// A named logger handle carrying bound fields. Copy it freely; it is thread-safe.
class FIELDLOG_API Logger {
public:
    /// The root logger (name "").
    Logger();

    [[nodiscard]] std::string_view name() const noexcept { return core_->name.text; }
    [[nodiscard]] Level level() const noexcept { return core_->level.load(std::memory_order_relaxed); }
    /// Sets the level of this name and of the names below it (`db` also sets `db.pool`)
    /// that have no level of their own, for every handle and thread, until reset_level(); a
    /// configure() or reload() keeps it. On the root logger: the global level.
    void set_level(Level level) const;
    /// Undoes set_level(): this name follows the configuration (or a name above it) again.
    void reset_level() const;
    /// A backtrace for this logger, as spdlog and quill keep one: its records (through any
    /// handle of its name, with() children included, on any thread) below its level and at or
    /// above `keep_from` are kept, the newest `backtrace.records` of them; its next record at
    /// or above `trigger` writes them first, oldest first, marked "backtrace":true. A record a
    /// thread's Scope backtrace keeps is kept there instead; a trigger writes the logger's
    /// records, then the scopes'. Replaces this logger's backtrace (what it kept is dropped);
    /// `Backtrace{.records = 0}` ends it. Kept across configure() while no configuration's
    /// `backtraces` names this logger (Config::backtraces). Keeping takes the logger's lock
    /// while the record is copied. Does nothing when called from inside a logging call (a
    /// user type's encoder, a sink). Throws std::bad_alloc (the logger's first backtrace only).
    void keep_backtrace(const Backtrace& backtrace) const;
    /// The level check: one relaxed load and a compare, and below the level a second look,
    /// at whether an open backtrace anywhere keeps records at `level` (then the record goes on,
    /// to be kept if its thread has one open, or its logger; see backtrace.hpp), or a scope's
    /// level anywhere lets it through (scope.hpp; then it goes on when its thread has one open).
    [[nodiscard]] bool enabled(Level level) const noexcept {
        return (level >= core_->level.load(std::memory_order_relaxed) && level != Level::off) ||
               detail::taken_below_level(level);
    }

    /// Logs one record when `level` is enabled. Fields are encoded before the call returns.
    void log(Level level, const Message& message, Fields fields = {}) const {
        if (enabled(level)) log_enabled(level, message, fields);
    }
    /// The same for a field list built at run time (a std::vector<Field>, an array, a span).
    void log(Level level, const Message& message, std::span<const Field> fields) const {
        if (enabled(level)) emit(level, message, fields);
    }
    /// Logs with a compile-time checked fmt message: log.info("took {} ms", ms).
    template <typename... Args>
        requires detail::format_arguments<Args...>
    void log(Level level, detail::LocatedFormat<std::type_identity_t<Args>...> format, Args&&... args) const {
        if (enabled(level)) log_enabled(level, format, std::forward<Args>(args)...);
    }
    FIELDLOG_DETAIL_FMT_WITH_FIELDS_HINT(, log, const, Level, const Message&)
    /// Logs with a message template (message_template.hpp): log.info("took {ms} ms"_tpl, ms).
    template <typename... Args>
    void log(Level level, detail::LocatedTemplate<std::type_identity_t<Args>...> text, const Args&... args) const {
        if (enabled(level)) log_enabled(level, text, args...);
    }
    /// The same, with fields after the template's: log.info(fieldlog::format("..."_tpl, a), {{"k", v}}).
    template <std::size_t N>
    void log(Level level, const TemplateMessage<N>& message, Fields fields = {}) const {
        if (enabled(level)) emit_template(level, message.message(), message.holes(), {fields.begin(), fields.size()});
    }
    template <std::size_t N>
    void log(Level level, const TemplateMessage<N>& message, std::span<const Field> fields) const {
        if (enabled(level)) emit_template(level, message.message(), message.holes(), fields);
    }
    FIELDLOG_DETAIL_TEMPLATE_WITH_FIELDS_HINT(, log, const, Level,)

    // The fmt overload goes straight to log_enabled, not through log(): a call's argument types
    // are mostly its own, so each template between it and emit() is compiled once per call.
#define FIELDLOG_DETAIL_LEVEL_METHOD(method)                                                    \
    void method(const Message& message, Fields fields = {}) const { log(Level::method, message, fields); } \
    void method(const Message& message, std::span<const Field> fields) const { log(Level::method, message, fields); } \
    template <typename... Args>                                                                 \
        requires detail::format_arguments<Args...>                                                           \
    void method(detail::LocatedFormat<std::type_identity_t<Args>...> format, Args&&... args) const { \
        if (enabled(Level::method)) log_enabled(Level::method, format, std::forward<Args>(args)...); \
    }                                                                                           \
    FIELDLOG_DETAIL_FMT_WITH_FIELDS_HINT(, method, const, const Message&)                          \
    template <typename... Args>                                                                 \
    void method(detail::LocatedTemplate<std::type_identity_t<Args>...> text, const Args&... args) const { \
        if (enabled(Level::method)) log_enabled(Level::method, text, args...);                 \
    }                                                                                           \
    template <std::size_t N>                                                                    \
    void method(const TemplateMessage<N>& message, Fields fields = {}) const {                  \
        if (enabled(Level::method))                                                             \
            emit_template(Level::method, message.message(), message.holes(), {fields.begin(), fields.size()}); \
    }                                                                                           \
    template <std::size_t N>                                                                    \
    void method(const TemplateMessage<N>& message, std::span<const Field> fields) const {       \
        if (enabled(Level::method)) emit_template(Level::method, message.message(), message.holes(), fields); \
    }                                                                                           \
    FIELDLOG_DETAIL_TEMPLATE_WITH_FIELDS_HINT(, method, const, )
    FIELDLOG_DETAIL_LEVEL_METHOD(trace)
    FIELDLOG_DETAIL_LEVEL_METHOD(debug)
    FIELDLOG_DETAIL_LEVEL_METHOD(info)
    FIELDLOG_DETAIL_LEVEL_METHOD(warn)
    FIELDLOG_DETAIL_LEVEL_METHOD(error)
    FIELDLOG_DETAIL_LEVEL_METHOD(fatal)
#undef FIELDLOG_DETAIL_LEVEL_METHOD

    /// A child logger whose records all carry `fields` (after the parent's own bound fields).
    /// The values are copied now (no heap in steady state: the node comes from this thread's
    /// pool) and encoded once per format, when a record in that format first needs them.
    [[nodiscard]] Logger with(Fields fields) const {
        return with(std::span<const Field>(fields.begin(), fields.size()));
    }
    /// The same for a field list built at run time.
    [[nodiscard]] Logger with(std::span<const Field> fields) const;

    Logger(const Logger& other) noexcept : core_(other.core_), context_(other.context_) {
        if (context_ != nullptr) detail::retain_context(context_);
    }
    /// The moved-from logger keeps its name and loses its bound fields.
    Logger(Logger&& other) noexcept : core_(other.core_), context_(other.context_) { other.context_ = nullptr; }
    Logger& operator=(const Logger& other) noexcept {
        Logger copy(other);
        swap(copy);
        return *this;
    }
    Logger& operator=(Logger&& other) noexcept {
        Logger taken(std::move(other));
        swap(taken);
        return *this;
    }
    ~Logger() {
        if (context_ != nullptr) detail::release_context(context_);
    }

private:
    friend Logger get(std::string_view name);
    friend struct detail::LoggerAccess;

    /// log() for a caller that has just checked enabled(level) (the FIELDLOG_* macros): the
    /// level is not loaded a second time.
    void log_enabled(Level level, const Message& message, Fields fields = {}) const {
        emit(level, message, std::span<const Field>(fields.begin(), fields.size()));
    }
    template <typename... Args>
        requires detail::format_arguments<Args...>
    void log_enabled(Level level, detail::LocatedFormat<std::type_identity_t<Args>...> format, Args&&... args) const {
        const auto store = fmt::make_format_args(args...);
        emit(level, Message(fmt::string_view(format.format), store, format.where), {});
    }
    template <typename... Args>
    void log_enabled(Level level, detail::LocatedTemplate<std::type_identity_t<Args>...> text, const Args&... args) const {
        if constexpr (detail::kHoleKindsOnly<Args...>) {
            const std::array<detail::HoleValue, sizeof...(Args)> values{detail::hole_value(args)...};
            emit_call(level, detail::TemplateCall{text.site, text.where, text.codec, values.data(),
                                                  detail::hole_chars<detail::hole_kind<Args>()...>(values.data())});
        } else {
            const detail::TemplateHoles<sizeof...(Args)> holes(*text.site, args...);
            emit(level, Message(*text.site, holes.fields, text.where), std::span<const Field>(holes.fields, sizeof...(Args)));
        }
    }
    /// The record path past the level check: encode and dispatch. Out of line by design.
    void emit(Level level, const Message& message, std::span<const Field> fields) const noexcept;
    /// emit() for a template whose values all have a HoleKind: in async mode the ring entry is
    /// made from the values in one pass; otherwise they become fields and go to emit().
    void emit_call(Level level, const detail::TemplateCall& call) const noexcept;
    /// emit_counted() for a template's message with fields after its holes' (`holes`).
    void emit_template(Level level, const Message& message, std::span<const Field> holes, std::span<const Field> fields,
                       std::uint64_t suppressed = 0) const noexcept;
    /// emit() for a rate-limited call site (rate_limit.hpp) that kept `suppressed` records back
    /// since it last wrote one: the record's first field is "suppressed": that count.
    void emit_counted(Level level, std::uint64_t suppressed, const Message& message,
                      std::span<const Field> fields) const noexcept;

    Logger(detail::LoggerCore* core, detail::ContextNode* context) noexcept : core_(core), context_(context) {}
    void swap(Logger& other) noexcept {
        std::swap(core_, other.core_);
        std::swap(context_, other.context_);
    }

    detail::LoggerCore* core_;
    detail::ContextNode* context_ = nullptr;  ///< holds a reference; null: no bound fields
};

/// The logger named `name` (created on first use; the same core for every call).
FIELDLOG_API Logger get(std::string_view name);

namespace detail {
/// What the FIELDLOG_* macros call once they checked the level themselves: Logger's check-less
/// entry points are private, so no other code logs past the level check.
struct LoggerAccess {
    static void log_enabled(const Logger& logger, Level level, const Message& message, Fields fields = {}) {
        logger.log_enabled(level, message, fields);
    }
    static void log_enabled(const Logger& logger, Level level, const Message& message, std::span<const Field> fields) {
        logger.emit(level, message, fields);
    }
    template <typename... Args>
        requires detail::format_arguments<Args...>
    static void log_enabled(const Logger& logger, Level level, detail::LocatedFormat<std::type_identity_t<Args>...> format,
                            Args&&... args) {
        logger.log_enabled(level, format, std::forward<Args>(args)...);
    }
    FIELDLOG_DETAIL_FMT_WITH_FIELDS_HINT(static, log_enabled, , const Logger&, Level, const Message&)
    template <typename... Args>
    static void log_enabled(const Logger& logger, Level level, detail::LocatedTemplate<std::type_identity_t<Args>...> text,
                            const Args&... args) {
        logger.log_enabled(level, text, args...);
    }
    template <std::size_t N>
    static void log_enabled(const Logger& logger, Level level, const TemplateMessage<N>& message, Fields fields = {}) {
        logger.emit_template(level, message.message(), message.holes(), {fields.begin(), fields.size()});
    }
    template <std::size_t N>
    static void log_enabled(const Logger& logger, Level level, const TemplateMessage<N>& message,
                            std::span<const Field> fields) {
        logger.emit_template(level, message.message(), message.holes(), fields);
    }

    // The rate-limited call sites' entries (rate_limit.hpp): log_enabled, after `suppressed`
    // calls the site kept back.
    static void log_counted(const Logger& logger, Level level, std::uint64_t suppressed, const Message& message,
                            Fields fields = {}) {
        logger.emit_counted(level, suppressed, message, std::span<const Field>(fields.begin(), fields.size()));
    }
    static void log_counted(const Logger& logger, Level level, std::uint64_t suppressed, const Message& message,
                            std::span<const Field> fields) {
        logger.emit_counted(level, suppressed, message, fields);
    }
    template <typename... Args>
        requires detail::format_arguments<Args...>
    static void log_counted(const Logger& logger, Level level, std::uint64_t suppressed,
                            detail::LocatedFormat<std::type_identity_t<Args>...> format, Args&&... args) {
        const auto store = fmt::make_format_args(args...);
        logger.emit_counted(level, suppressed, Message(fmt::string_view(format.format), store, format.where), {});
    }
    FIELDLOG_DETAIL_FMT_WITH_FIELDS_HINT(static, log_counted, , const Logger&, Level, std::uint64_t, const Message&)
    template <typename... Args>
    static void log_counted(const Logger& logger, Level level, std::uint64_t suppressed,
                            detail::LocatedTemplate<std::type_identity_t<Args>...> text, const Args&... args) {
        const detail::TemplateHoles<sizeof...(Args)> holes(*text.site, args...);
        logger.emit_counted(level, suppressed, Message(*text.site, holes.fields, text.where),
                            std::span<const Field>(holes.fields, sizeof...(Args)));
    }
    template <std::size_t N>
    static void log_counted(const Logger& logger, Level level, std::uint64_t suppressed,
                            const TemplateMessage<N>& message, Fields fields = {}) {
        logger.emit_template(level, message.message(), message.holes(), {fields.begin(), fields.size()}, suppressed);
    }
    template <std::size_t N>
    static void log_counted(const Logger& logger, Level level, std::uint64_t suppressed,
                            const TemplateMessage<N>& message, std::span<const Field> fields) {
        logger.emit_template(level, message.message(), message.holes(), fields, suppressed);
    }
    /// Counts one call a rate-limited site kept back (Metrics::loggers).
    static void count_suppressed(const Logger& logger) noexcept {
        logger.core_->suppressed.fetch_add(1, std::memory_order_relaxed);
    }
};
}  // namespace detail
#undef FIELDLOG_DETAIL_FMT_WITH_FIELDS_HINT
#undef FIELDLOG_DETAIL_TEMPLATE_WITH_FIELDS_HINT

}  // namespace fieldlog

/// Logs when the level is enabled; the arguments are not evaluated otherwise, and calls below
/// FIELDLOG_ACTIVE_LEVEL vanish at compile time.
///   FIELDLOG_INFO(log, "request done", {{"status", 200}});
///   FIELDLOG_DEBUG(log, "took {} ms", ms);
#define FIELDLOG_LOG(logger, level, ...)                                                             \
    do {                                                                                             \
        if (::fieldlog::detail::compiled_in<FIELDLOG_ACTIVE_LEVEL>(level)) {                         \
            const ::fieldlog::Logger& fieldlog_logger_ = (logger);                                   \
            if (fieldlog_logger_.enabled(level))                                                     \
                ::fieldlog::detail::LoggerAccess::log_enabled(fieldlog_logger_, (level), __VA_ARGS__); \
        }                                                                                            \
    } while (false)
#define FIELDLOG_TRACE(logger, ...) FIELDLOG_LOG(logger, ::fieldlog::Level::trace, __VA_ARGS__)
#define FIELDLOG_DEBUG(logger, ...) FIELDLOG_LOG(logger, ::fieldlog::Level::debug, __VA_ARGS__)
#define FIELDLOG_INFO(logger, ...) FIELDLOG_LOG(logger, ::fieldlog::Level::info, __VA_ARGS__)
#define FIELDLOG_WARN(logger, ...) FIELDLOG_LOG(logger, ::fieldlog::Level::warn, __VA_ARGS__)
#define FIELDLOG_ERROR(logger, ...) FIELDLOG_LOG(logger, ::fieldlog::Level::error, __VA_ARGS__)
#define FIELDLOG_FATAL(logger, ...) FIELDLOG_LOG(logger, ::fieldlog::Level::fatal, __VA_ARGS__)

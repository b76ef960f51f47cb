// Request scope: fields attached to every record logged on this thread while a Scope lives,
// like an MDC but typed, encoded once per format when the scope opens and copied as bytes into
// each record (after the logger's bound fields, before the call's fields). Scopes nest (inner
// fields after outer); the bytes live in fixed per-thread storage, so opening and closing a
// scope never touches the heap and nothing is left behind when it closes.
//
//   {
//       fieldlog::Scope request{{"request_id", rid}, {"user", uid}};
//       log.info("cache miss");                            // … "request_id":"…","user":7}
//       pool.post([ctx = fieldlog::Scope::capture()] {     // hand the context on
//           fieldlog::Scope s{ctx};                        // this thread's records carry it too
//       });
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "fieldlog/export.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog {

namespace detail {
struct ThreadContext;
/// sizeof the scope fields of one thread in every format (checked in src/record/scope.cpp).
inline constexpr std::size_t kScopeContextBytes = 2352;
}  // namespace detail

/// The scope fields open on one thread, captured as a value: copy it anywhere (another thread,
/// a queued task) and re-open it there with `Scope s{context}`. Holds no pointers and never
/// allocates; copying it copies kScopeContextBytes bytes.
class FIELDLOG_API ScopeContext {
public:
    /// An empty context (re-opening it adds no fields).
    ScopeContext() noexcept;
    /// True when it holds no fields.
    [[nodiscard]] bool empty() const noexcept;

private:
    friend class Scope;
    alignas(8) std::byte storage_[detail::kScopeContextBytes];
};

/// RAII: while it lives, every record logged on this thread carries its fields.
/// Capacity: all scopes open on one thread share `capacity` bytes and `max_fields` members per
/// format, and nest at most `max_depth` deep. A field that does not fit is left out whole,
/// with the scope's fields after it, and counted in Metrics::truncated_scopes; the line is
/// never cut mid-field. A scope key that repeats an outer scope's or a bound field's key
/// replaces it (see the duplicate-key rule in field.hpp).
/// NOTE: a Scope MUST be destroyed on the thread that opened it (move it within the thread
/// only; destroyed elsewhere it cannot close, and its fields stay on the opening thread). To
/// carry fields to another thread, capture() them.
class FIELDLOG_API Scope {
public:
    static constexpr std::size_t capacity = 512;  ///< bytes per format, all open scopes together
    static constexpr std::size_t max_fields = 32;  ///< members per format, all open scopes together
    static constexpr int max_depth = 16;           ///< scopes open at once on one thread

    /// Opens a scope with `fields` (encoded now; the values need not outlive this call).
    explicit Scope(Fields fields) noexcept : Scope(std::span<const Field>(fields.begin(), fields.size())) {}
    /// The same for a field list built at run time.
    explicit Scope(std::span<const Field> fields) noexcept;
    /// Re-opens a captured context on this thread (as one scope, inside those already open).
    explicit Scope(const ScopeContext& context) noexcept;
    /// The moved-from scope becomes inert: closing happens exactly once, by the new owner.
    Scope(Scope&& other) noexcept : owner_(other.owner_), id_(other.id_) {
        other.owner_ = nullptr;
        other.id_ = 0;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    /// Closes the scope: later records on this thread no longer carry its fields.
    ~Scope();

    /// Every scope field open on this thread now, as a copyable value.
    [[nodiscard]] static ScopeContext capture() noexcept;

private:
    detail::ThreadContext* owner_ = nullptr;
    std::uint32_t id_ = 0;  ///< 0: inert (moved from, or nothing could be opened)
};

}  // namespace fieldlog

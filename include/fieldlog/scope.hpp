// SPDX-License-Identifier: MIT
// Request scope: fields attached to every record logged on this thread while a Scope lives,
// like an MDC but typed. Opening a scope makes a context node (its values copied in, from this
// thread's pool: no heap in steady state) on top of the thread's open scopes; records carry it
// after the logger's bound fields and before the call's fields, encoded once per format when
// a record in that format first needs it. Scopes nest (inner fields after outer) and may close
// in any order. A capture is a reference to the context open now, to re-open anywhere.
//
//   {
//       fieldlog::Scope request{{"request_id", rid}, {"user", uid}};
//       log.info("cache miss");                            // … "request_id":"…","user":7}
//       pool.post([ctx = fieldlog::Scope::capture()] {     // hand the context on
//           fieldlog::Scope s{ctx};                        // this thread's records carry it too
//       });
//   }
//
// A scope may also keep a backtrace: records below the logger's level (down to a chosen one)
// logged on its thread while it is open are kept in their typed form instead of dropped; a
// record at the trigger level or above, within the scope, writes them first, in order and
// marked "backtrace":true; a scope that closes without one discards them.
//
//   fieldlog::Scope request{{{"request_id", rid}}, fieldlog::Backtrace{.records = 16}};
//   log.debug("cache miss", {{"key", key}});   // kept, not written (the logger is at info)
//   log.error("upstream failed");             // writes the debug record, then this one
//
// A scope may also carry a level: while it is the innermost with one on its thread, every
// logger's records made there are judged against it instead of the logger's level.
//
//   fieldlog::Scope request{{{"request_id", rid}}, fieldlog::Level::debug};
//   log.debug("cache miss");                   // written (the logger is at info)
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "fieldlog/backtrace.hpp"
#include "fieldlog/export.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/trace_context.hpp"

namespace fieldlog {

namespace detail {
struct ContextHome;
}  // namespace detail

/// The scope fields open on one thread, captured: a reference to them (copying it copies a
/// pointer and counts a reference), valid anywhere and for as long as it lives, whatever
/// happens to the scopes it was taken from. Re-open it with `Scope s{context}` on any thread.
class FIELDLOG_API ScopeContext {
public:
    /// An empty context (re-opening it adds no fields).
    ScopeContext() noexcept = default;
    ScopeContext(const ScopeContext& other) noexcept : node_(other.node_), backtrace_(other.backtrace_), level_(other.level_) {
        if (node_ != nullptr) detail::retain_context(node_);
    }
    ScopeContext(ScopeContext&& other) noexcept : node_(other.node_), backtrace_(other.backtrace_), level_(other.level_) {
        other.node_ = nullptr;
    }
    ScopeContext& operator=(ScopeContext other) noexcept {
        std::swap(node_, other.node_);
        backtrace_ = other.backtrace_;
        level_ = other.level_;
        return *this;
    }
    ~ScopeContext() {
        if (node_ != nullptr) detail::release_context(node_);
    }
    /// True when it holds no fields.
    [[nodiscard]] bool empty() const noexcept { return node_ == nullptr; }
    /// The backtrace of the innermost scope that kept one when this was captured (records 0:
    /// none). Re-opening the capture opens a backtrace like it on the re-opening thread.
    [[nodiscard]] const Backtrace& backtrace() const noexcept { return backtrace_; }
    /// The level of the innermost scope that had one when this was captured. Re-opening the
    /// capture applies it on the re-opening thread.
    [[nodiscard]] std::optional<Level> level() const noexcept { return level_; }

private:
    friend class Scope;
    ScopeContext(detail::ContextNode* node, const Backtrace& backtrace, std::optional<Level> level) noexcept
        : node_(node), backtrace_(backtrace), level_(level) {}
    detail::ContextNode* node_ = nullptr;  ///< holds a reference
    Backtrace backtrace_{.records = 0};
    std::optional<Level> level_;
};

/// RAII: while it lives, every record logged on the thread that opened it carries its fields.
/// Values of any size are kept whole (a scope's memory is its own, not a shared fixed area).
/// A scope key that repeats an outer scope's or a bound field's key replaces it (see the
/// duplicate-key rule in field.hpp).
/// Closing on another thread (a coroutine resumed elsewhere, a task that finished on a pool
/// thread) is well defined: the scope is closed on the thread that opened it before that
/// thread's next record, so no later record there carries it. A scope opened from inside a
/// logging call (by a user type's encoder) opens nothing and is counted in
/// Metrics::context_fields_dropped, like a scope whose value throws while being copied.
/// A backtrace (see Backtrace) is the scope's own, on its thread: a record another thread logs
/// is kept there only by a scope open on that thread (a re-opened capture opens one like it).
class FIELDLOG_API Scope {
public:
    /// Opens a scope with `fields` (copied now; the values need not outlive this call).
    explicit Scope(Fields fields) noexcept : Scope(std::span<const Field>(fields.begin(), fields.size())) {}
    /// The same for a field list built at run time.
    explicit Scope(std::span<const Field> fields) noexcept : Scope(fields, Backtrace{.records = 0}) {}
    /// Opens a scope with `fields` that keeps a backtrace (records 0: none).
    Scope(Fields fields, const Backtrace& backtrace) noexcept
        : Scope(std::span<const Field>(fields.begin(), fields.size()), backtrace) {}
    /// The same for a field list built at run time.
    Scope(std::span<const Field> fields, const Backtrace& backtrace) noexcept;
    /// Opens a scope that only keeps a backtrace.
    explicit Scope(const Backtrace& backtrace) noexcept : Scope(std::span<const Field>(), backtrace) {}
    /// Opens a scope with `fields` and a level of its own: while it is the innermost scope with
    /// a level on this thread, every logger's records made here are judged against `level`
    /// instead of the logger's level, lower or higher (docs/context.md, "A scope's own level").
    Scope(Fields fields, Level level) noexcept : Scope(std::span<const Field>(fields.begin(), fields.size()), level) {}
    /// The same for a field list built at run time.
    Scope(std::span<const Field> fields, Level level) noexcept : Scope(fields, Backtrace{.records = 0}, level) {}
    /// Opens a scope that only sets a level.
    explicit Scope(Level level) noexcept : Scope(std::span<const Field>(), level) {}
    /// Fields, a backtrace and a level (none: the loggers' own levels apply).
    Scope(std::span<const Field> fields, const Backtrace& backtrace, std::optional<Level> level) noexcept;
    /// Re-opens a captured context on this thread (as one scope, inside those already open),
    /// with a backtrace like the one it was captured in, if any, and its level.
    explicit Scope(const ScopeContext& context) noexcept;
    /// Opens a scope with the trace position's `trace_id`, `span_id` and `trace_flags`: string
    /// fields of 32, 16 and 2 lowercase hex digits.
    explicit Scope(const TraceContext& trace) noexcept;
    /// The same for TraceContext::parse()'s result; without a context it opens nothing.
    explicit Scope(const std::optional<TraceContext>& trace) noexcept;
    /// The moved-from scope becomes inert: closing happens exactly once, by the new owner.
    Scope(Scope&& other) noexcept : home_(other.home_), own_(other.own_), generation_(other.generation_) {
        other.own_ = nullptr;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    /// Closes the scope: later records on its thread no longer carry its fields.
    ~Scope();

    /// Every scope field open on this thread now, as a reference (with the innermost open
    /// backtrace's settings; not its kept records, which stay on this thread).
    [[nodiscard]] static ScopeContext capture() noexcept;

private:
    detail::ContextHome* home_ = nullptr;  ///< the opening thread's scopes
    detail::ContextNode* own_ = nullptr;   ///< holds a reference; null: inert
    std::uint32_t generation_ = 0;         ///< of home_ when opened: it changes when that thread exits
};

}  // namespace fieldlog

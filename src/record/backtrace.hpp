// SPDX-License-Identifier: MIT
// Backtraces (fieldlog::Backtrace, backtrace.hpp). A scope's: the records its thread logs
// below its logger's level while the scope is open, kept as owned copies (fields and
// strings copied in) in chunks of the thread's context pool, until a record at the trigger
// level writes them or the scope's close discards them; all on the owning thread, the only
// shared state the per-level count the level check reads. A logger's: the same records of that
// logger from any thread, the newest kept under the logger's own mutex.
//
//   Logger::emit, below its level ─► keep_for_backtrace ─► keep_record
//   Logger::emit, at the trigger ─► emit_after_backtraces ─► write_kept_records, then the record
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "fieldlog/backtrace.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/timestamp.hpp"
#include "record/owned_record.hpp"

namespace fieldlog::detail {

class Buffer;
struct ContextHome;
struct ContextNode;

struct KeptChunk;

/// A backtrace's list entry: a kept record's owned copy (owned_record.hpp), in a chunk of its
/// backtrace or a block of its own. The copy's fields are "backtrace": true, then the call's; its bound context is a
/// reference; its scope (the thread's open scopes when it was logged) is a reference when
/// `holds_scope`, else the chain of the layer that keeps the record, alive while the layer is
/// (hold_kept_scopes). Its thread id is set when another thread may write it (a logger's).
struct KeptEntry {
    KeptEntry* next;
    KeptChunk* chunk;  ///< the chunk it lies in, or null: a pooled block of its own
    bool holds_scope;
    OwnedRecord record;
};
static_assert(sizeof(KeptEntry) == offsetof(KeptEntry, record) + sizeof(OwnedRecord));  // its fields follow it

/// The kept records of one open scope that keeps a backtrace (its ScopeLayer's), oldest
/// first. A block of the thread's pool: a scope without a backtrace has none. Records lie one
/// after the other in chunks (pooled blocks, oldest first), each written in one pass; a chunk
/// goes back when the last record in it goes. A record too large for a chunk, or with values
/// other than scalars and strings, takes a block of its own.
struct BacktraceStore {
    KeptEntry* first = nullptr;
    KeptEntry* last = nullptr;
    KeptChunk* oldest = nullptr;
    KeptChunk* newest = nullptr;
    char* free = nullptr;  ///< where the next record goes in `newest`
    char* end = nullptr;   ///< the end of `newest`
    std::uint32_t count = 0;
    std::uint32_t capacity = 0;
    /// Records holding a reference or a block of their own: a discard walks the list only
    /// when there are some.
    std::uint32_t owning = 0;
    Level keep_from = Level::debug;
    Level trigger = Level::error;
};

/// A logger's backtrace (Logger::keep_backtrace): records of any thread, kept under its mutex.
struct LoggerBacktrace {
    std::mutex mutex;
    BacktraceStore kept;
    bool on = false;
};

/// The kept records' state for a scope of `home` opening with `backtrace`, counted in
/// below_level_takers; null when it keeps nothing (0 records, or no level below the trigger)
/// or memory ran out (then the scope opens without a backtrace).
BacktraceStore* open_kept_records(ContextHome& home, const Backtrace& backtrace) noexcept;
/// Discards what `kept` holds, takes it out of below_level_takers and gives its block back.
void close_kept_records(ContextHome& home, BacktraceStore* kept) noexcept;
/// The layer keeping `kept` is about to let go of its chain `chain` (a scope below it closed,
/// and the chain is remade): its records logged on that chain take a reference of their own.
void hold_kept_scopes(BacktraceStore& kept, ContextNode* chain) noexcept;
/// Gives back every record `kept` holds; it stays open.
void discard_kept_records(ContextHome& home, BacktraceStore& kept) noexcept;
/// The settings `kept` was opened with.
Backtrace backtrace_of(const BacktraceStore& kept) noexcept;

/// Keeps `record` (below its logger's level; its scope is home.top) in the innermost open scope
/// of `home` that keeps a backtrace at its level, else in its logger's backtrace if that keeps
/// it. `text` is the thread's record buffer (for a fmt message's or a template's text, its holes
/// redacted by `redact`), `scratch` its scratch buffer. False when not kept: neither keeps it, or
/// a user type threw, or memory ran out.
bool keep_record(ContextHome& home, Buffer& text, Buffer& scratch, const Record& record,
                 std::span<const std::string> redact) noexcept;

/// The store of `logger`'s backtrace, made by its first call (never freed: records may come
/// until exit). Throws std::bad_alloc.
LoggerBacktrace& logger_backtrace_store(LoggerCore& logger);
/// Gives `logger` the backtrace `backtrace` (none: 0 records, or no level below the trigger),
/// dropping what its backtrace before kept. Throws std::bad_alloc (its first backtrace only).
void set_logger_backtrace(ContextHome& home, LoggerCore& logger, const Backtrace& backtrace);
/// Moves what `logger`'s backtrace kept into `out` (empty) when a record at `level` triggers
/// it; false, moving nothing, when there is nothing to write. `out` is then the caller's to
/// write and discard.
bool take_logger_records(const LoggerCore& logger, Level level, BacktraceStore& out) noexcept;

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The last flush of a process that ends on a signal (install_signal_handlers() in signals.cpp
// decides when). It needs three things of the layers below, and nothing else: the async queue
// can be sealed and walked ("visit what a sink has not got yet"), every sink has a mutex that
// can be taken from a handler, and a sink may have a crash hook (Sink::write_on_crash). Both
// paths end holding every sink's mutex, so a logging call that reaches a sink afterwards waits
// there until the process ends, and every call that returned had its record written. Cold.
#pragma once

#include "encode/final_record.hpp"

namespace fieldlog::detail {

/// Sleeps until the process ends. For a thread that met a final path running elsewhere.
[[noreturn]] void park_until_exit() noexcept;

/// The crash path, from a signal handler, with async-signal-safe calls only: seals the async
/// queue; lets the writer thread (when it runs and is not the thread that crashed) hand out what
/// was accepted, for a bounded time; takes every sink's mutex for good (a holder that does not
/// let go in time is passed over); then gives each sink, through write_on_crash, what it has
/// buffered, the accepted records it has not got, and (`fatal_record`) the `fatal` record of
/// `note`, in each format it takes. Sets `note.time`.
void write_final_records(FinalNote& note, bool fatal_record) noexcept;

/// Makes the room the crash path encodes queued records in (an async pipeline's rings hold
/// them as owned copies), once; cold: configure() calls it for an async configuration. A
/// record whose line may exceed that room is not written by the crash path.
void reserve_final_storage() noexcept;

/// Before the process ends by SIGTERM/SIGINT's default action, on a normal thread: seals the
/// async queue, waits until the writer handed out everything accepted, then takes every sink's
/// mutex for good and ends every sink (Sink::begin_close), all at once; sets the alarm(2) the
/// caller armed to `alarm_seconds` past the longest of their bounds; then flushes each sink and
/// calls its crash hook with no records (its last steps before the end).
void flush_and_hold(unsigned alarm_seconds) noexcept;

}  // namespace fieldlog::detail

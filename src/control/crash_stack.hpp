// SPDX-License-Identifier: MIT
// The crashing thread's stack for the `fatal` record (docs/crashes-signals-fork.md, "The stack in
// the fatal record"): walked by the unwinder of the C++ runtime (libgcc's, from the .eh_frame
// tables every module has), each address placed in its module by glibc's lock-free
// _dl_find_object, and named from the module's exported symbols, which are in memory. All of
// it async-signal-safe once prepare_crash_stack() ran. And the uncaught exception std::terminate
// ends the program with, noted by a terminate handler before abort() raises SIGABRT. Cold.
#pragma once

#include "encode/final_record.hpp"

namespace fieldlog::detail {

/// Outside any handler, before one can run: notes the executable's path, makes the unwinder's
/// one-time set-up, and installs the std::terminate handler that notes an uncaught exception
/// (then calls the handler it replaced). Once per process; later calls do nothing.
void prepare_crash_stack();

/// From the crash handler, async-signal-safe: sets `note.frames` to this thread's stack from
/// where the signal struck (the handler's own frames left out), at most kMaxCrashFrames, and
/// `note.exception_type` and `exception_what` when this thread called std::terminate with an
/// exception. The frames stay valid until the process ends.
void note_crash_stack(FinalNote& note) noexcept;

}  // namespace fieldlog::detail

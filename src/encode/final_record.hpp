// SPDX-License-Identifier: MIT
// The `fatal` record of a process that ends on a signal, encoded on the encode side for the
// crash path (src/control/crash.cpp), once per format in use. Async-signal-safe: no heap, no
// lock.
#pragma once

#include "base/buffer.hpp"
#include "base/record.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

/// What a handler knows about the signal that ends the process.
struct FinalNote {
    int signo = 0;
    int code = 0;                   ///< siginfo si_code
    const void* address = nullptr;  ///< faulting address, when `fault`
    bool fault = false;             ///< raised by the CPU (si_code > 0 for SEGV/BUS/FPE/ILL)
    int thread_id = 0;              ///< kernel id of the thread that received it
    Timestamp time{};
};

/// The final record's logger ("fieldlog"). Made on the first call, which install_signal_handlers()
/// makes before any handler can run (a handler may not allocate); never destroyed (a signal may
/// arrive during static destruction).
const LoggerCore& final_record_logger();

/// Calls `use(record, argument)` with the one `fatal` record naming the signal (logger
/// "fieldlog"), made on the stack.
void with_final_record(const FinalNote& note, void (*use)(const Record& record, const void* argument),
                       const void* argument) noexcept;

/// Encodes the one `fatal` record naming the signal (logger "fieldlog") in `options`' format;
/// its thread id is the `tid` member when `options` has thread_id_fact (the crash path's
/// options always do). Uses no heap for it (the record is far below the buffer's inline size).
void encode_final_record(const EncoderOptions& options, Buffer& out, Buffer& scratch,
                         const FinalNote& note) noexcept;

}  // namespace fieldlog::detail

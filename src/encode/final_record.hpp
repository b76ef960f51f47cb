// SPDX-License-Identifier: MIT
// The `fatal` record of a process that ends on a signal, encoded on the encode side for the
// crash path (src/control/crash.cpp), once per format in use. Async-signal-safe: no heap, no
// lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/buffer.hpp"
#include "base/record.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

/// One frame of the crashing thread's stack. The first is where the signal struck; the others
/// are return addresses.
struct CrashFrame {
    std::uintptr_t address = 0;
    std::string_view module;    ///< the executable's or shared library's path; empty when unknown
    std::uintptr_t offset = 0;  ///< `address` in the module's own addresses (what addr2line takes)
    std::string_view function;  ///< the symbol's name as the module exports it; empty when it does not
};

/// The `fatal` record lists at most this many frames, the innermost first, and cuts a module's
/// path and a function's name at kMaxCrashNameSize bytes: the record stays within the record
/// buffer's inline room, so the crash path needs no heap for it.
inline constexpr std::size_t kMaxCrashFrames = 32;
inline constexpr std::size_t kMaxCrashNameSize = 160;

/// What a handler knows about the signal that ends the process.
struct FinalNote {
    int signo = 0;
    int code = 0;                   ///< siginfo si_code
    const void* address = nullptr;  ///< faulting address, when `fault`
    bool fault = false;             ///< raised by the CPU (si_code > 0 for SEGV/BUS/FPE/ILL)
    int thread_id = 0;              ///< kernel id of the thread that received it
    Timestamp time{};
    std::span<const CrashFrame> frames;  ///< the crashing thread's stack, innermost first
    bool frames_cut = false;             ///< the stack had more than kMaxCrashFrames frames
    std::string_view exception_type;     ///< std::terminate's uncaught exception, when there was one
    std::string_view exception_what;
};

/// The final record's logger ("fieldlog"). Made on the first call, which install_signal_handlers()
/// makes before any handler can run (a handler may not allocate); never destroyed (a signal may
/// arrive during static destruction).
const LoggerCore& final_record_logger();

/// Calls `use(record, argument)` with the one `fatal` record naming the signal (logger
/// "fieldlog"), made in storage of its own (only one final path runs). In the `otel` format the
/// frames are the semantic conventions' `exception.stacktrace` text; elsewhere an array.
void with_final_record(const FinalNote& note, Format format, void (*use)(const Record& record, const void* argument),
                       const void* argument) noexcept;

/// Encodes the one `fatal` record naming the signal (logger "fieldlog") in `options`' format;
/// its thread id is the `tid` member when `options` has thread_id_fact (the crash path's
/// options always do). Uses no heap for it (the record is far below the buffer's inline size).
void encode_final_record(const EncoderOptions& options, Buffer& out, Buffer& scratch,
                         const FinalNote& note) noexcept;

}  // namespace fieldlog::detail

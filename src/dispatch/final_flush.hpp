// The last flush of a process that ends on a signal (install_signal_handlers() in
// src/control/signals.cpp decides when). Three pieces live here, on the dispatch side:
//  - the halt gate: once the end has begun, a logging call that reaches the dispatcher never
//    returns, so every call that did return had its record written before the process died;
//  - the `fatal` record naming the signal, written to every sink that takes it (encoded by the
//    FinalNote's encoder, encode/final_record.hpp: dispatch includes no encoder);
//  - the async-signal-safe writes a handler does itself when no writer thread can help.
#pragma once

#include <atomic>

#include "base/buffer.hpp"
#include "dispatch/sink_lock.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

struct Pipeline;

inline std::atomic<bool> g_halting{false};

/// Closes the halt gate: from now on logging calls park in the dispatcher until the process
/// ends. Async-signal-safe. There is no way back; only a process about to die calls it.
inline void halt_logging() noexcept { g_halting.store(true, std::memory_order_seq_cst); }
/// True once halt_logging() ran. seq_cst: the caller's commit (an RMW before it) and the
/// final drain's look at the queue are ordered against the gate.
[[nodiscard]] inline bool halting() noexcept { return g_halting.load(std::memory_order_seq_cst); }
/// Sleeps until the process ends. For a logging call that met the closed gate.
[[noreturn]] void park_until_exit() noexcept;

/// Bumped by install_signal_handlers(); a thread whose copy is older sets up its alternate
/// signal stack on its next record (so a stack overflow on any logging thread is handled).
inline std::atomic<unsigned> g_signal_generation{0};
inline thread_local unsigned t_signal_generation = 0;
/// Gives this thread an alternate signal stack (once; freed when the thread exits) unless it
/// already has one.
void prepare_thread_for_signals() noexcept;
inline void check_thread_for_signals() noexcept {
    if (t_signal_generation != g_signal_generation.load(std::memory_order_relaxed)) [[unlikely]] {
        prepare_thread_for_signals();
    }
}

struct FinalNote;
/// Encodes the `fatal` record `note` describes into `out` in `options`' format, without heap or
/// lock (encode/final_record.hpp has the one the crash path uses: dispatch includes no encoder).
using FinalEncoder = void (*)(const EncoderOptions& options, Buffer& out, Buffer& scratch,
                              const FinalNote& note) noexcept;

/// What a handler knows about the signal that ends the process.
struct FinalNote {
    int signo = 0;
    int code = 0;                   ///< siginfo si_code
    const void* address = nullptr;  ///< faulting address, when `fault`
    bool fault = false;             ///< raised by the CPU (si_code > 0 for SEGV/BUS/FPE/ILL)
    int thread_id = 0;              ///< kernel id of the thread that received it
    Timestamp time{};
    bool fatal_record = true;  ///< false for SIGTERM/SIGINT: flush only
    FinalEncoder encode = nullptr;  ///< encodes the `fatal` record (none written when null)
};

/// Signal path: locks a sink's mutex if it comes free within a bound (a thread that faulted
/// while holding it never lets go). True when locked.
bool lock_for_final(SinkLock& mutex) noexcept;

/// Async-signal-safe flush of `pipeline` by the handler itself: every sink's emergency_flush,
/// then the records still queued (async mode), then the `fatal` record, each through
/// emergency_write. Used when no writer thread can do it (sync mode, or the writer faulted).
void final_flush_from_handler(const Pipeline& pipeline, const FinalNote& note) noexcept;

}  // namespace fieldlog::detail

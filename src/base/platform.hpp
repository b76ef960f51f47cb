// SPDX-License-Identifier: MIT
// The facilities fieldlog takes from Linux, each with a POSIX or standard C++ fallback that a
// port runs (docs/platforms.md has the table), and the architectures' fast paths.
// FIELDLOG_PORTABLE (the CMake option of that name) takes every fallback on Linux too, so that
// a port's code is built and tested here. The sinks' own Linux calls (UDP batches, syslog
// acknowledgements) choose with the same macro.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(__linux__) && !FIELDLOG_PORTABLE
#define FIELDLOG_LINUX_FACILITIES 1
#else
#define FIELDLOG_LINUX_FACILITIES 0
#endif

// The fast paths: the record clock's CPU counter (x86-64's TSC, arm64's generic timer) and
// x86-64's SSE2 (and AVX2) scans of text. FIELDLOG_PORTABLE builds their portable twins
// instead, which other architectures run (arm64 the scans'), so that those are tested here too.
#if (defined(__x86_64__) || defined(__aarch64__)) && !FIELDLOG_PORTABLE
#define FIELDLOG_COUNTER_CLOCK 1
#else
#define FIELDLOG_COUNTER_CLOCK 0
#endif
#if defined(__SSE2__) && !FIELDLOG_PORTABLE
#define FIELDLOG_SSE2_SCANS 1
#else
#define FIELDLOG_SSE2_SCANS 0
#endif

namespace fieldlog::detail {

/// Sleeps while `word` holds `expected`, until wake_all(word), for at most `timeout` (a futex;
/// the fallback: one process-wide condition variable). May wake early: callers look again.
void wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept;
/// Wakes every thread in wait_on(word, …). Its caller changed `word` first.
void wake_all(std::atomic<std::uint32_t>& word) noexcept;

/// Registers the process for process_barrier() (membarrier(2)); false where there is none, and
/// readers then pay for their own fence.
bool register_process_barrier() noexcept;
/// A full memory barrier on every running thread of the process; only after
/// register_process_barrier() said true.
void process_barrier() noexcept;

/// Fills `out` from the system's random source (getrandom(2); the fallback: getentropy(3)).
/// False when it cannot.
bool random_bytes(void* out, std::size_t size) noexcept;

/// The program's short name (glibc's program_invocation_short_name, the BSDs' getprogname()),
/// or "" where the system does not say.
std::string_view program_name() noexcept;
/// OpenTelemetry's service.name where none is given: "unknown_service:" and program_name(), or
/// "unknown_service" when that is "".
std::string unknown_service_name();

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The record path's default clock: system_clock time, read from the CPU's counter between
// anchors (x86-64's time-stamp counter, arm64's generic timer): clock_gettime's vDSO fences its
// counter read and re-reads the kernel's sequence counter, a large share of a short record; a
// bare read overlaps with the work around it (docs/performance-notes.md has the figures).
//
// Each thread anchors to system_clock and re-anchors every millisecond, so a step or a slew of
// the system clock shows within 1 ms; between anchors time advances at the counter's rate,
// calibrated process-wide against CLOCK_MONOTONIC over a baseline that grows with the process
// (on arm64, until that baseline is long enough, at the rate CNTFRQ_EL0 declares).
// Used where the counter can be trusted to run at one rate on every CPU: on x86-64 where the
// kernel keeps time with the TSC (clocksource "tsc") or the CPU declares the counter invariant
// (a VM whose kernel reads kvm-clock); on arm64 always, as the architecture requires of its
// system counter. Elsewhere, and before the first calibration, every call reads system_clock.
// Each re-anchoring also checks that the counter kept CLOCK_MONOTONIC's pace since the last one;
// once it did not (a VM moved to a host whose counter runs at another rate or value, a counter
// stopped or reset, CPUs whose counters differ by more than the check's 50 µs), every thread of
// the process reads system_clock from then on. A reading is never further from system_clock
// than an anchor span: a counter behind its anchor or past the span re-anchors.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/platform.hpp"
#include "fieldlog/timestamp.hpp"

#if FIELDLOG_COUNTER_CLOCK && defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace fieldlog::detail {

#if FIELDLOG_COUNTER_CLOCK
/// The CPU's counter, unfenced: the TSC, or the generic timer's virtual count.
inline std::uint64_t read_counter() noexcept {
#if defined(__x86_64__)
    return __rdtsc();
#else
    std::uint64_t ticks = 0;
    asm volatile("mrs %0, cntvct_el0" : "=r"(ticks));
    return ticks;
#endif
}
#endif

/// Set once a re-anchoring found that the counter lost CLOCK_MONOTONIC's pace: from then on
/// every RecordClock of the process reads system_clock.
inline std::atomic<bool> g_record_counter_distrusted{false};

/// Whether `counted_ticks` at `nanos_per_tick` (32.32 fixed point) kept pace with the
/// `measured_nanos` CLOCK_MONOTONIC advanced meanwhile: within 1000 ppm (NTP slews
/// CLOCK_MONOTONIC by up to 500) plus 50 µs (what two samples may be off by together).
bool counter_kept_pace(std::uint64_t counted_ticks, std::uint64_t nanos_per_tick, std::int64_t measured_nanos) noexcept;

class RecordClock {
public:
    /// How often a thread re-reads system_clock.
    static constexpr std::uint64_t kAnchorNanos = 1'000'000;

    /// The current system_clock time (within the bound above). Owned by one thread.
    Timestamp now() noexcept {
#if FIELDLOG_COUNTER_CLOCK
        const std::uint64_t ticks = read_counter();
        const std::uint64_t elapsed = ticks - anchor_ticks_;
        if (elapsed < span_ticks_) [[likely]] {  // also false when the counter is behind the anchor
            // elapsed < kAnchorNanos worth of ticks: the product stays below 2^52.
            std::uint64_t nanos = anchor_.nanos + ((elapsed * nanos_per_tick_) >> 32);
            std::int64_t seconds = anchor_.seconds;
            if (nanos >= 1'000'000'000) {
                nanos -= 1'000'000'000;
                ++seconds;
            }
            return Timestamp{seconds, static_cast<std::uint32_t>(nanos)};
        }
        return reanchor(ticks);
#else
        return reanchor(0);
#endif
    }

    /// True while readings come from the counter (false: each one reads system_clock).
    [[nodiscard]] bool interpolating() const noexcept { return span_ticks_ != 0; }

private:
    /// Reads system_clock, makes it the new anchor when the counter is usable, and returns it.
    Timestamp reanchor(std::uint64_t ticks) noexcept;

    std::uint64_t span_ticks_ = 0;  ///< ticks until the next anchor; 0: read system_clock
#if FIELDLOG_COUNTER_CLOCK
    std::uint64_t anchor_ticks_ = 0;
    /// Before this counter value the rate cannot be measured yet: system_clock alone is read.
    std::uint64_t calibrate_at_ = 0;
    std::uint64_t nanos_per_tick_ = 0;  ///< 32.32 fixed point
    Timestamp anchor_{};
    /// CLOCK_MONOTONIC and the counter at the last anchor, for the pace check (0: none yet).
    std::uint64_t anchor_monotonic_ticks_ = 0;
    std::int64_t anchor_monotonic_ = 0;
#endif
};

}  // namespace fieldlog::detail

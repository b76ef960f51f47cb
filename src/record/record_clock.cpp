// SPDX-License-Identifier: MIT
// The record clock's cold half: samples of the system clocks against the counter, the
// process-wide origin the counter's rate is measured from, and re-anchoring.
#include "record/record_clock.hpp"

#include <time.h>

#if FIELDLOG_COUNTER_CLOCK && defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <string>

namespace fieldlog::detail {
namespace {

#if FIELDLOG_COUNTER_CLOCK

constexpr std::int64_t kNanosPerSecond = 1'000'000'000;
/// The counter's rate is trusted once measured over this long (a sample's ~30 ns of jitter is
/// then under 1 ppm of the baseline).
constexpr std::int64_t kMinBaselineNanos = 50'000'000;
/// From this baseline on the rate is known well enough (a sample's spread is under 1% of it)
/// to estimate when kMinBaselineNanos will be reached.
constexpr std::int64_t kRoughBaselineNanos = 1'000'000;
/// A sample whose first and last counter reads are further apart than this was interrupted
/// (clock_gettime takes ~100 TSC ticks): it is read again, or not used. Where the counter's rate
/// is declared (arm64), the same limit in time, kMaxSampleNanos.
constexpr std::uint64_t kMaxSampleTicks = 20'000;
constexpr std::uint64_t kMaxSampleNanos = 20'000;
constexpr int kSampleAttempts = 4;

__extension__ using Wide = unsigned __int128;  // 32.32 fixed-point quotients of 64-bit values

/// Both system clocks, each with the counter read around it.
struct Sample {
    std::uint64_t wall_ticks = 0;
    Timestamp wall{};
    std::uint64_t monotonic_ticks = 0;
    std::int64_t monotonic = 0;  ///< CLOCK_MONOTONIC in ns: the rate of system_clock, without its steps
    std::uint64_t spread = ~std::uint64_t{0};  ///< ticks from the first counter read to the last
};

Sample take_sample(std::uint64_t max_spread) noexcept {
    Sample best;
    for (int attempt = 0; attempt < kSampleAttempts && best.spread > max_spread; ++attempt) {
        timespec wall{};
        timespec monotonic{};
        const std::uint64_t t0 = read_counter();
        ::clock_gettime(CLOCK_REALTIME, &wall);
        const std::uint64_t t1 = read_counter();
        ::clock_gettime(CLOCK_MONOTONIC, &monotonic);
        const std::uint64_t t2 = read_counter();
        if (t2 - t0 < best.spread) {
            best = Sample{t0 + (t1 - t0) / 2, Timestamp(wall.tv_sec, static_cast<std::uint32_t>(wall.tv_nsec)),
                          t1 + (t2 - t1) / 2, monotonic.tv_sec * kNanosPerSecond + monotonic.tv_nsec, t2 - t0};
        }
    }
    return best;
}

#if defined(__x86_64__)

/// True when the kernel keeps time with the TSC: then it has found the counter invariant and
/// synchronised across CPUs, which is what reading it on any CPU between anchors needs.
bool kernel_clock_is_tsc() {
    std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string name;
    return static_cast<bool>(source >> name) && name == "tsc";
}

/// True when the CPU declares its counter invariant (CPUID leaf 0x80000007, EDX bit 8: one rate
/// in every power state), as virtual machines whose kernel keeps time with a paravirtual clock
/// (kvm-clock) often do. Whether it is also synchronised across CPUs and steady across a
/// migration is what the pace check at each anchor finds out (record_clock.hpp).
bool counter_is_invariant() noexcept {
    unsigned eax = 0;
    unsigned ebx = 0;
    unsigned ecx = 0;
    unsigned edx = 0;
    constexpr unsigned kInvariantCounter = 1U << 8;
    return __get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) != 0 && (edx & kInvariantCounter) != 0;
}

bool counter_trusted() { return kernel_clock_is_tsc() || counter_is_invariant(); }

/// The TSC's rate is not declared anywhere a program can read: it is measured.
std::uint64_t declared_ticks_per_second() noexcept { return 0; }

#else

/// The architecture requires the generic timer's system counter to run at one fixed rate, common
/// to every CPU; the pace check at each anchor catches a system that breaks that.
bool counter_trusted() { return true; }

/// CNTFRQ_EL0: the rate firmware set for the counter (0 if it set none).
std::uint64_t declared_ticks_per_second() noexcept {
    std::uint64_t rate = 0;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(rate));
    return rate;
}

#endif

/// Where the counter's rate is measured from: taken when the library loads, so that the rate
/// is known by the time most programs log. Unusable for a record logged from another library's
/// static initialiser before this one ran.
struct Origin {
    bool usable = false;
    Sample sample;
    /// The declared rate, used until the measured one is trusted (0: none declared).
    std::uint64_t declared_nanos_per_tick = 0;
    /// The largest spread of a sample's counter reads that is not an interruption.
    std::uint64_t max_sample_ticks = kMaxSampleTicks;
};

Origin take_origin() {
    if (!counter_trusted()) return Origin{};
    Origin origin;
    if (const std::uint64_t rate = declared_ticks_per_second(); rate != 0) {
        origin.declared_nanos_per_tick = static_cast<std::uint64_t>((static_cast<Wide>(kNanosPerSecond) << 32) / rate);
        origin.max_sample_ticks = std::max<std::uint64_t>(kMaxSampleNanos * rate / kNanosPerSecond, 2);
    }
    origin.sample = take_sample(origin.max_sample_ticks);
    origin.usable = origin.sample.spread <= origin.max_sample_ticks;
    return origin;
}

const Origin g_origin = take_origin();

#endif

}  // namespace

bool counter_kept_pace(std::uint64_t counted_ticks, std::uint64_t nanos_per_tick,
                       std::int64_t measured_nanos) noexcept {
    // In double: 53 bits resolve a nanosecond over a century, far finer than the tolerance.
    constexpr double kSampleErrorNanos = 50'000;
    constexpr double kRateTolerance = 1e-3;
    const double counted = static_cast<double>(counted_ticks) * (static_cast<double>(nanos_per_tick) / 4294967296.0);
    const double measured = static_cast<double>(measured_nanos);
    return measured >= 0 && std::abs(counted - measured) <= kSampleErrorNanos + measured * kRateTolerance;
}

Timestamp RecordClock::reanchor([[maybe_unused]] std::uint64_t ticks) noexcept {
#if FIELDLOG_COUNTER_CLOCK
    span_ticks_ = 0;
    if (!g_origin.usable || ticks < calibrate_at_ || g_record_counter_distrusted.load(std::memory_order_relaxed)) {
        return Timestamp(std::chrono::system_clock::now());
    }
    const Sample now = take_sample(g_origin.max_sample_ticks);
    const std::int64_t baseline = now.monotonic - g_origin.sample.monotonic;
    const std::uint64_t since_origin = now.monotonic_ticks - g_origin.sample.monotonic_ticks;
    if (now.spread > g_origin.max_sample_ticks || now.monotonic_ticks <= g_origin.sample.monotonic_ticks) {
        return now.wall;  // not a trustworthy anchor: the next call samples again
    }
    std::uint64_t nanos_per_tick = g_origin.declared_nanos_per_tick;
    if (baseline >= kMinBaselineNanos) {
        nanos_per_tick = static_cast<std::uint64_t>((static_cast<Wide>(baseline) << 32) / since_origin);
    } else if (nanos_per_tick == 0) {
        // Sampling again before the baseline is long enough would only cost: estimate when it is.
        if (baseline >= kRoughBaselineNanos) {
            calibrate_at_ = g_origin.sample.monotonic_ticks +
                            static_cast<std::uint64_t>(static_cast<Wide>(since_origin) * kMinBaselineNanos /
                                                       static_cast<std::uint64_t>(baseline));
        }
        return now.wall;
    }
    if (anchor_monotonic_ticks_ != 0 &&
        !counter_kept_pace(now.monotonic_ticks - anchor_monotonic_ticks_, nanos_per_tick_,
                           now.monotonic - anchor_monotonic_)) {
        g_record_counter_distrusted.store(true, std::memory_order_relaxed);
        return now.wall;
    }
    nanos_per_tick_ = nanos_per_tick;
    if (nanos_per_tick_ == 0) return now.wall;
    span_ticks_ = static_cast<std::uint64_t>((static_cast<Wide>(kAnchorNanos) << 32) / nanos_per_tick_);
    anchor_ticks_ = now.wall_ticks;
    anchor_ = now.wall;
    anchor_monotonic_ticks_ = now.monotonic_ticks;
    anchor_monotonic_ = now.monotonic;
    return now.wall;
#else
    return Timestamp(std::chrono::system_clock::now());
#endif
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// A per-logger sampler (Config::sampling; zap's sampler): decides, before a record is encoded,
// whether it is written. Counters are keyed by a hash of the logger, the level and the message
// text into a fixed table, so memory is bounded and two keys may share a counter (then they
// share their allowance, as in zap). Lock-free; no heap after construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "fieldlog/config.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/logger.hpp"

namespace fieldlog::detail {

class Sampler {
public:
    /// Counters in the table: its memory is kBuckets × 24 bytes.
    static constexpr std::size_t kBuckets = 4096;

    explicit Sampler(const SamplingConfig& config);

    struct Decision {
        bool write = false;
        std::uint64_t suppressed = 0;  ///< kept back under this counter since it last wrote one
    };
    /// The decision for one record at `now_nanos` (any clock that does not step back much)
    /// that says `carried` records were kept back before it (a rate-limited call site): kept
    /// back itself, it passes them on to the next record this counter writes.
    [[nodiscard]] Decision decide(const LoggerCore& logger, Level level, std::string_view message,
                                  std::int64_t now_nanos, std::uint64_t carried) noexcept;

private:
    struct Counter {
        std::atomic<std::int64_t> reset_at{0};
        std::atomic<std::uint64_t> count{0};
        std::atomic<std::uint64_t> suppressed{0};
    };

    const SamplingConfig config_;
    const std::unique_ptr<Counter[]> counters_;
};

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// Backtraces: records below a logger's level, kept in their typed form instead of dropped,
// and written only when a record at a trigger level follows: the debug story of a request
// that failed, at the cost of a copy for the ones that did not. Per request (a Scope's, see
// scope.hpp) or per logger (Logger::keep_backtrace, logger.hpp).
#pragma once

#include <cstdint>

#include "fieldlog/level.hpp"

namespace fieldlog {

/// What a backtrace keeps and when it writes it. Memory: at most `records` kept records, one
/// after the other in 4 KiB chunks of the logging thread's context pool (about 160 bytes a
/// record, 40 more a field, plus its strings; one larger than a chunk, or with objects, arrays
/// or user types, takes a block of its own), given back when they are written or discarded.
struct Backtrace {
    /// Kept at most; one more lets the oldest go (discarded).
    std::uint32_t records = 32;
    /// The lowest level kept. Records below the logger's level and at or above this are kept.
    Level keep_from = Level::debug;
    /// A record at or above this writes the kept records first: for a Scope's backtrace, one
    /// logged on the scope's thread while it is open; for a logger's, one of that logger.
    Level trigger = Level::error;

    bool operator==(const Backtrace&) const = default;
};

}  // namespace fieldlog

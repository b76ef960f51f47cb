// What an encoder needs to write one record. Everything is borrowed for the duration of the
// encode call: the message and fields from the call site, the pre-encoded bound and scope
// bytes from the logger and the thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "encode/members.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

/// How far past the bytes they commit the encoders may write (the header's block copies of the
/// level member and of the logger's name, 16-byte stores while escaping): bytes beyond that are
/// left as they were.
inline constexpr std::size_t kEncoderOverreach = 64;

/// Where a record's bound fields may stay in the buffer from one record to the next (JSON only;
/// record/resident_bound.hpp decides): at `offset` (0: not kept), and whether they are there.
struct ResidentBound {
    std::uint32_t offset = 0;
    bool present = false;
};

struct RecordInput {
    Timestamp time;
    Level level;
    const LoggerName& logger;
    const Message& message;
    Segment bound;  ///< already encoded in this format, with leading separators
    Segment scope;  ///< likewise
    std::span<const Field> fields;
    ResidentBound resident{};
};

}  // namespace fieldlog::detail

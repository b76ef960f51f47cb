// What an encoder needs to write one record. Everything is borrowed for the duration of the
// encode call: the message and fields from the call site, the encoded bound and scope fields
// from the context nodes of the logger and the thread.
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

struct RecordInput {
    Timestamp time;
    Level level;
    const LoggerName& logger;
    const Message& message;
    const EncodedContext* bound;  ///< already encoded in this format; null: none
    const EncodedContext* scope;  ///< likewise
    std::span<const Field> fields;
};

}  // namespace fieldlog::detail

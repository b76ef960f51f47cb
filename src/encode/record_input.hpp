// SPDX-License-Identifier: MIT
// What an encoder needs to write one record. Everything is borrowed for the duration of the
// encode call: the message and fields from the call site (or from the record's typed copy in
// an async ring), the encoded bound and scope fields from the context nodes of the logger and
// the thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/thread_id.hpp"
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
    int thread_id = 0;  ///< of the thread that logged it; 0: the encoding thread
};

/// The kernel id of the thread that logged `record`.
inline int record_thread_id(const RecordInput& record) noexcept {
    return record.thread_id != 0 ? record.thread_id : cached_thread_id();
}

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// The one shape of a record: a logging call past the level check. The record path makes it once
// and lends it to everything it passes: sync dispatch encodes it once per format in use, sinks that
// read parts read it, and an async ring or a backtrace keeps an owned copy of it
// (record/owned_record.hpp), from which the same shape is made again when the copy is written.
//
//   call site ─► Record ─► encoders (with the context's encoding for the channel) ─► sinks
//                      └─► owned copy (ring, backtrace) ─► Record again ─► the same path
#pragma once

#include <span>

#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

struct ContextNode;

/// Everything it refers to is borrowed for the call that handles it.
struct Record {
    Timestamp time;
    Level level;
    const LoggerCore& logger;
    const Message& message;  ///< plain text or fmt arguments; where() is the call site
    ContextNode* bound;      ///< the logger's with() context; null: none
    ContextNode* scope;      ///< the scopes open on the logging thread when it logged; null: none
    std::span<const Field> fields;  ///< the call's own
    int thread_id = 0;              ///< of the thread that logged it; 0: the thread handling it now
};

}  // namespace fieldlog::detail

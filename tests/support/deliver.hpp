// SPDX-License-Identifier: MIT
// Hands records to a sink the way the dispatcher does (under its mutex, counted, with the
// exception policy), for tests that drive one sink directly.
#pragma once

#include <mutex>
#include <span>

#include "dispatch/sink_calls.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog_test {

inline void deliver(fieldlog::Sink& sink, const fieldlog::RecordView& record) {
    const std::lock_guard lock(sink.mutex());
    fieldlog::detail::deliver(sink, record);
}

inline void deliver(fieldlog::Sink& sink, std::span<const fieldlog::RecordView> records) {
    const std::lock_guard lock(sink.mutex());
    fieldlog::detail::deliver_batch(sink, records);
}

}  // namespace fieldlog_test

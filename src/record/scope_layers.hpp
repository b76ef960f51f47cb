// SPDX-License-Identifier: MIT
// The open scopes of one thread, as layers in its ContextHome (context_pool.hpp): what Scope
// opens and closes, what the record path reads (home.top), and the queue through which a
// scope closed away from its thread's record path reaches it.
#pragma once

#include <atomic>

#include "record/context_pool.hpp"

namespace fieldlog::detail {

class Buffer;

/// Closes the scopes queued for this thread. MUST: the owning thread, not inside a logging call.
void close_queued_scopes(ContextHome& home, Buffer& scratch) noexcept;
/// The same when any are queued. Inline: every record asks first.
inline void close_queued(ContextHome& home, Buffer& scratch) noexcept {
    if (home.remote_closes.load(std::memory_order_relaxed) != nullptr) [[unlikely]]
        close_queued_scopes(home, scratch);
}
/// Closes every scope open on the thread (it is exiting).
void close_all_scopes(ContextHome& home, Buffer& scratch) noexcept;

}  // namespace fieldlog::detail

// fork(): the atfork handlers that keep the library usable in a child and lose nothing in the
// parent. Registered by the first configure(). Cold path.
#pragma once

namespace fieldlog::detail {

/// Registers the handlers once (pthread_atfork); the first configure() calls it. Before a fork
/// they take the configuration, thread-registry and sink locks, flush the sinks and run the
/// participants' `before`, so the child copies no half-written state and no buffered bytes of
/// the parent's; in the child the async writer drops the parent's queued records and restarts
/// its thread with the child's first record. One set of handlers, so one lock order.
void register_fork_handlers();

/// Adds functions the handlers call after taking the library's locks (before fork()) and
/// first thing in the parent and the child: for parts with locks of their own that are taken
/// under the configuration lock (the sinks' background tick). Registers the handlers if need
/// be. At most 8 participants.
void add_fork_participant(void (*before)(), void (*in_parent)(), void (*in_child)());

}  // namespace fieldlog::detail

// SPDX-License-Identifier: MIT
// fork(): the library's atfork hooks, which keep it usable in a child and lose nothing in the
// parent. Given to the one set of handlers (base/fork_hooks.hpp) by the first configure().
// Cold path.
#pragma once

namespace fieldlog::detail {

/// Gives the library's hooks to the atfork handlers once (base/fork_hooks.hpp); the first
/// configure() calls it. Before a fork they take the configuration, thread-registry and sink
/// locks and flush the sinks (then the participants', e.g. the sinks' ticker, run), so the
/// child copies no half-written state and no buffered bytes of the parent's; in the child the
/// async writer drops the parent's queued records and restarts its thread with the child's
/// first record.
void register_fork_handlers();

}  // namespace fieldlog::detail

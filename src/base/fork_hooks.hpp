// SPDX-License-Identifier: MIT
// fork(): the library's one set of atfork handlers, below every layer so that any part with
// state a child must not inherit half-done can take part: src/control/fork.cpp gives the
// library's own hooks (configuration, thread-registry and sink locks), base/ticker.cpp adds
// the sinks' background tick. One set of handlers, so one lock order. Cold path.
#pragma once

namespace fieldlog::detail {

/// Sets the library's own hooks (src/control/fork.cpp does, once): before fork() its `before`
/// runs first, after it its `in_parent` / `in_child` run last. Registers the handlers
/// (pthread_atfork) if need be. Takes none of the locks the hooks take, so it may be called
/// while holding them (configure() does, under the configuration lock).
void set_library_fork_hooks(void (*before)(), void (*in_parent)(), void (*in_child)());

/// Adds functions the handlers call after the library's `before` (before fork()) and first
/// thing in the parent and the child (in the reverse order of adding): for parts with locks of
/// their own that are taken under the configuration lock (the sinks' background tick).
/// `before` and `in_parent` may be null: parts that only repair the child.
/// Registers the handlers if need be. At most 8 participants. Called when the library loads
/// (a namespace-scope initializer), never from a function-local static's initializer on a
/// thread's first use: a fork() meanwhile leaves the child that static half made, and its
/// first use in the child waits forever for a thread that is not there.
void add_fork_participant(void (*before)(), void (*in_parent)(), void (*in_child)());

}  // namespace fieldlog::detail

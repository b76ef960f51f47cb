// SPDX-License-Identifier: MIT
// Each thread that logs gets an alternate signal stack when it first logs, so the crash path's
// handler (installed with SA_ONSTACK) also runs after a stack overflow on that thread. Set up
// once per thread (not per record); freed when the thread exits. Below every layer.
#pragma once

namespace fieldlog::detail {

/// Gives this thread a 64 KiB alternate signal stack (mapped, untouched until a handler runs on
/// it) unless it has one already. Cold; never fails loudly (without it a stack overflow on this
/// thread is not handled).
void give_thread_a_signal_stack() noexcept;

}  // namespace fieldlog::detail

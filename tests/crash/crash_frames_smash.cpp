// SPDX-License-Identifier: MIT
// The `smashed` case of crash_frames_child.cpp, built with frame pointers: its caller's saved
// frame pointer overwritten before the fault, so that the unwinder, which finds the caller's
// frame through it, reads memory that is not there. The caller allocates on its stack at run
// time, so that its frame is found through the frame pointer on every architecture (arm64's
// unwind tables otherwise find it from the stack pointer, and the walk would go on).
#include "crash_frames_smash.hpp"

namespace crash_site {

[[gnu::noinline]] void smash_and_fault(int* page) {
    auto* const saved_frame_pointer = static_cast<void* volatile*>(__builtin_frame_address(0));
    *saved_frame_pointer = reinterpret_cast<void*>(0x10);  // a page never mapped
    *static_cast<volatile int*>(page) = 5;                 // crash site: smashed
}

[[gnu::noinline]] void enter_smashed(int* page) {
    auto* const scratch = static_cast<volatile char*>(__builtin_alloca(page != nullptr ? 16 : 32));
    scratch[0] = 0;
    smash_and_fault(page);
}

}  // namespace crash_site

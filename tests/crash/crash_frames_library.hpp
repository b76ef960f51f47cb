// SPDX-License-Identifier: MIT
// The shared library of tests/crash/crash_frames_child.cpp: a function that faults, so that the
// `fatal` record has a frame in a module other than the executable.
#pragma once

namespace crash_library {

/// Stores to `page`, which the process may not write.
[[gnu::visibility("default")]] void fault_in_library(int* page);

}  // namespace crash_library

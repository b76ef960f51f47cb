// SPDX-License-Identifier: MIT
#include "crash_frames_library.hpp"

namespace crash_library {

[[gnu::noinline]] void fault_in_library(int* page) {
    *static_cast<volatile int*>(page) = 4;  // crash site: library
}

}  // namespace crash_library

// SPDX-License-Identifier: MIT
// The thread registry (see thread_registry.hpp): one per copy of the library, made on first use.
#include "record/thread_registry.hpp"

namespace fieldlog::detail {

ThreadRegistry& thread_registry() noexcept {
    static ThreadRegistry* const instance = new ThreadRegistry();  // never destroyed: see the header
    return *instance;
}

}  // namespace fieldlog::detail

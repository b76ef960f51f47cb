// SPDX-License-Identifier: MIT
// One copy of the library per process: a module that links fieldlog statically has a State of
// its own, so two such modules in one process log through two configurations. Cold path.
#pragma once

namespace fieldlog::detail {

/// Claims this process's name for the library's state (instance.cpp says how), which the
/// kernel frees when the process ends; a second copy that finds the name taken says so in one
/// stderr line. Called once, when the State is made.
void announce_instance() noexcept;

}  // namespace fieldlog::detail

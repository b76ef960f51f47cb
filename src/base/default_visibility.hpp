// SPDX-License-Identifier: MIT
// Included first in every file of the library (-include, CMakeLists.txt). fieldlog is compiled
// with hidden visibility, which would also make hidden the fmt template code instantiated here;
// linked statically, such a hidden copy wins over the program's own one, which the program then
// stops exporting, and fmt's shared library binds elsewhere. Declared here first, under default
// visibility, fmt's templates keep it, and only their instances over fieldlog's types are hidden.
// A new fmt header used by the library goes here too.
#pragma once

#pragma GCC visibility push(default)
#include <fmt/compile.h>
#include <fmt/format.h>
#pragma GCC visibility pop

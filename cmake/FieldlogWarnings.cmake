# SPDX-License-Identifier: MIT
# Our own code builds warning-free; dependencies keep their own flags. Options structs are
# meant to be filled with designated initialisers that name only what differs from the
# defaults, which g++ 12's -Wmissing-field-initializers (part of -Wextra) flags wrongly.
function(fieldlog_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror -Wno-missing-field-initializers)
endfunction()

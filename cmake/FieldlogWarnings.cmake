# SPDX-License-Identifier: MIT
# Our own code builds warning-free; dependencies keep their own flags. Options structs are
# meant to be filled with designated initialisers that name only what differs from the
# defaults, which g++ 12's -Wmissing-field-initializers (part of -Wextra) flags wrongly.
# -Werror only where fieldlog is the project built (FIELDLOG_WARNINGS_AS_ERRORS): in someone
# else's build a newer compiler's new warning must not stop theirs.
function(fieldlog_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  if(FIELDLOG_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

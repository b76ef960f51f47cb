# Our own code builds warning-free; dependencies keep their own flags.
function(fieldlog_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endfunction()

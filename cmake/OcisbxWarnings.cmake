function(ocisbx_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wformat=2 -Wstrict-prototypes
    -Wmissing-prototypes -Wold-style-definition -Wpointer-arith -Wcast-qual
    -Wvla -Wnull-dereference -Wundef -Wwrite-strings)
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wlogical-op -Wduplicated-cond)
  endif()
  if(OCISBX_WERROR OR DEFINED ENV{OCISBX_WERROR})
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

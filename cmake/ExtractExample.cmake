# C examples kept in Markdown, built so they cannot rot.
#
# In the Markdown file, the line right before the example's fence names it:
#
#   <!-- example: NAME -->
#   ```c
#   ...
#   ```
#
# ocisbx_doc_example(NAME MD_FILE MARKER) extracts the block marked MARKER
# from MD_FILE into ${PROJECT_BINARY_DIR}/doc_examples/NAME.c at build time
# (again whenever the Markdown changes) and builds the executable target
# doc_example_NAME from it against the public headers and the shared library,
# as examples/ are. Tests that run it are the caller's.
#
# The same file, run as a script (cmake -DMD=... -DMARKER=... -DOUT=... -P
# ExtractExample.cmake), does the extraction: a missing marker, a marker not
# followed by a ```c fence, or a block that never ends fails the build.

if(CMAKE_SCRIPT_MODE_FILE)
  if(NOT MD OR NOT MARKER OR NOT OUT)
    message(FATAL_ERROR "ExtractExample.cmake: give -DMD=<file> -DMARKER=<name> -DOUT=<file>")
  endif()
  file(READ "${MD}" text)
  set(tag "<!-- example: ${MARKER} -->")
  string(FIND "${text}" "${tag}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${MD}: no line ${tag}")
  endif()
  string(LENGTH "${tag}" tag_len)
  math(EXPR at "${at} + ${tag_len}")
  string(SUBSTRING "${text}" ${at} -1 rest)
  # nothing but the end of the marker's line between it and the fence
  if(NOT rest MATCHES "^[ \t]*\r?\n```c[ \t]*\r?\n")
    message(FATAL_ERROR "${MD}: ${tag} must be followed by a line ```c")
  endif()
  string(LENGTH "${CMAKE_MATCH_0}" fence_len)
  string(SUBSTRING "${rest}" ${fence_len} -1 rest)
  string(FIND "${rest}" "\n```" end)
  if(end LESS 0)
    message(FATAL_ERROR "${MD}: the block after ${tag} has no closing ```")
  endif()
  math(EXPR end "${end} + 1")
  string(SUBSTRING "${rest}" 0 ${end} code)
  # written only when it changed, so an unrelated edit of the page rebuilds nothing
  set(old "")
  if(EXISTS "${OUT}")
    file(READ "${OUT}" old)
  endif()
  if(NOT old STREQUAL code)
    file(WRITE "${OUT}" "${code}")
  endif()
  return()
endif()

set(_ocisbx_extract_example_script ${CMAKE_CURRENT_LIST_FILE})

function(ocisbx_doc_example name md marker)
  set(out ${PROJECT_BINARY_DIR}/doc_examples/${name}.c)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/doc_examples
    COMMAND ${CMAKE_COMMAND} -DMD=${md} -DMARKER=${marker} -DOUT=${out} -P ${_ocisbx_extract_example_script}
    DEPENDS ${md} ${_ocisbx_extract_example_script}
    COMMENT "Extracting the example ${marker} from ${md}")
  add_executable(doc_example_${name} ${out})
  set_target_properties(doc_example_${name} PROPERTIES OUTPUT_NAME ${name}
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/doc_examples)
  target_link_libraries(doc_example_${name} PRIVATE ocisbx)
  ocisbx_warnings(doc_example_${name})
endfunction()

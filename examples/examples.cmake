# The examples' own build rules (cmake/OcisbxExamples.cmake builds one
# program per examples/*.c into build/examples/ and includes this file),
# then, with OCISBX_BUILD_TESTS, their tests: each runs against a fresh local
# test tenancy (run-with-tenancy.sh), label "example"; checks.sh holds the
# checks.

# agent_loop's built-in script: examples/agent_loop_default.json is the one
# source, compiled in as a byte array (regenerated when the JSON changes).
set(_ocisbx_agent_json ${PROJECT_SOURCE_DIR}/examples/agent_loop_default.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_ocisbx_agent_json})
file(READ ${_ocisbx_agent_json} _ocisbx_agent_hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _ocisbx_agent_bytes "${_ocisbx_agent_hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n    " _ocisbx_agent_bytes "${_ocisbx_agent_bytes}")
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/examples/generated/agent_loop_default.h CONTENT
"/* Generated from examples/agent_loop_default.json by examples/examples.cmake: do not edit. */
static const unsigned char agent_loop_default_json[] = {
    ${_ocisbx_agent_bytes}0x00};
" @ONLY)
target_include_directories(example_agent_loop PRIVATE ${PROJECT_BINARY_DIR}/examples/generated)
target_link_libraries(example_agent_loop PRIVATE PkgConfig::CJSON)

# engine_libuv drives the engine from a libuv loop (skipped by
# cmake/OcisbxExamples.cmake when libuv is missing).
if(TARGET example_engine_libuv)
  target_link_libraries(example_engine_libuv PRIVATE PkgConfig::LIBUV)
endif()

# ---- the tests (they need the emulator and the test fixtures) ----
if(NOT OCISBX_BUILD_TESTS)
  return()
endif()

set(_ocisbx_example_runner ${PROJECT_SOURCE_DIR}/examples/run-with-tenancy.sh)
set(_ocisbx_example_checks ${PROJECT_SOURCE_DIR}/examples/checks.sh)
set(_ocisbx_example_tests example_sandbox_quickstart example_demo)
add_test(NAME example_sandbox_quickstart
  COMMAND bash ${_ocisbx_example_runner} ${PROJECT_BINARY_DIR} $<TARGET_FILE:example_sandbox_quickstart>)
add_test(NAME example_demo COMMAND ${CMAKE_COMMAND} -E env BUILD_DIR=${PROJECT_BINARY_DIR}
  bash ${PROJECT_SOURCE_DIR}/scripts/demo-run)
foreach(check hello_sandbox agent_loop agent_loop_local agent_loop_refused agent_loop_interrupted application_managed
        application_managed_sandbox_delete_fails application_managed_session_delete_fails connect_extend
        engine_libuv engine_libuv_same_results)
  if(check MATCHES "^engine_libuv" AND NOT TARGET example_engine_libuv)
    continue()
  endif()
  add_test(NAME example_${check} COMMAND bash ${_ocisbx_example_checks} ${check} ${PROJECT_BINARY_DIR})
  list(APPEND _ocisbx_example_tests example_${check})
endforeach()
set_tests_properties(${_ocisbx_example_tests} PROPERTIES LABELS example TIMEOUT 300)

# The C example of docs/harness.md, extracted at build time, run on a fresh
# local directory (as root, one not owned by root: the local backend wants it).
include(${PROJECT_SOURCE_DIR}/cmake/ExtractExample.cmake)
ocisbx_doc_example(harness_example ${PROJECT_SOURCE_DIR}/docs/harness.md harness_example)
add_test(NAME example_harness_doc COMMAND sh -c
  "d=$(mktemp -d) && { [ \"$(id -u)\" != 0 ] || chown 65534:65534 \"$d\"; } && \"$1\" \"$d\" > \"$d.out\"; st=$?; cat \"$d.out\"; \
grep -q 'hello from the workspace' \"$d.out\" && grep -q 'token=\\[REDACTED\\]' \"$d.out\" && grep -q '\"code\":\"denied\"' \"$d.out\" \
&& grep -q '4 evidence records' \"$d.out\"; g=$?; rm -rf \"$d\" \"$d.out\"; [ $st = 0 ] && [ $g = 0 ]"
  sh $<TARGET_FILE:doc_example_harness_example>)
set_tests_properties(example_harness_doc PROPERTIES LABELS example TIMEOUT 120)

# The C example of README.md ("A first program"), extracted and run the same
# way: one exec through the harness, its result JSON printed.
ocisbx_doc_example(readme_example ${PROJECT_SOURCE_DIR}/README.md readme_example)
add_test(NAME example_readme COMMAND sh -c
  "d=$(mktemp -d) && { [ \"$(id -u)\" != 0 ] || chown 65534:65534 \"$d\"; } && \"$1\" \"$d\" > \"$d.out\"; st=$?; cat \"$d.out\"; \
grep -q 'hello from the workspace' \"$d.out\" && grep -q '\"exit_code\":0' \"$d.out\"; g=$?; rm -rf \"$d\" \"$d.out\"; [ $st = 0 ] && [ $g = 0 ]"
  sh $<TARGET_FILE:doc_example_readme_example>)
set_tests_properties(example_readme PROPERTIES LABELS example TIMEOUT 120)

# agent_chat talks to a model's API itself (libcurl, cJSON): the library's
# core stays free of any model API. Its tests (it_agent_chat) run it against
# a fake model server of the test suite.
target_link_libraries(example_agent_chat PRIVATE PkgConfig::CJSON PkgConfig::CURL)
add_dependencies(it_agent_chat example_agent_chat)

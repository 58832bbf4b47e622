# Each example and the demo run against a fresh local test tenancy.
set(_ocisbx_example_runner ${PROJECT_SOURCE_DIR}/examples/run-with-tenancy.sh)
add_test(NAME example_sandbox_quickstart
  COMMAND bash ${_ocisbx_example_runner} ${PROJECT_BINARY_DIR} $<TARGET_FILE:example_sandbox_quickstart>)
add_test(NAME example_demo COMMAND ${CMAKE_COMMAND} -E env BUILD_DIR=${PROJECT_BINARY_DIR}
  bash ${PROJECT_SOURCE_DIR}/scripts/demo-run)
set_tests_properties(example_sandbox_quickstart example_demo PROPERTIES LABELS example TIMEOUT 300 RUN_SERIAL TRUE)

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

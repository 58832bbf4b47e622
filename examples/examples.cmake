# Each example and the demo run against a fresh local test tenancy.
set(_ocisbx_example_runner ${PROJECT_SOURCE_DIR}/examples/run-with-tenancy.sh)
add_test(NAME example_sandbox_quickstart
  COMMAND bash ${_ocisbx_example_runner} ${PROJECT_BINARY_DIR} $<TARGET_FILE:example_sandbox_quickstart>)
add_test(NAME example_demo COMMAND ${CMAKE_COMMAND} -E env BUILD_DIR=${PROJECT_BINARY_DIR}
  bash ${PROJECT_SOURCE_DIR}/scripts/demo-run)
set_tests_properties(example_sandbox_quickstart example_demo PROPERTIES LABELS example TIMEOUT 300 RUN_SERIAL TRUE)

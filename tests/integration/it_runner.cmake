# it_runner drives src/emulator/runner.c directly (no HTTP): it compiles that
# one file in, so a half-written server file cannot break this test's build.
if(TARGET it_runner)
  target_sources(it_runner PRIVATE ${PROJECT_SOURCE_DIR}/src/emulator/runner.c)
  set_tests_properties(it_runner PROPERTIES SKIP_RETURN_CODE 77)
endif()

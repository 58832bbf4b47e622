# Skipped (77) only when bubblewrap is not installed.
if(TARGET it_emulator_isolation)
  set_tests_properties(it_emulator_isolation PROPERTIES SKIP_RETURN_CODE 77)
endif()

# it_sys_proc drives src/sys/proc.h directly (no HTTP), linked to the library.
# Skipped (77) only when bubblewrap is not installed.
if(TARGET it_sys_proc)
  set_tests_properties(it_sys_proc PROPERTIES SKIP_RETURN_CODE 77)
endif()

# it_emulator_limits runs a fork loop up to a shape's process limit; the
# limit (RLIMIT_NPROC) counts every process of the sandbox uid, so nothing
# else of this build's tests runs meanwhile.
if(TARGET it_emulator_limits)
  set_tests_properties(it_emulator_limits PROPERTIES RUN_SERIAL TRUE)
endif()

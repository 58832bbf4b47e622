# it_emulator_limits runs a fork loop and a fork bomb up to a shape's process
# limit (per sandbox uid as root, per user otherwise) and fills a disk: the
# CPU it burns would slow other tests' timings, so nothing else of this
# build's tests runs meanwhile.
if(TARGET it_emulator_limits)
  set_tests_properties(it_emulator_limits PROPERTIES RUN_SERIAL TRUE)
endif()

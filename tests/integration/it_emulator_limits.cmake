# it_emulator_limits is two CTest entries (par_run.h's OCISBX_TEST_CASE and
# OCISBX_TEST_SKIP). test_shape_limits runs a fork loop and test_sandbox_uids
# a fork bomb up to a shape's process limit, counted per sandbox uid as root
# (per user otherwise): every tenancy gives its sandboxes the same uids from
# 200000 up, so another test's sandbox could share that count, and the CPU
# they burn would slow other tests' timings. These two are
# it_emulator_limits_processes, one after the other, with nothing else of
# this build's tests meanwhile; the others (a disk filled to a shape's
# workspace limit, ptrace, the config's checks) run side by side as
# it_emulator_limits, beside other tests.
if(TARGET it_emulator_limits)
  set_tests_properties(it_emulator_limits PROPERTIES
    ENVIRONMENT "OCISBX_TEST_SKIP=test_shape_limits:test_sandbox_uids")
  add_test(NAME it_emulator_limits_processes COMMAND it_emulator_limits WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
  set_tests_properties(it_emulator_limits_processes PROPERTIES LABELS integration TIMEOUT 600 RUN_SERIAL TRUE
    ENVIRONMENT "OCISBX_TEST_CASE=test_shape_limits:test_sandbox_uids;OCISBX_TEST_JOBS=1")
endif()

# The installed package, used from its prefix alone as a user would: files,
# find_package, pkg-config (also the static link of docs/building.md),
# ocisbx-local-tenancy, the man pages and completion (tests/install/run.sh).
# And the build's options, checked by configuring fresh build directories
# with cmocka and libyaml hidden (tests/install/configure.sh).
# (Neither in the sanitizer build: an outside program does not load the ASan
# runtime, and the configurations do not depend on the build.)
if(NOT OCISBX_SANITIZE)
  add_test(NAME install_consumer
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/install/run.sh
            ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(install_consumer PROPERTIES LABELS example TIMEOUT 300)
  add_test(NAME build_options COMMAND bash ${PROJECT_SOURCE_DIR}/tests/install/configure.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(build_options PROPERTIES LABELS unit TIMEOUT 120)
endif()
# The Python package installed with pip into a fresh virtual environment
# (tests/install/python_package.sh).
if(NOT OCISBX_SANITIZE)
  add_test(NAME python_package COMMAND bash ${PROJECT_SOURCE_DIR}/tests/install/python_package.sh
    ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
  set_tests_properties(python_package PROPERTIES LABELS example TIMEOUT 300)
endif()

# The installed package works for a program outside the tree: find_package
# (ocisbxConfig.cmake) and pkg-config (ocisbx.pc), against a fresh prefix.
# (Not in the sanitizer build: an outside program does not load the ASan runtime.)
if(NOT OCISBX_SANITIZE)
  add_test(NAME install_consumer
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/install/run.sh
            ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(install_consumer PROPERTIES LABELS example TIMEOUT 300 RUN_SERIAL TRUE)
endif()

# The example programs (OCISBX_BUILD_EXAMPLES, on by default; they need
# neither cmocka nor the emulator to build): one program per examples/*.c,
# built against the public headers only and linked to the shared library,
# into build/examples/<name>. examples/examples.cmake adds what a program
# needs beyond that and, with OCISBX_BUILD_TESTS, the tests that run them.
# engine_libuv needs libuv (pkg-config libuv, Debian's libuv1-dev, which
# scripts/setup installs): without it that one example is skipped.
pkg_check_modules(LIBUV IMPORTED_TARGET libuv)
file(GLOB example_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/*.c)
foreach(src ${example_srcs})
  get_filename_component(name ${src} NAME_WE)
  if(name STREQUAL "engine_libuv" AND NOT LIBUV_FOUND)
    message(STATUS "examples: engine_libuv skipped: libuv (pkg-config libuv) not found; install libuv1-dev")
    continue()
  endif()
  add_executable(example_${name} ${src})
  set_target_properties(example_${name} PROPERTIES OUTPUT_NAME ${name}
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/examples)
  target_link_libraries(example_${name} PRIVATE ocisbx)
  ocisbx_warnings(example_${name})
endforeach()
include(${PROJECT_SOURCE_DIR}/examples/examples.cmake)

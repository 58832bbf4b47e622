# Tests are found by name so that each module adds its own without editing this file:
#   tests/unit/test_<module>.c        cmocka, label "unit"
#   tests/integration/it_<name>.c     label "integration" (may start the emulator)
#   tests/conformance/conf_<name>.c   label "conformance"
#   tests/fuzz/fuzz_<name>.c          libFuzzer target (OCISBX_FUZZ=ON, clang) or, otherwise,
#                                     a replay program run on tests/fuzz/corpus/<name>/ (label "unit")
#   tests/bench/bench_<name>.c        benchmark programs (never tests)
#   examples/*.c                      example programs (built by cmake/OcisbxExamples.cmake)
#   tests/*/<name>.cmake              extra rules a module needs (script tests, fixtures)
#   examples/examples.cmake           the examples' rules and tests (from cmake/OcisbxExamples.cmake)
# Every test gets these compile definitions so it can find what it needs:
set(OCISBX_TEST_DEFS
  OCISBX_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  OCISBX_BINARY_DIR="${PROJECT_BINARY_DIR}"
  OCISBX_CLI_PATH="$<TARGET_FILE:ocisbx_cli>"
  OCISBX_EMULATOR_PATH="$<TARGET_FILE:ocisbx_emulator>"
  _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)

file(GLOB OCISBX_TEST_SUPPORT CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/support/*.c)
add_library(ocisbx_test_support STATIC ${OCISBX_TEST_SUPPORT} ${PROJECT_SOURCE_DIR}/cmake/empty.c)
target_compile_definitions(ocisbx_test_support PUBLIC ${OCISBX_TEST_DEFS})
target_include_directories(ocisbx_test_support PUBLIC ${PROJECT_SOURCE_DIR}/tests/support)
target_link_libraries(ocisbx_test_support PUBLIC ocisbx_static PkgConfig::CMOCKA PkgConfig::MHD PkgConfig::YAML OpenSSL::SSL)
ocisbx_warnings(ocisbx_test_support)

function(ocisbx_c_test kind prefix label)
  file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${kind}/${prefix}*.c)
  foreach(src ${srcs})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_link_libraries(${name} PRIVATE ocisbx_test_support)
    if(name MATCHES "^test_emu_")
      target_link_libraries(${name} PRIVATE ocisbx_emulator_core) # the emulator's internals
    endif()
    ocisbx_warnings(${name})
    add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    set_tests_properties(${name} PROPERTIES LABELS ${label} TIMEOUT 600)
    if(NOT label STREQUAL "unit")
      add_dependencies(${name} ocisbx_cli ocisbx_emulator)
    endif()
  endforeach()
endfunction()
ocisbx_c_test(unit test_ unit)
ocisbx_c_test(integration it_ integration)
ocisbx_c_test(conformance conf_ conformance)

# Fuzz targets
file(GLOB fuzz_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
foreach(src ${fuzz_srcs})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" short ${name})
  if(OCISBX_FUZZ)
    add_executable(${name} ${src})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(${name} ${src} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.c)
    add_test(NAME ${name}_replay COMMAND ${name} ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${short})
    set_tests_properties(${name}_replay PROPERTIES LABELS unit)
  endif()
  target_link_libraries(${name} PRIVATE ocisbx_test_support)
  if(name MATCHES "^fuzz_emu")
    target_link_libraries(${name} PRIVATE ocisbx_emulator_core)
  endif()
endforeach()

# Benchmarks
file(GLOB bench_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/bench/bench_*.c)
foreach(src ${bench_srcs})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE ocisbx_test_support)
  ocisbx_warnings(${name})
endforeach()

# Examples are built by cmake/OcisbxExamples.cmake (OCISBX_BUILD_EXAMPLES),
# which also includes examples/examples.cmake: their rules and their tests.
file(GLOB extra_cmake CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/*/*.cmake)
foreach(f ${extra_cmake})
  include(${f})
endforeach()

# Workspace scripts (src/backend/scripts/*.sh), outside any backend:
#   script_lint            sh -n and shellcheck -s sh on every script (CI fails on a warning)
#   script_<name>_dash     tests/scripts/test_<name>.sh with the scripts run by dash
#   script_<name>_bash     the same with bash
# Each test file is a POSIX shell file run by sh with SH (the shell that runs
# the script under test), SCRIPTS (the scripts' folder) and T (a fresh
# temporary directory, removed after) set; tests/scripts/assert.sh has the
# helpers. Label "unit".
find_program(OCISBX_SHELLCHECK shellcheck)
find_program(OCISBX_DASH dash)
find_program(OCISBX_BASH bash)
add_test(NAME script_lint
  COMMAND ${CMAKE_COMMAND} -E env SHELLCHECK=${OCISBX_SHELLCHECK}
          sh ${PROJECT_SOURCE_DIR}/tests/scripts/lint.sh ${PROJECT_SOURCE_DIR}/src/backend/scripts)
set_tests_properties(script_lint PROPERTIES LABELS unit)
# script_<name>_dash and _bash: FILE run by run.sh under each shell, with
# SCRIPTS and the further ENVIRONMENT entries given.
function(ocisbx_script_test name file)
  set(env SCRIPTS=${PROJECT_SOURCE_DIR}/src/backend/scripts ${ARGN})
  foreach(shell dash bash)
    string(TOUPPER ${shell} up)
    add_test(NAME script_${name}_${shell} COMMAND sh ${PROJECT_SOURCE_DIR}/tests/scripts/run.sh ${OCISBX_${up}} ${file})
    set_tests_properties(script_${name}_${shell} PROPERTIES LABELS unit TIMEOUT 120
      ENVIRONMENT "${env}")
  endforeach()
endfunction()
file(GLOB script_tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/scripts/test_*.sh)
foreach(t ${script_tests})
  get_filename_component(name ${t} NAME_WE)
  string(REGEX REPLACE "^test_" "" name ${name})
  ocisbx_script_test(${name} ${t})
endforeach()
# exec.sh with directory listings that miss chunks begun while they ran
# (tests/scripts/readdir_gaps.c, preloaded into the shell): not in the
# sanitizer build, whose runtime a preloaded library would have to follow.
if(NOT OCISBX_SANITIZE)
  add_library(readdir_gaps MODULE ${PROJECT_SOURCE_DIR}/tests/scripts/readdir_gaps.c)
  target_link_libraries(readdir_gaps PRIVATE ${CMAKE_DL_LIBS})
  ocisbx_script_test(exec_gaps ${PROJECT_SOURCE_DIR}/tests/scripts/gaps_exec.sh READDIR_GAPS=$<TARGET_FILE:readdir_gaps>)
endif()

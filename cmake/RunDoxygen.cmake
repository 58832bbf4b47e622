# Runs Doxygen for the docs target: cmake -DDOXYFILE=... -DOUT=... -P RunDoxygen.cmake.
# The program is looked for now, not when the build was configured.
find_program(OCISBX_DOXYGEN doxygen)
if(NOT OCISBX_DOXYGEN)
  message(FATAL_ERROR "doxygen is not installed (apt-get install doxygen)")
endif()
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${OCISBX_DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen failed (${rc})")
endif()
message(STATUS "API reference: ${OUT}/html/index.html")

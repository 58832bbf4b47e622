# Documentation checks (label "unit"): every OCISBX_API declaration in
# include/ocisbx/*.h has a Doxygen comment of its own (the rule is stated in
# check_doxygen.py), and the checker itself flags what it should.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "python3 not found: the Doxygen comment check is not registered")
  return()
endif()
add_test(NAME doc_doxygen_comments
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/check_doxygen.py ${PROJECT_SOURCE_DIR}/include/ocisbx)
add_test(NAME doc_doxygen_checker_self_test
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/check_doxygen.py --self-test)
set_tests_properties(doc_doxygen_comments doc_doxygen_checker_self_test PROPERTIES LABELS unit TIMEOUT 60)

# The layout of src/: layers include only downward, no function over 100
# lines, no file over 800 (tests/unit/check_structure.py), and the checker's
# own cases.
add_test(NAME src_structure
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/check_structure.py ${PROJECT_SOURCE_DIR}/src)
add_test(NAME src_structure_checker_self_test
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/unit/check_structure.py --self-test)
set_tests_properties(src_structure src_structure_checker_self_test PROPERTIES LABELS unit TIMEOUT 60)

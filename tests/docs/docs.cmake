# The docs stay true: the marked shell blocks of README.md,
# docs/getting-started.md and docs/building.md run as they stand against a
# fresh test tenancy (doc_shell_blocks), and the options, variables and
# headers the docs name are checked against the code (doc_facts).
add_test(NAME doc_shell_blocks
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/shell_blocks.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
set_tests_properties(doc_shell_blocks PROPERTIES LABELS example TIMEOUT 300)
find_package(Python3 COMPONENTS Interpreter)
add_test(NAME doc_facts COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/docs/check_facts.py ${PROJECT_SOURCE_DIR})
set_tests_properties(doc_facts PROPERTIES LABELS unit)

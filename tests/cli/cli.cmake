# The CLI's generated documents at work: the completion scripts (bash with
# COMP_WORDS/COMP_CWORD, zsh, fish) and the man pages (rendered by man -l).
add_test(NAME completion_scripts COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/test_completion.sh ${PROJECT_BINARY_DIR})
add_test(NAME man_pages COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/test_man.sh ${PROJECT_BINARY_DIR}
  ${PROJECT_SOURCE_DIR})
set_tests_properties(completion_scripts man_pages PROPERTIES LABELS unit TIMEOUT 120)

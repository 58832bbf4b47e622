# it_backend_files runs twice: its suite (it_backend_files), and the big
# trees of issue 20 (60,000 files and a directory of 150,000 entries on
# both backends) as their own entry so that they run beside the rest.
if(TARGET it_backend_files)
  add_test(NAME it_backend_big_trees COMMAND it_backend_files big-trees WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
  set_tests_properties(it_backend_big_trees PROPERTIES LABELS integration TIMEOUT 600)
endif()

# The backend suites run one CTest entry per group (so that they run side by
# side): it_backend and it_backend_exec are their local-directory groups
# (IT_BACKEND_GROUP=local), the other groups are added here.
foreach(suite it_backend it_backend_exec)
  if(TARGET ${suite})
    set_tests_properties(${suite} PROPERTIES ENVIRONMENT "IT_BACKEND_GROUP=local")
  endif()
endforeach()
if(TARGET it_backend)
  foreach(group oci lifecycle)
    add_test(NAME it_backend_${group} COMMAND it_backend ${group} WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    set_tests_properties(it_backend_${group} PROPERTIES LABELS integration TIMEOUT 600)
  endforeach()
endif()
if(TARGET it_backend_exec)
  add_test(NAME it_backend_exec_oci COMMAND it_backend_exec oci WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
  set_tests_properties(it_backend_exec_oci PROPERTIES LABELS integration TIMEOUT 600)
endif()
# The longest entries first at ctest -j (COST: a first run has no timings of
# its own yet): the 64 MB output and the big trees are the long poles.
foreach(t it_backend_oci it_backend it_backend_big_trees)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES COST 1000)
  endif()
endforeach()

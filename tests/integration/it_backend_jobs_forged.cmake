# it_backend_jobs_forged: its local-directory group as the default entry, the
# host-shell and OCI (emulator) groups side by side.
if(TARGET it_backend_jobs_forged)
  set_tests_properties(it_backend_jobs_forged PROPERTIES ENVIRONMENT "IT_BACKEND_GROUP=local")
  foreach(group host oci)
    add_test(NAME it_backend_jobs_forged_${group} COMMAND it_backend_jobs_forged ${group}
             WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    set_tests_properties(it_backend_jobs_forged_${group} PROPERTIES LABELS integration TIMEOUT 600)
  endforeach()
endif()

# conf_oci_common needs node (and npm the first time, to install oci-common
# into the build tree); without node it exits 77, which CTest reports as skipped.
if(TEST conf_oci_common)
  set_tests_properties(conf_oci_common PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
    RESOURCE_LOCK ocisbx_node_modules)
endif()

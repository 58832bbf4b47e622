# The API reference: `cmake --build build --target docs` runs Doxygen on the
# public headers (include/ocisbx, docs/reference.md as the main page) with
# docs/Doxyfile.in, into build/doxygen/html. Doxygen is optional and looked
# for when the target runs (cmake/RunDoxygen.cmake), so one installed after
# configuring is found; without it the target says how to install it and
# fails.
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${PROJECT_BINARY_DIR}/Doxyfile @ONLY)
add_custom_target(docs
  COMMAND ${CMAKE_COMMAND} -DDOXYFILE=${PROJECT_BINARY_DIR}/Doxyfile -DOUT=${PROJECT_BINARY_DIR}/doxygen
          -P ${PROJECT_SOURCE_DIR}/cmake/RunDoxygen.cmake
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  VERBATIM)

# The man page ocisbx(1) and the bash, zsh and fish completion scripts, made
# from the CLI's command table by ocisbx-docgen at build time into
# build/share/ (installed by cmake/OcisbxInstall.cmake, with
# docs/man/ocisbx-emulator.1 and docs/man/ocisbx-local-tenancy.1).
set(OCISBX_GENERATED_SHARE ${PROJECT_BINARY_DIR}/share)
set(OCISBX_GENERATED_DOCS ${OCISBX_GENERATED_SHARE}/ocisbx.1 ${OCISBX_GENERATED_SHARE}/ocisbx.bash
    ${OCISBX_GENERATED_SHARE}/_ocisbx ${OCISBX_GENERATED_SHARE}/ocisbx.fish)
add_custom_command(OUTPUT ${OCISBX_GENERATED_DOCS}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${OCISBX_GENERATED_SHARE}
  COMMAND ocisbx_docgen ${OCISBX_GENERATED_SHARE}
  DEPENDS ocisbx_docgen
  COMMENT "Making ocisbx(1) and the completion scripts from the command table"
  VERBATIM)
add_custom_target(ocisbx_man_completion ALL DEPENDS ${OCISBX_GENERATED_DOCS})

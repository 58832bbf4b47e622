include(CMakePackageConfigHelpers)
install(TARGETS ocisbx ocisbx_static EXPORT ocisbxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ocisbx_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# man pages and completion scripts (made by cmake/OcisbxDocs.cmake), in the
# directories the shells read: bash-completion's, zsh's site-functions, fish's vendor_completions.d
install(FILES ${OCISBX_GENERATED_SHARE}/ocisbx.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${OCISBX_GENERATED_SHARE}/ocisbx.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME ocisbx)
install(FILES ${OCISBX_GENERATED_SHARE}/_ocisbx DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${OCISBX_GENERATED_SHARE}/ocisbx.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
if(OCISBX_BUILD_EMULATOR)
  install(TARGETS ocisbx_emulator RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # the local test tenancy from the installed prefix (finds the emulator next to itself)
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/local-tenancy DESTINATION ${CMAKE_INSTALL_BINDIR}
    RENAME ocisbx-local-tenancy)
  install(FILES ${PROJECT_SOURCE_DIR}/docs/man/ocisbx-emulator.1 ${PROJECT_SOURCE_DIR}/docs/man/ocisbx-local-tenancy.1
    DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ocisbx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${OCISBX_GENERATED_INCLUDE}/ocisbx/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ocisbx)
install(EXPORT ocisbxTargets NAMESPACE ocisbx:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ocisbx)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ocisbxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ocisbxConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ocisbx)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ocisbxConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ocisbxConfig.cmake ${PROJECT_BINARY_DIR}/ocisbxConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ocisbx)
# ${pcfiledir} is <prefix>/<libdir>/pkgconfig: climb one level per component.
string(REGEX REPLACE "[^/]+" ".." OCISBX_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(${PROJECT_SOURCE_DIR}/cmake/ocisbx.pc.in ${PROJECT_BINARY_DIR}/ocisbx.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ocisbx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

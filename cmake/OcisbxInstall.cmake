include(CMakePackageConfigHelpers)
install(TARGETS ocisbx ocisbx_static EXPORT ocisbxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ocisbx_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(OCISBX_BUILD_EMULATOR)
  install(TARGETS ocisbx_emulator RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
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

# Every dependency is a Debian package (scripts/setup installs them).
#
# What the library links is listed once, here: ocisbx_lib_dep() finds a
# pkg-config module and adds it to OCISBX_LIB_DEPS (what the library and its
# static archive link) and to the pkg-config file, as a module of
# Requires.private or, for libcurl, as -lcurl in Libs.private (a static
# libocisbx.a needs the library, whichever way libcurl itself is linked:
# libcurl's own static dependencies are not all shipped by Debian).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto SSL)
# libm: the harness's argument checks (floor) need it in an unoptimised build
set(OCISBX_LIB_DEPS OpenSSL::Crypto Threads::Threads m)
set(OCISBX_PC_REQUIRES "libcrypto")
set(OCISBX_PC_LIBS "-lpthread -lm")

macro(ocisbx_lib_dep var module)
  list(APPEND OCISBX_LIB_DEPS PkgConfig::${var})
  if("${module}" STREQUAL "libcurl")
    string(PREPEND OCISBX_PC_LIBS "-lcurl ")
  else()
    string(APPEND OCISBX_PC_REQUIRES " ${module}")
  endif()
endmacro()

pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
ocisbx_lib_dep(CURL libcurl)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)
ocisbx_lib_dep(CJSON libcjson)

# libyaml: the emulator's tenancy file needs it; the library reads harness
# policy files with it (OCISBX_WITH_YAML: AUTO when found, ON required, OFF
# never; without it loading a policy file fails with OCISBX_EUNSUPPORTED and
# ocisbx_features() has no OCISBX_FEATURE_YAML_POLICY).
set(OCISBX_WITH_YAML AUTO CACHE STRING "Link libyaml into the library for YAML policy files: AUTO, ON or OFF")
set_property(CACHE OCISBX_WITH_YAML PROPERTY STRINGS AUTO ON OFF)
if(NOT OCISBX_WITH_YAML MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "OCISBX_WITH_YAML is AUTO, ON or OFF, not '${OCISBX_WITH_YAML}'")
endif()
if(OCISBX_WITH_YAML STREQUAL "OFF" AND OCISBX_BUILD_TESTS)
  message(FATAL_ERROR "OCISBX_WITH_YAML=OFF goes with OCISBX_BUILD_TESTS=OFF: the tests read policy files")
endif()
if(OCISBX_BUILD_EMULATOR OR NOT OCISBX_WITH_YAML STREQUAL "OFF")
  pkg_check_modules(YAML IMPORTED_TARGET yaml-0.1)
endif()
if(NOT YAML_FOUND AND OCISBX_WITH_YAML STREQUAL "ON")
  message(FATAL_ERROR "OCISBX_WITH_YAML=ON: libyaml (pkg-config yaml-0.1) was not found; install libyaml-dev")
elseif(NOT YAML_FOUND AND OCISBX_BUILD_EMULATOR)
  message(FATAL_ERROR "libyaml (pkg-config yaml-0.1) was not found; install libyaml-dev (the emulator reads "
                      "its tenancy file with it; -DOCISBX_BUILD_EMULATOR=OFF -DOCISBX_BUILD_TESTS=OFF builds "
                      "without it)")
endif()
set(OCISBX_LIB_YAML OFF)
if(YAML_FOUND AND NOT OCISBX_WITH_YAML STREQUAL "OFF")
  set(OCISBX_LIB_YAML ON)
  ocisbx_lib_dep(YAML yaml-0.1)
endif()

if(OCISBX_BUILD_EMULATOR)
  pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
endif()
if(OCISBX_BUILD_TESTS)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()

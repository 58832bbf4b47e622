# Every dependency is a Debian package (scripts/setup installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto SSL)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)
if(OCISBX_BUILD_EMULATOR)
  pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
  pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
else()
  # The library reads harness policy files with libyaml when it is there;
  # without it, loading a policy file says so (OCISBX_EUNSUPPORTED).
  pkg_check_modules(YAML IMPORTED_TARGET yaml-0.1)
endif()
if(OCISBX_BUILD_TESTS)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()

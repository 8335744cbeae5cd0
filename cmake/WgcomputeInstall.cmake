# Install a relocatable prefix:
#   include/wgcompute.h, include/wgcompute.hpp (the header-only C++ API)
#   lib/libwgcompute.so.X.Y.Z, libwgcompute.so.X -> ..., libwgcompute.so -> ...
#   lib/libwgcompute.a
#   lib/cmake/wgcompute/{wgcompute-config,wgcompute-config-version,wgcompute-targets}.cmake
#   lib/pkgconfig/wgcompute.pc
# Nothing installed holds an absolute path: the CMake files locate the prefix
# from their own directory and the .pc file from ${pcfiledir}.

include(CMakePackageConfigHelpers)

set(WGCOMPUTE_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/wgcompute")
set(_wgc_gen "${CMAKE_CURRENT_BINARY_DIR}/wgcompute-package")
file(MAKE_DIRECTORY "${_wgc_gen}")

install(FILES "${WGCOMPUTE_INCLUDE_DIR}/wgcompute.h" "${WGCOMPUTE_INCLUDE_DIR}/wgcompute.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES "${WGCOMPUTE_STATIC_LIB}" DESTINATION "${CMAKE_INSTALL_LIBDIR}")

if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # Versioned file plus the usual symlink chain.
  set(WGCOMPUTE_SHARED_REAL "libwgcompute.so.${PROJECT_VERSION}")
  set(WGCOMPUTE_SHARED_SONAME "libwgcompute.so.${WGCOMPUTE_SOVERSION}")
  install(FILES "${WGCOMPUTE_SHARED_LIB}" DESTINATION "${CMAKE_INSTALL_LIBDIR}" RENAME "${WGCOMPUTE_SHARED_REAL}")
  file(CREATE_LINK "${WGCOMPUTE_SHARED_REAL}" "${_wgc_gen}/${WGCOMPUTE_SHARED_SONAME}" SYMBOLIC)
  file(CREATE_LINK "${WGCOMPUTE_SHARED_SONAME}" "${_wgc_gen}/libwgcompute.so" SYMBOLIC)
  install(FILES "${_wgc_gen}/${WGCOMPUTE_SHARED_SONAME}" "${_wgc_gen}/libwgcompute.so"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}")
else()
  get_filename_component(WGCOMPUTE_SHARED_REAL "${WGCOMPUTE_SHARED_LIB}" NAME)
  set(WGCOMPUTE_SHARED_SONAME "")
  install(FILES "${WGCOMPUTE_SHARED_LIB}" DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endif()

# Paths relative to the prefix, substituted into the templates.
set(WGCOMPUTE_INSTALL_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
set(WGCOMPUTE_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
# Number of directories between the config file and the prefix.
string(REGEX REPLACE "[^/]+" ".." WGCOMPUTE_CMAKE_DIR_UP "${WGCOMPUTE_CMAKE_DIR}")
string(REGEX REPLACE "[^/]+" ".." WGCOMPUTE_PC_DIR_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(WGCOMPUTE_STATIC_SYSTEM_LIBS_PC "")
foreach(_lib IN LISTS WGCOMPUTE_STATIC_SYSTEM_LIBS)
  if(_lib MATCHES "^-")
    string(APPEND WGCOMPUTE_STATIC_SYSTEM_LIBS_PC " ${_lib}")
  else()
    string(APPEND WGCOMPUTE_STATIC_SYSTEM_LIBS_PC " -l${_lib}")
  endif()
endforeach()
string(STRIP "${WGCOMPUTE_STATIC_SYSTEM_LIBS_PC}" WGCOMPUTE_STATIC_SYSTEM_LIBS_PC)

configure_file("${CMAKE_CURRENT_LIST_DIR}/wgcompute-config.cmake.in" "${_wgc_gen}/wgcompute-config.cmake" @ONLY)
configure_file("${CMAKE_CURRENT_LIST_DIR}/wgcompute-targets.cmake.in" "${_wgc_gen}/wgcompute-targets.cmake" @ONLY)
configure_file("${CMAKE_CURRENT_LIST_DIR}/wgcompute.pc.in" "${_wgc_gen}/wgcompute.pc" @ONLY)
write_basic_package_version_file("${_wgc_gen}/wgcompute-config-version.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)

install(FILES "${_wgc_gen}/wgcompute-config.cmake" "${_wgc_gen}/wgcompute-config-version.cmake"
              "${_wgc_gen}/wgcompute-targets.cmake"
        DESTINATION "${WGCOMPUTE_CMAKE_DIR}")
install(FILES "${_wgc_gen}/wgcompute.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

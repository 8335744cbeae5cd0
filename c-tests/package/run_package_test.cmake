# cmake -P script: install the build to a temporary prefix, move the prefix,
# then build and run c-tests/package against the moved copy with
# find_package (shared and static) and, if pkg-config is installed, with
# pkg-config, and a C++ consumer of wgcompute.hpp when CXX_COMPILER is set.
# Inputs: BUILD_DIR WORK_DIR PROJECT_DIR GENERATOR C_COMPILER [CXX_COMPILER].

function(run_checked)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${err}")
  endif()
endfunction()

set(stage "${WORK_DIR}/stage")
set(moved "${WORK_DIR}/moved-prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

run_checked(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${stage}")
file(RENAME "${stage}" "${moved}")

foreach(f include/wgcompute.h include/wgcompute.hpp lib/libwgcompute.a lib/cmake/wgcompute/wgcompute-config.cmake
          lib/cmake/wgcompute/wgcompute-config-version.cmake lib/pkgconfig/wgcompute.pc)
  if(NOT EXISTS "${moved}/${f}")
    message(FATAL_ERROR "missing from the installed prefix: ${f}")
  endif()
endforeach()
if(CMAKE_HOST_SYSTEM_NAME STREQUAL "Linux")
  foreach(f libwgcompute.so libwgcompute.so.0)
    if(NOT IS_SYMLINK "${moved}/lib/${f}")
      message(FATAL_ERROR "lib/${f} should be a symlink")
    endif()
  endforeach()
endif()

# No installed text file may remember where it was built or installed.
file(GLOB_RECURSE text_files "${moved}/lib/cmake/*" "${moved}/lib/pkgconfig/*")
foreach(f IN LISTS text_files)
  file(READ "${f}" content)
  foreach(path "${stage}" "${BUILD_DIR}" "${PROJECT_DIR}")
    string(FIND "${content}" "${path}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} contains the absolute path ${path}")
    endif()
  endforeach()
endforeach()

# CMake: find_package from the moved prefix, shared and static.
set(build "${WORK_DIR}/consumer-cmake")
set(cxx_args "")
if(CXX_COMPILER)
  set(cxx_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DWGC_CONSUMER_CXX=ON)
endif()
run_checked(${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${build}" -G "${GENERATOR}"
  "-DCMAKE_C_COMPILER=${C_COMPILER}" ${cxx_args} "-DCMAKE_PREFIX_PATH=${moved}" -DCMAKE_BUILD_TYPE=Release)
run_checked(${CMAKE_COMMAND} --build "${build}")
run_checked("${build}/consumer_shared")
run_checked("${build}/consumer_static")
message("find_package(wgcompute): shared and static consumers ran")
if(CXX_COMPILER)
  run_checked("${build}/consumer_cpp")
  message("find_package(wgcompute): the C++ consumer of wgcompute.hpp ran")
endif()

# pkg-config, when present: shared, and static through Libs.private.
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message("pkg-config not found: skipping the pkg-config consumer")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} "${moved}/lib/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs wgcompute OUTPUT_VARIABLE pc_flags
  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs wgcompute failed")
endif()
execute_process(COMMAND "${PKG_CONFIG}" --variable=libdir wgcompute OUTPUT_VARIABLE pc_libdir
  OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND "${PKG_CONFIG}" --static --libs wgcompute OUTPUT_VARIABLE pc_static
  OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
# Prefer the archive for -lwgcompute, keep the system libraries dynamic.
string(REPLACE "-lwgcompute" "-Wl,-Bstatic -lwgcompute -Wl,-Bdynamic" pc_static "${pc_static}")
separate_arguments(pc_static UNIX_COMMAND "${pc_static}")
execute_process(COMMAND "${PKG_CONFIG}" --cflags wgcompute OUTPUT_VARIABLE pc_cflags
  OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(pc_cflags UNIX_COMMAND "${pc_cflags}")

run_checked("${C_COMPILER}" "${PROJECT_DIR}/main.c" ${pc_flags} "-Wl,-rpath,${pc_libdir}"
  -o "${WORK_DIR}/pc_shared")
run_checked("${WORK_DIR}/pc_shared")
run_checked("${C_COMPILER}" "${PROJECT_DIR}/main.c" ${pc_cflags} ${pc_static} -o "${WORK_DIR}/pc_static")
run_checked("${WORK_DIR}/pc_static")
message("pkg-config: shared and static consumers ran")

# Build libwgcompute with cargo and expose it as imported targets:
#   wgcompute::wgcompute  the shared library
#   wgcompute::static     the static library with its system link libraries
# cargo runs on every build; it is incremental, so an up-to-date tree costs
# about a second.

find_program(CARGO_EXECUTABLE cargo HINTS "$ENV{HOME}/.cargo/bin")
if(NOT CARGO_EXECUTABLE)
  message(FATAL_ERROR "cargo not found: install the Rust toolchain (https://rustup.rs)")
endif()

if(WGCOMPUTE_DEBUG)
  set(_wgc_profile_flag "")
  set(_wgc_profile_dir debug)
else()
  set(_wgc_profile_flag --release)
  set(_wgc_profile_dir release)
endif()

set(WGCOMPUTE_LIB_DIR "${WGCOMPUTE_CARGO_TARGET_DIR}/${_wgc_profile_dir}")
set(WGCOMPUTE_SHARED_LIB "${WGCOMPUTE_LIB_DIR}/${CMAKE_SHARED_LIBRARY_PREFIX}wgcompute${CMAKE_SHARED_LIBRARY_SUFFIX}")
set(WGCOMPUTE_STATIC_LIB "${WGCOMPUTE_LIB_DIR}/${CMAKE_STATIC_LIBRARY_PREFIX}wgcompute${CMAKE_STATIC_LIBRARY_SUFFIX}")
set(WGCOMPUTE_INCLUDE_DIR "${CMAKE_CURRENT_SOURCE_DIR}/include")
set(WGCOMPUTE_SOVERSION ${PROJECT_VERSION_MAJOR})

# System libraries the Rust static library needs, as printed by
# `cargo rustc --lib --crate-type staticlib -- --print native-static-libs`.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(WGCOMPUTE_STATIC_SYSTEM_LIBS dl gcc_s util rt pthread m)
elseif(APPLE)
  set(WGCOMPUTE_STATIC_SYSTEM_LIBS "-framework Metal" "-framework QuartzCore" "-framework CoreGraphics"
      "-framework Foundation" objc iconv m)
elseif(WIN32)
  set(WGCOMPUTE_STATIC_SYSTEM_LIBS kernel32 advapi32 ntdll userenv ws2_32 dbghelp bcrypt d3d12 dxgi
      d3dcompiler user32 ole32 opengl32 gdi32)
else()
  set(WGCOMPUTE_STATIC_SYSTEM_LIBS pthread dl m)
endif()

# With the C tests on, cargo's test targets are built in the same step: cargo
# unifies dependency features differently when dev-dependencies take part,
# and building both sets here means `cargo test` afterwards reuses this
# build instead of compiling wgpu a second time.
set(_wgc_cargo_targets --lib)
if(WGCOMPUTE_BUILD_TESTS)
  list(APPEND _wgc_cargo_targets --tests)
endif()

# Programs linked in the build tree look for the SONAME next to the library.
set(_wgc_soname_link "")
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(_wgc_soname_link COMMAND ${CMAKE_COMMAND} -E create_symlink libwgcompute.so
      "${WGCOMPUTE_LIB_DIR}/libwgcompute.so.${WGCOMPUTE_SOVERSION}")
endif()

add_custom_target(wgcompute_cargo ALL
  COMMAND ${CMAKE_COMMAND} -E env CARGO_TARGET_DIR=${WGCOMPUTE_CARGO_TARGET_DIR}
          ${CARGO_EXECUTABLE} build ${_wgc_profile_flag} ${_wgc_cargo_targets}
          --manifest-path ${CMAKE_CURRENT_SOURCE_DIR}/Cargo.toml
  ${_wgc_soname_link}
  BYPRODUCTS ${WGCOMPUTE_SHARED_LIB} ${WGCOMPUTE_STATIC_LIB}
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  USES_TERMINAL
  COMMENT "cargo build ${_wgc_profile_flag} (libwgcompute)")

add_library(wgcompute::wgcompute SHARED IMPORTED GLOBAL)
set_target_properties(wgcompute::wgcompute PROPERTIES
  IMPORTED_LOCATION "${WGCOMPUTE_SHARED_LIB}"
  IMPORTED_SONAME "libwgcompute.so.${WGCOMPUTE_SOVERSION}"
  INTERFACE_INCLUDE_DIRECTORIES "${WGCOMPUTE_INCLUDE_DIR}")
add_dependencies(wgcompute::wgcompute wgcompute_cargo)

add_library(wgcompute::static STATIC IMPORTED GLOBAL)
set_target_properties(wgcompute::static PROPERTIES
  IMPORTED_LOCATION "${WGCOMPUTE_STATIC_LIB}"
  INTERFACE_INCLUDE_DIRECTORIES "${WGCOMPUTE_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${WGCOMPUTE_STATIC_SYSTEM_LIBS}")
add_dependencies(wgcompute::static wgcompute_cargo)

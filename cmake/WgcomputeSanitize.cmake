# wgc_sanitize(target): with WGCOMPUTE_SANITIZE on, build a C test program
# with AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer; any
# report fails the test (wgc_add_test gives the tests the options below).
# The Rust library is not instrumented, but ASan still checks every
# allocation it makes through malloc and every byte the tests hand to it or
# get back.
set(WGC_SANITIZER_ENV
  "ASAN_OPTIONS=detect_leaks=1"
  "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0"
  "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")

function(wgc_sanitize target)
  if(NOT WGCOMPUTE_SANITIZE)
    return()
  endif()
  if(NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "WGCOMPUTE_SANITIZE needs GCC or Clang")
  endif()
  set(_flags -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_compile_options(${target} PRIVATE ${_flags} -g)
  target_link_options(${target} PRIVATE ${_flags})
endfunction()

# wgc_add_test(<name> COMMAND <command> [<arg>...]
#              [ENVIRONMENT <var=value>...] [TIMEOUT <seconds>] [SHARES_CPU])
#
# Registers a CTest test the way every test of this project runs; add new
# tests through it.
#
# - The lock. On lavapipe (Mesa's software Vulkan: CI's driver) every
#   dispatch is spread over every core, so two GPU tests at once only slow
#   each other down, and on a busy 2-core machine both can run out of
#   time. A test holds the resource lock `wgc_cpu` unless it says
#   SHARES_CPU (it does little GPU work: status checks, a header compile):
#   `ctest --parallel N` runs one locked test at a time, with the
#   SHARES_CPU tests beside it.
# - The timeout: TIMEOUT seconds, else WGC_TEST_TIMEOUT (600; the slowest
#   test takes under 100 s alone on an idle 2-core machine), room for a
#   machine that is busy with other work; a hang still ends.
# - The sanitizers' options (WGCOMPUTE_SANITIZE builds) join ENVIRONMENT.
# - The device profile: WGC_COMPUTE_UNITS=132 (unless ENVIRONMENT sets
#   it), the SMs of the GPUs the fill targets were measured on, so that a
#   CPU driver with a few threads takes the same splits (runs of K, row
#   chunks) as those GPUs and the tests cover them.
include(${CMAKE_CURRENT_LIST_DIR}/WgcomputeSanitize.cmake)

set(WGC_TEST_TIMEOUT 600 CACHE STRING "Default CTest timeout of a wgcompute test, in seconds")

function(wgc_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 _t "SHARES_CPU" "TIMEOUT" "COMMAND;ENVIRONMENT")
  if(NOT _t_COMMAND)
    message(FATAL_ERROR "wgc_add_test(${name}): COMMAND is required")
  endif()
  if(_t_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "wgc_add_test(${name}): unknown arguments ${_t_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT _t_TIMEOUT)
    set(_t_TIMEOUT ${WGC_TEST_TIMEOUT})
  endif()
  add_test(NAME ${name} COMMAND ${_t_COMMAND})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${_t_TIMEOUT})
  if(NOT _t_SHARES_CPU)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK wgc_cpu)
  endif()
  set(_env ${_t_ENVIRONMENT})
  if(NOT "${_env}" MATCHES "WGC_COMPUTE_UNITS=")
    list(APPEND _env "WGC_COMPUTE_UNITS=132")
  endif()
  if(WGCOMPUTE_SANITIZE)
    list(APPEND _env ${WGC_SANITIZER_ENV})
  endif()
  if(_env)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${_env}")
  endif()
endfunction()

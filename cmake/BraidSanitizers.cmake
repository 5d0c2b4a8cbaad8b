# Instrumented builds (docs/FUZZING.md).
#   BRAID_SANITIZE: every target built with AddressSanitizer + UndefinedBehaviorSanitizer; any
#     report aborts the process, so a test that triggers one fails. scripts/test-all.sh uses it.
#   BRAID_FUZZ: the libFuzzer targets of fuzz/ (clang only). The libraries get coverage
#     instrumentation (-fsanitize=fuzzer-no-link) so the fuzzer sees their branches.
option(BRAID_SANITIZE "Build everything with -fsanitize=address,undefined" OFF)
option(BRAID_FUZZ "Build the libFuzzer targets in fuzz/ (needs clang)" OFF)

set(BRAID_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)
if(BRAID_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "BRAID_FUZZ needs clang: configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(${BRAID_SANITIZER_FLAGS} -fsanitize=fuzzer-no-link)
  add_link_options(${BRAID_SANITIZER_FLAGS})
elseif(BRAID_SANITIZE)
  add_compile_options(${BRAID_SANITIZER_FLAGS})
  add_link_options(${BRAID_SANITIZER_FLAGS})
endif()
# Whether the libraries carry sanitizer instrumentation (either option): whatever links them,
# such as the package test's consumer, needs the same runtimes.
if(BRAID_SANITIZE OR BRAID_FUZZ)
  set(BRAID_SANITIZED ON)
else()
  set(BRAID_SANITIZED OFF)
endif()

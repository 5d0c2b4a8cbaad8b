#!/usr/bin/env bash
# Every test, as CI runs it (.ci/run calls this; README "Set up" shows it): installs what is
# missing, builds everything once and runs the whole suite, then a short fuzz run. Exits non-zero
# on the first failure.
#
# Default (CI): one build in build-san/ with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DBRAID_SANITIZE=ON, the default compiler, libtorch included, so the executor's CPU backend is
# tested sanitized too): any report aborts the test that triggered it. The libraries are compiled
# at -O1 with line tables, the test suites and the braid command at -O0 (BRAID_UNOPTIMIZED_TESTS:
# they are half the compile time and little of the run time). Then scripts/fuzz.sh builds the
# libFuzzer targets with clang in build-fuzz/ and runs each for FUZZ_SECONDS (default 12: about a
# minute in all; 0 skips). docs/FUZZING.md, "Sanitizers" and "CI", has the timings.
# BRAID_TEST_PLAIN=1: the plain build in build/ (no instrumentation), no fuzzing unless
# FUZZ_SECONDS=N.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if ((${BRAID_TEST_PLAIN:-0})); then
  build=${BUILD_DIR:-build}
  cmake -S . -B "$build" -G Ninja "${launcher[@]}"
  seconds=${FUZZ_SECONDS:-0}
else
  build=${BUILD_DIR:-build-san}
  cmake -S . -B "$build" -G Ninja -DBRAID_SANITIZE=ON -DBRAID_UNOPTIMIZED_TESTS=ON -DBRAID_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "${launcher[@]}"
  seconds=${FUZZ_SECONDS:-12}
  # Sanitizer settings for every test process (docs/FUZZING.md, "Sanitizers"): stop at the first
  # report; libraries' own process-lifetime allocations are suppressed in scripts/lsan.supp.
  # intercept_tls_get_addr=0: the same scan also crashes on a bogus dynamic-TLS range it recorded
  # through __tls_get_addr ("DTLS 20 at 0x000000004fc4-..."), reproducibly after a four-
  # configuration `braid run --sweep` on one rank; without the interception LSan does not track
  # dynamic TLS (nothing of braid's lives only there).
  export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:intercept_tls_get_addr=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
  # ATen on one CPU thread: LeakSanitizer's exit-time scan (GCC 12's) crashes reading the thread-
  # local storage of libgomp's worker threads ("Tracer caught signal 11"), which ATen starts for
  # its CPU kernels in `braid run --ranks 1`.
  export OMP_NUM_THREADS=1
fi
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure -j2

if ((seconds > 0)); then
  ./scripts/fuzz.sh "$seconds"
fi

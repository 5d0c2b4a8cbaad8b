#!/usr/bin/env bash
# Every test, as CI runs it (.ci/run calls this; README "Set up" shows it): installs what is
# missing, builds everything in build/ and runs the whole suite. Exits non-zero on the first failure.
# Opt-in, not yet part of CI (docs/FUZZING.md says why): BRAID_TEST_SANITIZE=1 builds with
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ instead (a report aborts the test
# that triggered it); FUZZ_SECONDS=N then fuzzes each target N seconds (needs clang).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
sanitize=${BRAID_TEST_SANITIZE:-0}
if ((sanitize)); then
  build=${BUILD_DIR:-build-asan}
  cmake -S . -B "$build" -G Ninja -DBRAID_SANITIZE=ON "${launcher[@]}"
else
  build=${BUILD_DIR:-build}
  cmake -S . -B "$build" -G Ninja "${launcher[@]}"
fi
cmake --build "$build" -j2
# Sanitizer settings for every test process (docs/FUZZING.md, "Sanitizers"): stop at the first
# report; libtorch's and Gloo's own allocations are not braid's, see scripts/lsan.supp.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
ctest --test-dir "$build" --output-on-failure -j2

seconds=${FUZZ_SECONDS:-0}
if ((seconds > 0)); then
  if command -v clang++ >/dev/null; then
    ./scripts/fuzz.sh "$seconds"
  else
    echo "test-all: clang++ not found, fuzzing skipped (apt-get install clang)"
  fi
fi

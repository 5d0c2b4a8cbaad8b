#!/bin/bash
# Session 11, call CF (1 H200): the final tree: one-GPU tests, and calibrate --quick --only power.
TAG=${TAG:-cf}; BUDGET=${BUDGET:-280}; source .dev/common.sh
build braid braid_exec_tests
timeout 120 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head
timeout 60 $B calibrate --measure --ranks 1 --quick --only power --dtypes bf16 -o $R/power_quick.json > $R/power_quick.log 2>&1; echo "calibrate quick power rc=$?"; tail -3 $R/power_quick.log
el done

#!/bin/bash
# Session 7, call R (2 H200): every GPU test (Gpu.*, GpuCli.*) at the session's final executor.
TAG=${TAG:-r}; BUDGET=${BUDGET:-560}; source .dev/common.sh
build braid braid_exec_tests
timeout 420 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|FAILED|tests ran" $R/gpu_tests.log | head -40; el tests

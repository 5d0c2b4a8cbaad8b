#!/bin/bash
# Session 13, call EE (1 H200): the GPU tests at the session's final tree (CLI input checks; run again as EF after the review).
TAG=${TAG:-ee}; BUDGET=${BUDGET:-250}; source .dev/common.sh
build braid braid_exec_tests
timeout 120 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:Microbench*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head -8; el gputests
timeout 60 $B calibrate --measure --ranks 1 --only after_idle --reps 5 --quick --dtypes bf16 -o $R/ai.json > $R/ai.log 2>&1; echo "calibrate rc=$?"; tail -1 $R/ai.log
timeout 60 $B run matmul_rs --backend cuda --ranks 1 --devices 1 --dtype bf16 --m 4096 --k 4096 --n 4096 --streams 2 --graph --repeat 5 --cool-down nan > $R/nan.log 2>&1; echo "cool-down nan rc=$? $(tail -1 $R/nan.log)"
el done

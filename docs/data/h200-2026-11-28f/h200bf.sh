#!/bin/bash
# Session 10, call BF (1 H200): every one-GPU test at the executor of 2ebf746 (out-of-place
# Allreduce on NCCL); single-GPU programs at 1, 2 and 4 chunks as CUDA-graph replays (wall =
# device time), two passes, with calibrate's GEMMs of the plan and of these programs on integers.
TAG=${TAG:-bf}; BUDGET=${BUDGET:-420}; source .dev/common.sh
build braid braid_exec_tests
timeout 150 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head; el gputests
mkdir -p $R/g
G="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --graph --repeat 50"
for rep in 1 2; do
  for w in "rsL matmul_rs --m 16384 --k 4096 --n 4096" "rsM matmul_rs --m 8192 --k 4096 --n 2048" "arL matmul_ar --m 16384 --k 4096 --n 4096" "agL ag_matmul --m 8192 --k 8192 --n 3584" "mlpL mlp --m 4096 --k 4096 --n 8192" "rplL row_parallel_linear --m 16384 --k 4096 --n 4096"; do
    set -- $w; name=$1; shift
    timeout 60 $B run "$@" $G --sweep streams=1,2,4 > $R/g/run_${name}_$rep.log 2>&1
    echo "$name $rep rc=$? $(grep 'rank 0 timing' $R/g/run_${name}_$rep.log | grep -o 'wall [0-9.]* us' | tr '\n' ' ')"
  done
done
el runs
timeout 60 $B calibrate --measure --ranks 1 --only gemm --dtypes bf16 --gemm-shapes 16384x4096x4096,8192x4096x4096,4096x4096x4096,8192x2048x4096,4096x2048x4096,2048x2048x4096,8192x3584x8192,4096x3584x8192,2048x3584x8192,4096x8192x4096,4096x4096x8192,2048x8192x4096,2048x4096x8192,1024x8192x4096,1024x4096x8192,16384x4096x2048,16384x4096x1024,8192x4096x2048 -o $R/gemm.json > $R/cal.log 2>&1; echo "cal rc=$?"
el done

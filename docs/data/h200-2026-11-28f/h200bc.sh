#!/bin/bash
# Session 10, call BC (1 H200): the executor's GEMMs with unit axes ([m, 1, k] @ [k, n] into
# [m, n, 1]) before (a temporary and a copy) and after (one GEMM into the buffer): per-op timelines
# of single-GPU programs on both executors, interleaved; then every GPU test at the new one.
# .dev/old/tensor_ops.cpp was `git show 5ecb857:exec/tensor_ops.cpp` (the executor before 9eefd1c); the
# tree it ran on was 9eefd1c's.
TAG=${TAG:-bc}; BUDGET=${BUDGET:-560}; source .dev/common.sh
build braid
mkdir -p /tmp/old && tar cf - --exclude=./build-gpu . | tar xf - -C /tmp/old && cp .dev/old/tensor_ops.cpp /tmp/old/exec/tensor_ops.cpp
( cd /tmp/old && build braid ) || exit 1
OLD=/tmp/old/build-gpu/cli/braid
mkdir -p $R/tl
G="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 60 --streams 1 --timeline-run 10"
one() { local name=$1 exe=$2; shift 2
  timeout 60 $exe run "$@" $G --timeline $R/tl/$name.json > $R/tl/$name.log 2>&1
  echo "$name rc=$? $(grep 'rank 0 timing' $R/tl/$name.log | grep -o 'wall [0-9.]* us' | head -1)"; }
for rep in 1 2; do
  for v in new old; do E=$B; [ $v = old ] && E=$OLD
    one rsL_${v}_$rep $E matmul_rs --m 16384 --k 4096 --n 4096
    one rsM_${v}_$rep $E matmul_rs --m 8192 --k 4096 --n 2048
    one arL_${v}_$rep $E matmul_ar --m 16384 --k 4096 --n 4096
    one rplL_${v}_$rep $E row_parallel_linear --m 16384 --k 4096 --n 4096
    one mlpL_${v}_$rep $E mlp --m 4096 --k 4096 --n 8192
    one agL_${v}_$rep $E ag_matmul --m 8192 --k 8192 --n 3584
  done
done
el timelines
build braid_exec_tests
timeout $(( $(left) - 15 )) build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head
el done

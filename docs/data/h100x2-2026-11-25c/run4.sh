#!/bin/bash
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
R=/tmp/r; rm -rf $R; mkdir -p $R/c
finish() { tar czf $OUT/results-c.tgz -C $R . ; el "tarred"; }
trap finish EXIT
cmake -S . -B build-gpu -G Ninja -DBRAID_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') > $R/configure.log 2>&1 || exit 1
cmake --build build-gpu -j32 --target braid braid_exec_cli braid_exec_tests > $R/build.log 2>&1 || { grep -B2 -A12 'error' $R/build.log | head -60; exit 1; }
el built
B=build-gpu/cli/braid
timeout 100 build-gpu/tests/braid_exec_tests --gtest_filter='GpuCli.SmCarveout*' > $R/gpu_tests_carve.log 2>&1; el "carve tests rc=$?"; grep -E '^\[  (FAILED|PASSED) ' $R/gpu_tests_carve.log; grep -B3 -A12 'Failure' $R/gpu_tests_carve.log | head -30
COMMON="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 10 --timeout 90 --timeline-run 5"
launch() { local name=$1 w=$2 m=$3 k=$4 n=$5; shift 5
  timeout 200 $B run $w $COMMON --m $m --k $k --n $n --timeline $R/c/tl_${name}.json "$@" > $R/c/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/c/run_${name}.log) configs"; [ $rc = 0 ] || tail -n 3 $R/c/run_${name}.log; }
S="--sweep streams=2,4 pool=1 prefetch=on defer-waits=on protocol=A"
for c in 0 16 32; do
  launch rsL_hi_c$c matmul_rs 16384 8192 4096 --comm-priority high --sm-carveout $c $S
  launch agL_hi_c$c ag_matmul 8192 8192 3584 --comm-priority high --sm-carveout $c $S
  launch agLp2p_hi_c$c ag_matmul 8192 8192 3584 --comm-priority high --sm-carveout $c --pipeline p2p --sweep streams=2 prefetch=on protocol=A,B
  launch arL_hi_c$c matmul_ar 16384 8192 4096 --comm-priority high --sm-carveout $c $S
  launch rsM_hi_c$c matmul_rs 8192 8192 2048 --comm-priority high --sm-carveout $c $S
  launch serial_c$c matmul_rs 16384 8192 4096 --sm-carveout $c --sweep streams=1 protocol=A,B
done
el done

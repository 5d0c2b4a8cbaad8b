#!/bin/bash
# Session 3, run 5: every configuration replayed as a CUDA graph (no host issue in the timed loop),
# two launch sets in alternating order, communicators' streams at high priority.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
R=/tmp/r; rm -rf $R; mkdir -p $R/g
finish() { tar czf $OUT/results-g.tgz -C $R . ; el "tarred"; }
trap finish EXIT
cmake -S . -B build-gpu -G Ninja -DBRAID_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') > $R/configure.log 2>&1 || exit 1
cmake --build build-gpu -j32 --target braid braid_exec_cli > $R/build.log 2>&1 || { grep -B2 -A12 'error' $R/build.log | head -60; exit 1; }
el built
B=build-gpu/cli/braid
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
COMMON="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
launch() { local name=$1 w=$2 m=$3 k=$4 n=$5; shift 5
  timeout 120 $B run $w $COMMON --m $m --k $k --n $n "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5 ag=$6 rep=$7
  launch ${t}_base_$rep $w $m $k $n --sweep streams=1,2,4 protocol=A,B
  launch ${t}_sched_$rep $w $m $k $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  if [ "$ag" = ag ]; then launch ${t}_p2p_$rep $w $m $k $n --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A,B; fi
}
all() { local rep=$1
  shape agL ag_matmul 8192 8192 3584 ag $rep; shape rsL matmul_rs 16384 8192 4096 no $rep
  shape arL matmul_ar 16384 8192 4096 no $rep; shape agM ag_matmul 4096 8192 1792 ag $rep
  shape rsM matmul_rs 8192 8192 2048 no $rep; shape rplL row_parallel_linear 16384 8192 4096 no $rep
  shape mlpL mlp 4096 4096 8192 no $rep; }
nvidia-smi -L > $R/gpus.txt
all 1; el "set 1"
launch agLp2p_c16_1 ag_matmul 8192 8192 3584 --sm-carveout 16 --pipeline p2p --sweep streams=2 prefetch=on protocol=A,B
launch rsL_c16_1 matmul_rs 16384 8192 4096 --sm-carveout 16 --sweep streams=2,4 pool=1 defer-waits=on protocol=A
[ "${SETS:-2}" = 2 ] || exit 0
all 2; el "set 2"
launch agLp2p_c16_2 ag_matmul 8192 8192 3584 --sm-carveout 16 --pipeline p2p --sweep streams=2 prefetch=on protocol=A,B
launch rsL_c16_2 matmul_rs 16384 8192 4096 --sm-carveout 16 --sweep streams=2,4 pool=1 defer-waits=on protocol=A
el done

#!/bin/bash
# Session 3, runs 2 and 3 (two H100s): the schedules (stream pool, deferred waits, prefetch) against
# the default programs and the p2p pipeline, side by side in one launch set; stream priority and
# NCCL channel experiments. Usage: run2.sh REP [extra]  (REP names the launch set: a, b, ...)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
REP=${1:-a}; EXTRA=${2:-}
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
R=/tmp/r; rm -rf $R; mkdir -p $R/$REP
finish() { tar czf $OUT/results-$REP.tgz -C $R . ; el "tarred $(du -sh $OUT/results-$REP.tgz | cut -f1)"; }
trap finish EXIT
cmake -S . -B build-gpu -G Ninja -DBRAID_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') > $R/configure.log 2>&1 || { tail -30 $R/configure.log; exit 1; }
cmake --build build-gpu -j32 --target braid braid_exec_cli braid_exec_tests > $R/build.log 2>&1 || { grep -B2 -A12 'error' $R/build.log | head -80; exit 1; }
el built
B=build-gpu/cli/braid
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi-$REP.csv
if [ "$EXTRA" = tests ]; then
  timeout 120 build-gpu/tests/braid_exec_tests --gtest_filter='GpuCli.HighPriority*:GpuCli.Sweep*:GpuCli.TimelineOfATimedRun:GpuCli.CopyEnginesRepeat*:Gpu.*' > $R/gpu_tests.log 2>&1; el "gpu tests rc=$?"; grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $R/gpu_tests.log | head; grep -B3 -A20 'Failure' $R/gpu_tests.log | head -40
fi
COMMON="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 10 --timeout 90 --timeline-run 5"
launch() { # name workload m k n flags...
  local name=$1 w=$2 m=$3 k=$4 n=$5; shift 5
  timeout 200 $B run $w $COMMON --m $m --k $k --n $n --timeline $R/$REP/tl_${name}.json "$@" > $R/$REP/run_${name}.log 2>&1
  local rc=$?
  echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/$REP/run_${name}.log) configs"; [ $rc = 0 ] || tail -3 $R/$REP/run_${name}.log
}
shape() { # tag workload m k n agflag
  local t=$1 w=$2 m=$3 k=$4 n=$5 ag=$6
  launch ${t}_base $w $m $k $n --sweep streams=1,2,4 protocol=A,B
  launch ${t}_sched $w $m $k $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  if [ "$ag" = ag ]; then launch ${t}_p2p $w $m $k $n --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A,B; fi
}
shape agL ag_matmul 8192 8192 3584 ag
shape rsL matmul_rs 16384 8192 4096
shape arL matmul_ar 16384 8192 4096
shape agM ag_matmul 4096 8192 1792 ag
shape rsM matmul_rs 8192 8192 2048
shape rplL row_parallel_linear 16384 8192 4096
shape mlpL mlp 4096 4096 8192
el "shapes done"
if [ "$EXTRA" = tests ]; then
  launch agL_sched_hi ag_matmul 8192 8192 3584 --comm-priority high --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  launch rsL_sched_hi matmul_rs 16384 8192 4096 --comm-priority high --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  NCCL_MAX_NCHANNELS=8 launch rsL_sched_ch8 matmul_rs 16384 8192 4096 --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  NCCL_MAX_NCHANNELS=8 launch agL_sched_ch8 ag_matmul 8192 8192 3584 --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  timeout 120 $B run ag_matmul $COMMON --m 8192 --k 8192 --n 3584 --graph --pipeline p2p --prefetch --streams 2 --protocol A > $R/$REP/graph_agL_p2p_prefetch.log 2>&1; el "graph rc=$? $(grep 'rank 0 timing' $R/$REP/graph_agL_p2p_prefetch.log)"
  timeout 120 $B run matmul_rs $COMMON --m 16384 --k 8192 --n 4096 --graph --streams 4 --pool 1 --defer-waits --protocol A > $R/$REP/graph_rsL_sched.log 2>&1; el "graph rc=$? $(grep 'rank 0 timing' $R/$REP/graph_rsL_sched.log)"
fi
el done

#!/bin/bash
# Session 7, call N (2 H200): the copy engines' new reductions (own row in place, allreduce as
# reduce-scatter + allgather of parts): GPU tests, calibrate's copy_engine and collective parts
# (not run on a GPU before), and the GEMM + RS / AR family over both transports as CUDA graphs.
TAG=${TAG:-n}; BUDGET=${BUDGET:-570}; source .dev/common.sh
build braid braid_exec_tests
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
timeout 130 build-gpu/tests/braid_exec_tests --gtest_filter='GpuCli.*CopyEngine*:GpuCli.BackendCuda*:GpuCli.SweepOverBoth*:Gpu.EveryWorkloadOnOneGpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|FAILED" $R/gpu_tests.log | head -20; el tests
timeout 100 $B calibrate --measure --ranks 2 --only copy_engine,collective --quick --min-bytes 4194304 --max-bytes 268435456 --reps 10 -o $R/ce_meas.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; tail -3 $R/calibrate.log; el calibrate
mkdir -p $R/g
launch() { local name=$1; shift 1
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  timeout 100 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5
  launch ${t}_base $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
  launch ${t}_sched $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
shape rsL matmul_rs 16384 8192 4096; shape arL matmul_ar 16384 8192 4096; shape mlpL mlp 4096 4096 8192
shape rplL row_parallel_linear 16384 8192 4096; shape rsM matmul_rs 8192 8192 2048
el "matrix"

#!/bin/bash
# Session 7, call P (2 H200): copy-engine spans that start after the host rendezvous (GPU tests,
# calibrate's copy_engine part again, for the h200 preset's copy_engines constants); the pipelines'
# GEMM chains alone (one rank, D=1, the same per-rank GEMM chunks, as CUDA graphs) against the
# simulator's GEMM model; a third launch set of the GEMM + RS / AR schedules.
TAG=${TAG:-p}; BUDGET=${BUDGET:-500}; source .dev/common.sh
build braid braid_exec_tests
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
timeout 90 build-gpu/tests/braid_exec_tests --gtest_filter='GpuCli.CopyEngine*:GpuCli.SweepOverBoth*:GpuCli.TimelineOfATimedRun:GpuCli.BackendCuda*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|FAILED" $R/gpu_tests.log | head -20; el tests
timeout 60 $B calibrate --measure --ranks 2 --only copy_engine --min-bytes 1048576 --max-bytes 268435456 --reps 10 -o $R/ce_meas.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; grep "copy engines" $R/calibrate.log | tail -20; el calibrate
mkdir -p $R/g $R/chain
launch() { local name=$1 dir=$2; shift 2
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  timeout 100 $B run "$@" > $R/$dir/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/$dir/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/$dir/run_${name}.log; }
C="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph"
SW="--sweep streams=1,2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda"
launch rsL_chain chain matmul_rs $C --m 16384 --k 4096 --n 4096 $SW
launch rsM_chain chain matmul_rs $C --m 8192 --k 4096 --n 2048 $SW
launch agL_chain chain ag_matmul $C --m 8192 --k 8192 --n 1792 --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
el chains
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5
  launch ${t}_base_3 g $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
  launch ${t}_sched_3 g $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
shape rsL matmul_rs 16384 8192 4096; shape arL matmul_ar 16384 8192 4096; shape mlpL mlp 4096 4096 8192
shape rplL row_parallel_linear 16384 8192 4096; shape rsM matmul_rs 8192 8192 2048
el "matrix"

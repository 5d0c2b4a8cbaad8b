#!/bin/bash
# Session 7, call O (2 H200): the empty-part fix and the own-row copy on a side stream; GPU tests;
# calibrate's copy_engine part again (refit); torch's GEMM alone / collective alone for the ideal
# of the reduction family, in the same call as a second launch set of its best schedules; measured
# timelines (interpreted) of the copy engines' pipelined reductions for the per-op check.
TAG=${TAG:-o}; BUDGET=${BUDGET:-560}; source .dev/common.sh
build braid braid_exec_tests
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
timeout 120 build-gpu/tests/braid_exec_tests --gtest_filter='GpuCli.*CopyEngine*:GpuCli.BackendCuda*:GpuCli.SweepOverBoth*:Gpu.EveryWorkloadOnOneGpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|FAILED" $R/gpu_tests.log | head -20; el tests
timeout 60 $B calibrate --measure --ranks 2 --only copy_engine,collective --quick --min-bytes 4194304 --max-bytes 268435456 --reps 10 -o $R/ce_meas.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; grep "copy engines" $R/calibrate.log | tail -12; el calibrate
mkdir -p $R/torch $R/g $R/tl
tref() { timeout 60 torchrun --standalone --nproc-per-node 2 bench/torch_reference.py --workload $1 --mkn $2 --iters 20 > $R/torch/torch_$1_$2.log 2>&1; echo "torch $1 $2 rc=$? $(grep -E '^\{' $R/torch/torch_$1_$2.log | tail -1 | cut -c1-400)"; }
tref matmul_rs 16384,8192,4096; tref matmul_ar 16384,8192,4096; tref matmul_rs 8192,8192,2048; el torch
launch() { local name=$1 dir=$2; shift 2
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  timeout 100 $B run "$@" > $R/$dir/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/$dir/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/$dir/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5
  launch ${t}_base_2 g $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
  launch ${t}_sched_2 g $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
shape rsL matmul_rs 16384 8192 4096; shape arL matmul_ar 16384 8192 4096; shape mlpL mlp 4096 4096 8192
shape rplL row_parallel_linear 16384 8192 4096; shape rsM matmul_rs 8192 8192 2048
launch agL_p2p_2 g ag_matmul $G --m 8192 --k 8192 --n 3584 --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A comm-backend=nccl,cuda
launch agL_coll_2 g ag_matmul $G --m 8192 --k 8192 --n 3584 --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
el "matrix"
V="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 10 --timeline-run 10 --timeout 50 --comm-priority high --pool 1 --defer-waits --prefetch --comm-backend cuda"
launch arL4 tl matmul_ar $V --m 16384 --k 8192 --n 4096 --streams 4 --timeline $R/tl/tl_arL4.json
launch rsL8 tl matmul_rs $V --m 16384 --k 8192 --n 4096 --streams 8 --timeline $R/tl/tl_rsL8.json
launch mlpL4 tl mlp $V --m 4096 --k 4096 --n 8192 --streams 4 --timeline $R/tl/tl_mlpL4.json
el timelines

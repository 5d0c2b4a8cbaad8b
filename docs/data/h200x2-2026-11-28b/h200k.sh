#!/bin/bash
# Session 6, call K (2 H200): call J again after the sweep fix (J lost its runs: a sweep created only its
# first program's communicators). The polling fix (spin, then back off) against sleeping from the first
# poll (BRAID_POLL_SPIN_US=0), side by side, on the p2p AG+GEMM over both transports in one sweep
# (--sweep comm-backend=nccl,cuda); then a
# fresh launch set of the other workloads over both transports for the simulator's validation.
TAG=${TAG:-k}; BUDGET=${BUDGET:-575}; source .dev/common.sh
build braid braid_exec_cli braid_exec_tests
timeout 120 build-gpu/tests/braid_exec_tests --gtest_filter='GpuCli.SweepOverBothTransportsOnTwoGpus:PollBackoff.*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED|     OK) " $R/gpu_tests.log | head; el tests
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
mkdir -p $R/g $R/tune
launch() { local name=$1 spin=$2; shift 2
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  env ${spin:+BRAID_POLL_SPIN_US=$spin} timeout 100 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
P2P="--pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A,B comm-backend=nccl,cuda"
for rep in 1 2; do
  launch agL_p2pspin_$rep "" ag_matmul $G --m 8192 --k 8192 --n 3584 $P2P
  launch agL_p2psleep_$rep 0 ag_matmul $G --m 8192 --k 8192 --n 3584 $P2P
  launch agM_p2pspin_$rep "" ag_matmul $G --m 4096 --k 8192 --n 1792 $P2P
  launch agM_p2psleep_$rep 0 ag_matmul $G --m 4096 --k 8192 --n 1792 $P2P
done; el "poll A/B"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5
  launch ${t}_base_3 "" $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A,B comm-backend=nccl,cuda
  launch ${t}_sched_3 "" $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
shape rsL matmul_rs 16384 8192 4096; shape arL matmul_ar 16384 8192 4096; shape mlpL mlp 4096 4096 8192
shape rsM matmul_rs 8192 8192 2048; shape rplL row_parallel_linear 16384 8192 4096
el "set 3"

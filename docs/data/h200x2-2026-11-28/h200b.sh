#!/bin/bash
# Session 4, call B (2 H200): GPU tests, torch's reference, the CUDA-graph table's first launch set.
TAG=${TAG:-b}; source .dev/common.sh
build braid braid_exec_cli braid_exec_tests
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
timeout 150 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:-GpuCli.EveryWorkloadOnTwoGpus*' > $R/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED  \]" $R/gpu_tests.log | head -20; el tests
mkdir -p $R/torch
tref() { timeout 60 torchrun --standalone --nproc-per-node 2 bench/torch_reference.py --workload $1 --mkn $2 --iters 20 > $R/torch/torch_$1_$2.log 2>&1; echo "torch $1 $2 rc=$? $(tail -c 400 $R/torch/torch_$1_$2.log | tail -1)"; }
tref ag_matmul 8192,8192,3584; tref ag_matmul 4096,8192,1792
tref matmul_rs 16384,8192,4096; tref matmul_rs 8192,8192,2048; tref matmul_ar 16384,8192,4096
el torch
COMMON="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
mkdir -p $R/g
launch() { local name=$1 w=$2 m=$3 k=$4 n=$5; shift 5
  if (( $(left) < 30 )); then echo "$name NOTRUN"; return; fi
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
all ${SET:-1}; el "set ${SET:-1}"

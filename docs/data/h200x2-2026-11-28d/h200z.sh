#!/bin/bash
# Session 8, call Z (2 H200): a fourth launch set of the graph validation matrix (the shapes and
# sweeps of calls N-P, AG+GEMM's second launch), measured after the h200 preset was calibrated
# (calls U, V): points no fit has seen, at this hour's clocks.
TAG=${TAG:-z}; BUDGET=${BUDGET:-500}; source .dev/common.sh
build braid
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
mkdir -p $R/g
launch() { local name=$1; shift 1
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  timeout 100 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5
  launch ${t}_base_4 $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
  launch ${t}_sched_4 $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
launch agL_p2p_4 ag_matmul $G --m 8192 --k 8192 --n 3584 --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A comm-backend=nccl,cuda
launch agL_coll_4 ag_matmul $G --m 8192 --k 8192 --n 3584 --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
shape rsM matmul_rs 8192 8192 2048; shape rsL matmul_rs 16384 8192 4096; shape arL matmul_ar 16384 8192 4096
shape mlpL mlp 4096 4096 8192; shape rplL row_parallel_linear 16384 8192 4096
el "matrix"

#!/bin/bash
# Session 6, calls H and I (2 H200): every graph configuration of the table over NCCL and over the
# copy engines (--backend-override cuda), side by side in one call, alternating per shape; the p2p
# pipeline with the own shard copied and in place. SET=1 runs NCCL first, SET=2 the copy engines first.
TAG=${TAG:-h}; BUDGET=${BUDGET:-570}; source .dev/common.sh
build braid braid_exec_cli
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
mkdir -p $R/g
launch() { local name=$1; shift 1
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  timeout 100 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5 ag=$6 c=$7 rep=$8
  launch ${t}_${c}_base_$rep $w $G --backend-override $c --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A,B
  launch ${t}_${c}_sched_$rep $w $G --backend-override $c --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  if [ "$ag" = ag ]; then launch ${t}_${c}_p2p_$rep $w $G --backend-override $c --m $m --k $k --n $n --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A,B own-shard=copy,in-place; fi
}
if [ "${SET:-1}" = 1 ]; then C1=nccl C2=cuda; else C1=cuda C2=nccl; fi
both() { shape "$@" $C1 $SET; shape "$@" $C2 $SET; }
both agL ag_matmul 8192 8192 3584 ag; both agM ag_matmul 4096 8192 1792 ag
both rsL matmul_rs 16384 8192 4096 no; both arL matmul_ar 16384 8192 4096 no
both rplL row_parallel_linear 16384 8192 4096 no; both mlpL mlp 4096 4096 8192 no
both rsM matmul_rs 8192 8192 2048 no
el "set $SET"

#!/bin/bash
# Session 4, call C (2 H200): the graph table's second launch set; interpreted timelines of
# every chunk count and protocol for the simulator's validation (two launches each).
TAG=${TAG:-c}; source .dev/common.sh
build braid braid_exec_cli
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
COMMON="--backend cuda --ranks 2 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
mkdir -p $R/g $R/fwd $R/tl
launch() { local dir=$1 name=$2; shift 2
  if (( $(left) < 30 )); then echo "$name NOTRUN"; return; fi
  timeout 120 $B run "$@" > $R/$dir/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/$dir/run_${name}.log) configs"; [ $rc = 0 ] || tail -n 3 $R/$dir/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5 ag=$6 rep=$7
  launch g ${t}_base_$rep $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A,B
  launch g ${t}_sched_$rep $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A
  if [ "$ag" = ag ]; then launch g ${t}_p2p_$rep $w $G --m $m --k $k --n $n --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A,B; fi
}
shape agL ag_matmul 8192 8192 3584 ag 2; shape rsL matmul_rs 16384 8192 4096 no 2
shape arL matmul_ar 16384 8192 4096 no 2; shape agM ag_matmul 4096 8192 1792 ag 2
shape rsM matmul_rs 8192 8192 2048 no 2; shape rplL row_parallel_linear 16384 8192 4096 no 2
shape mlpL mlp 4096 4096 8192 no 2; el "graph set 2"
V="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 10 --timeline-run 10 --timeout 90 --comm-priority high"
for rep in 1 2; do
  launch tl agL_$rep ag_matmul $V --m 8192 --k 8192 --n 3584 --timeline $R/tl/tl_agL_$rep.json --sweep streams=1,2,4 protocol=A,B,C
  launch tl rsL_$rep matmul_rs $V --m 16384 --k 8192 --n 4096 --timeline $R/tl/tl_rsL_$rep.json --sweep streams=1,2,4 protocol=A,B,C
  launch tl arL_$rep matmul_ar $V --m 16384 --k 8192 --n 4096 --timeline $R/tl/tl_arL_$rep.json --sweep streams=1,2,4 protocol=A,B,C
  launch tl mlpL_$rep mlp $V --m 4096 --k 4096 --n 8192 --timeline $R/tl/tl_mlpL_$rep.json --sweep streams=1,2,4 protocol=A,B,C
  launch tl agM_$rep ag_matmul $V --m 4096 --k 8192 --n 1792 --timeline $R/tl/tl_agM_$rep.json --sweep streams=1,2,4 protocol=A,B,C
done; el "timelines"

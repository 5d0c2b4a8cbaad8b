#!/bin/bash
# Session 9, call AC (2 H200): the GEMM slowdown under continuous load (per-GEMM events over
# 600 ms, and 20 ms bursts with idle gaps), with SM clock and power sampled every 50 ms; then a
# sixth launch set of the validation matrix.
TAG=${TAG:-ac}; BUDGET=${BUDGET:-420}; source .dev/common.sh
build braid
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active --format=csv -lms 50 > $R/smi_trace.csv 2>&1 &
SMI=$!
echo "probe start $(date +%s.%N)" > $R/marks.txt
CUDA_VISIBLE_DEVICES=0 timeout 90 python3 .dev/ramp_probe.py > $R/ramp.log 2>&1; echo "probe rc=$?"; tail -4 $R/ramp.log; el probe
echo "matrix start $(date +%s.%N)" >> $R/marks.txt
mkdir -p $R/g
launch() { local name=$1; shift 1
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  echo "$name $(date +%s.%N)" >> $R/marks.txt
  timeout 100 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5
  launch ${t}_base_6 $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
  launch ${t}_sched_6 $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
shape arL matmul_ar 16384 8192 4096; shape mlpL mlp 4096 4096 8192; shape rplL row_parallel_linear 16384 8192 4096
launch agL_p2p_6 ag_matmul $G --m 8192 --k 8192 --n 3584 --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A comm-backend=nccl,cuda
launch agL_coll_6 ag_matmul $G --m 8192 --k 8192 --n 3584 --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
shape rsM matmul_rs 8192 8192 2048; shape rsL matmul_rs 16384 8192 4096
el "matrix"
kill $SMI

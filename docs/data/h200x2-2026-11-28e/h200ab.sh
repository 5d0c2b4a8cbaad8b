#!/bin/bash
# Session 9, call AB (2 H200): calibrate's GEMMs and overlaps on a grid of GEMM shapes that no
# validation program runs (so every validation point is held out), with the SM clock and power
# sampled every 200 ms; a sustained-GEMM probe; then a fifth launch set of the validation matrix
# in the same call (same clocks as the calibration).
TAG=${TAG:-ab}; BUDGET=${BUDGET:-575}; source .dev/common.sh
build braid
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 200 > $R/smi_trace.csv 2>&1 &
SMI=$!
GRID=3072x3072x3072,6144x6144x2048,12288x3072x2048,1536x6144x6144,24576x2048x2048,768x8192x8192
GRID=$GRID,6144x1536x12288,3072x5120x5120,10240x2560x3072,1280x5120x2048,8320x4096x4096,4096x4224x4096
GRID=$GRID,2560x2560x10240,16384x1024x8192,640x3072x8192,12288x6144x1536,5120x5120x1024,3584x7168x3584
GRID=$GRID,20480x4096x2048,1024x1024x16384,6144x3072x6144,2304x9216x2304,1536x1536x4096,448x7168x4096
GRID=$GRID,12288x12288x4096,9216x9216x9216
echo "calibrate start $(date +%s.%N)" > $R/marks.txt
timeout 240 $B calibrate --measure --ranks 2 --only gemm,overlap,copy_engine,collective --dtypes bf16 --gemm-shapes $GRID --min-bytes 1048576 --max-bytes 268435456 --reps 10 -o $R/grid_meas.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; tail -3 $R/calibrate.log; el calibrate
echo "probe start $(date +%s.%N)" >> $R/marks.txt
CUDA_VISIBLE_DEVICES=0 timeout 40 python3 .dev/sustain_probe.py > $R/sustain.log 2>&1; echo "probe rc=$?"; cat $R/sustain.log | tail -4; el probe
echo "matrix start $(date +%s.%N)" >> $R/marks.txt
mkdir -p $R/g
launch() { local name=$1; shift 1
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  echo "$name $(date +%s.%N)" >> $R/marks.txt
  timeout 100 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5
  launch ${t}_base_5 $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
  launch ${t}_sched_5 $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
shape rsM matmul_rs 8192 8192 2048; shape rsL matmul_rs 16384 8192 4096
launch agL_p2p_5 ag_matmul $G --m 8192 --k 8192 --n 3584 --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A comm-backend=nccl,cuda
launch agL_coll_5 ag_matmul $G --m 8192 --k 8192 --n 3584 --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
shape arL matmul_ar 16384 8192 4096; shape mlpL mlp 4096 4096 8192; shape rplL row_parallel_linear 16384 8192 4096
el "matrix"
kill $SMI

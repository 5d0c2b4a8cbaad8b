#!/bin/bash
# Session 9, call AD (2 H200): with --cool-down (every measurement and every run starts at an idle
# GPU's clocks): the one-GPU tests, calibrate's GEMMs, overlaps, collectives and copy engines on
# the grid of GEMM shapes no validation program runs, then two launch sets of the validation
# matrix (seventh and eighth), SM clock and power sampled every 100 ms.
TAG=${TAG:-ad}; BUDGET=${BUDGET:-570}; source .dev/common.sh
build braid braid_exec_tests
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > $R/smi_trace.csv 2>&1 &
SMI=$!
timeout 100 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu.*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head; el gputests
timeout 60 $B run matmul_ar --backend cuda --ranks 2 --dtype bf16 --m 4096 --k 4096 --n 4096 --streams 2 --repeat 5 --graph --cool-down 20 > $R/cooldown_smoke.log 2>&1; echo "cool-down smoke rc=$?"; grep -i "cool-down\|timing\|match" $R/cooldown_smoke.log | head -5
GRID=3072x3072x3072,6144x6144x2048,12288x3072x2048,1536x6144x6144,24576x2048x2048,768x8192x8192
GRID=$GRID,6144x1536x12288,3072x5120x5120,10240x2560x3072,1280x5120x2048,8320x4096x4096,4096x4224x4096
GRID=$GRID,2560x2560x10240,16384x1024x8192,640x3072x8192,12288x6144x1536,5120x5120x1024,3584x7168x3584
GRID=$GRID,20480x4096x2048,1024x1024x16384,6144x3072x6144,2304x9216x2304,1536x1536x4096,448x7168x4096
GRID=$GRID,12288x12288x4096,9216x9216x9216
echo "calibrate start $(date +%s.%N)" > $R/marks.txt
timeout 200 $B calibrate --measure --ranks 2 --only gemm,overlap,copy_engine,collective --dtypes bf16 --gemm-shapes $GRID --min-bytes 1048576 --max-bytes 268435456 --reps 10 --cool-down 50 -o $R/grid_cool.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; tail -2 $R/calibrate.log; el calibrate
mkdir -p $R/g
launch() { local name=$1; shift 1
  if (( $(left) < 30 )); then echo "$name NOTRUN"; return; fi
  echo "$name $(date +%s.%N)" >> $R/marks.txt
  timeout 120 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/g/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 110 --graph --comm-priority high --cool-down 20"
shape() { local t=$1 w=$2 m=$3 k=$4 n=$5 s=$6
  launch ${t}_base_$s $w $G --m $m --k $k --n $n --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda
  launch ${t}_sched_$s $w $G --m $m --k $k --n $n --sweep streams=2,4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=nccl,cuda
}
ag() { launch agL_p2p_$1 ag_matmul $G --m 8192 --k 8192 --n 3584 --pipeline p2p --sweep streams=1,2 prefetch=off,on protocol=A comm-backend=nccl,cuda
  launch agL_coll_$1 ag_matmul $G --m 8192 --k 8192 --n 3584 --sweep streams=1,2,4 protocol=A comm-backend=nccl,cuda; }
shape rsM matmul_rs 8192 8192 2048 7; shape arL matmul_ar 16384 8192 4096 7; ag 7
shape mlpL mlp 4096 4096 8192 7; shape rplL row_parallel_linear 16384 8192 4096 7; shape rsL matmul_rs 16384 8192 4096 7
el "set 7"
shape rplL row_parallel_linear 16384 8192 4096 8; shape rsL matmul_rs 16384 8192 4096 8; ag 8
shape arL matmul_ar 16384 8192 4096 8; shape rsM matmul_rs 8192 8192 2048 8; shape mlpL mlp 4096 4096 8192 8
el "set 8"
kill $SMI

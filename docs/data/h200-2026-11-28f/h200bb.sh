#!/bin/bash
# Session 10, call BB (1 H200): calibrate's GEMMs on integer operands (what braid run seeds) and on
# normal ones, side by side (integers, normal, integers again: drift shows), over the plan's bf16
# shapes, the validation workloads' 14 and call AB's grid of 26; then braid run of single-GPU GEMMs
# on both kinds of inputs; then every GPU test.
TAG=${TAG:-bb}; BUDGET=${BUDGET:-540}; source .dev/common.sh
build braid
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > $R/smi_trace.csv 2>&1 &
SMI=$!
WL=16384x4096x4096,8192x4096x4096,4096x4096x4096,2048x4096x4096,1024x4096x4096,512x4096x4096
WL=$WL,8192x2048x4096,4096x2048x4096,2048x2048x4096,1024x2048x4096,8192x3584x8192,4096x3584x8192,2048x3584x8192,1024x3584x8192
GRID=3072x3072x3072,6144x6144x2048,12288x3072x2048,1536x6144x6144,24576x2048x2048,768x8192x8192
GRID=$GRID,6144x1536x12288,3072x5120x5120,10240x2560x3072,1280x5120x2048,8320x4096x4096,4096x4224x4096
GRID=$GRID,2560x2560x10240,16384x1024x8192,640x3072x8192,12288x6144x1536,5120x5120x1024,3584x7168x3584
GRID=$GRID,20480x4096x2048,1024x1024x16384,6144x3072x6144,2304x9216x2304,1536x1536x4096,448x7168x4096
GRID=$GRID,12288x12288x4096,9216x9216x9216
cal() { local name=$1; shift
  echo "$name $(date +%s.%N)" >> $R/marks.txt
  timeout 120 $B calibrate --measure --ranks 1 --only gemm --dtypes bf16 --gemm-shapes $WL,$GRID --reps 10 -o $R/gemm_$name.json "$@" > $R/cal_$name.log 2>&1
  echo "cal $name rc=$? $(grep -c 'gemm ' $R/cal_$name.log) gemms"; el "cal $name"; }
cal int1 --gemm-operands integers
cal nrm1 --gemm-operands normal
cal int2
cal nrm2 --gemm-operands normal
cal intcool --cool-down 50
cal nrmcool --cool-down 50 --gemm-operands normal
# braid run on one GPU: a GEMM-only program on both kinds of inputs, twice each.
mkdir -p $R/run
G="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 60"
for rep in 1 2; do for inp in integers normal; do
  timeout 60 $B run matmul_rs $G --m 8192 --k 8192 --n 3584 --inputs $inp > $R/run/mm_${inp}_$rep.log 2>&1
  echo "run mm $inp $rep rc=$? $(grep 'rank 0 timing' $R/run/mm_${inp}_$rep.log | grep -o 'wall [0-9.]* us' | head -1)"
  timeout 60 $B run mlp $G --m 4096 --k 4096 --n 8192 --inputs $inp > $R/run/mlp_${inp}_$rep.log 2>&1
  echo "run mlp $inp $rep rc=$? $(grep 'rank 0 timing' $R/run/mlp_${inp}_$rep.log | grep -o 'wall [0-9.]* us' | head -1)"
done; done
# the check on normal bf16 inputs on the GPU
timeout 90 $B run matmul_rs --backend cuda --ranks 1 --devices 1 --dtype bf16 --m 2048 --k 2048 --n 1024 --inputs normal > $R/run/check_normal.log 2>&1
echo "check normal rc=$? $(grep -c 'match' $R/run/check_normal.log)"; tail -2 $R/run/check_normal.log
kill $SMI
el measured
if (( $(left) > 200 )); then
  build braid_exec_tests
  timeout $(( $(left) - 20 )) build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED" $R/gpu_tests.log | head
fi
el done

#!/bin/bash
# Session 10, call BE (1 H200): is a GEMM slower inside a program than in calibrate's
# microbenchmark? Single-GPU programs (one chunk) as CUDA-graph replays (wall = device time, no
# host in it) and interpreted with a measured timeline, next to calibrate's GEMMs of the same
# shapes on the same operands (integers), in one process order repeated twice.
TAG=${TAG:-be}; BUDGET=${BUDGET:-330}; source .dev/common.sh
build braid
mkdir -p $R/run
G="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --streams 1"
prog() { local name=$1; shift
  timeout 60 $B run "$@" $G --graph --repeat 50 > $R/run/${name}_graph_$rep.log 2>&1
  echo "$name graph rc=$? $(grep 'rank 0 timing' $R/run/${name}_graph_$rep.log | grep -o 'wall [0-9.]* us' | head -1)"
  timeout 60 $B run "$@" $G --repeat 20 --timeline-run 10 --timeline $R/run/${name}_tl_$rep.json > $R/run/${name}_tl_$rep.log 2>&1
  echo "$name interp rc=$? $(grep 'rank 0 timing' $R/run/${name}_tl_$rep.log | grep -o 'wall [0-9.]* us' | head -1)"; }
for rep in 1 2; do
  timeout 60 $B calibrate --measure --ranks 1 --only gemm --dtypes bf16 --gemm-shapes 16384x4096x4096,8192x2048x4096,8192x3584x8192,4096x8192x4096,4096x4096x8192 -o $R/gemm_$rep.json > $R/cal_$rep.log 2>&1
  echo "cal rc=$?"; grep "gemm " $R/cal_$rep.log | tail -5
  prog rsL matmul_rs --m 16384 --k 4096 --n 4096
  prog rsM matmul_rs --m 8192 --k 4096 --n 2048
  prog agL ag_matmul --m 8192 --k 8192 --n 3584
  prog mlpL mlp --m 4096 --k 4096 --n 8192
done
el done

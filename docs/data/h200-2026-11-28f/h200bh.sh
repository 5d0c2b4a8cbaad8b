#!/bin/bash
# Session 10, call BH (1 H200): calibrate's new default GEMM plan (square, tall, wide and deep
# shapes at every target) on integers, two passes, bf16.
TAG=${TAG:-bh}; BUDGET=${BUDGET:-300}; source .dev/common.sh
build braid
for rep in 1 2; do
  timeout 60 $B calibrate --measure --ranks 1 --only gemm --dtypes bf16 --reps 10 -o $R/plan_$rep.json > $R/cal_$rep.log 2>&1
  echo "cal $rep rc=$? $(grep -c 'gemm ' $R/cal_$rep.log) gemms"
done
el done

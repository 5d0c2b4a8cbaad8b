#!/bin/bash
# Session 7, call T (2 H200): calibrate's overlap part (GEMM beside NCCL collectives) with the
# workloads' GEMM shapes, to refit the contention constants with measured GEMMs in place.
TAG=${TAG:-t}; BUDGET=${BUDGET:-250}; source .dev/common.sh
build braid
SH=16384x4096x4096,8192x4096x4096,4096x4096x4096,2048x4096x4096,1024x4096x4096,512x4096x4096
SH=$SH,8192x2048x4096,4096x2048x4096,2048x2048x4096,1024x2048x4096
SH=$SH,8192x3584x8192,4096x3584x8192,2048x3584x8192,1024x3584x8192
timeout 170 $B calibrate --measure --ranks 2 --only gemm,overlap --quick --dtypes bf16 --gemm-shapes $SH --reps 10 -o $R/overlap_meas.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; grep -i "beside" $R/calibrate.log | head -20; el calibrate

#!/bin/bash
# Session 7, call Q (2 H200): the workloads' per-rank GEMMs timed by braid calibrate (--gemm-shapes,
# for the h200 preset's measured_gemms), the NCCL collectives again, and the host profile of
# interpreted runs (where the per-instruction host cost goes on the GPU).
TAG=${TAG:-q}; BUDGET=${BUDGET:-420}; source .dev/common.sh
build braid
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
SH=16384x4096x4096,8192x4096x4096,4096x4096x4096,2048x4096x4096,1024x4096x4096,512x4096x4096
SH=$SH,8192x2048x4096,4096x2048x4096,2048x2048x4096,1024x2048x4096
SH=$SH,8192x3584x8192,4096x3584x8192,2048x3584x8192,1024x3584x8192
timeout 120 $B calibrate --measure --ranks 2 --only gemm,collective --quick --dtypes bf16 --gemm-shapes $SH --min-bytes 1048576 --max-bytes 268435456 --reps 20 -o $R/gemm_meas.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; grep -E "gemm .*x4096 |x8192 " $R/calibrate.log | head -20; el calibrate
mkdir -p $R/hp
hp() { local name=$1; shift; timeout 60 $B run "$@" --host-profile > $R/hp/run_${name}.log 2>&1; echo "$name rc=$? $(grep -c 'host profile' $R/hp/run_${name}.log) tables"; }
hp small1 ag_matmul --backend cuda --ranks 1 --devices 1 --m 64 --k 64 --n 64 --streams 8 --repeat 200 --no-check --no-poison
hp small1s1 ag_matmul --backend cuda --ranks 1 --devices 1 --m 64 --k 64 --n 64 --streams 1 --repeat 200 --no-check --no-poison
hp rs2nccl matmul_rs --backend cuda --ranks 2 --dtype bf16 --m 1024 --k 1024 --n 1024 --streams 4 --repeat 100 --no-check --no-poison
hp rs2cuda matmul_rs --backend cuda --ranks 2 --dtype bf16 --m 1024 --k 1024 --n 1024 --streams 4 --repeat 100 --no-check --no-poison --comm-backend cuda
hp agL2 ag_matmul --backend cuda --ranks 2 --dtype bf16 --m 8192 --k 8192 --n 3584 --streams 4 --repeat 20 --no-check --no-poison
el hostprofile

#!/bin/bash
# Session 8, call U (2 H200): calibrate's overlap part with the workloads' GEMM shapes beside
# NCCL and copy-engine collectives (the new transport field), the copy-engine collectives and the
# GEMMs again in the same launch; host profile with mm folding; one-GPU numerics of every workload.
TAG=${TAG:-u}; BUDGET=${BUDGET:-560}; source .dev/common.sh
build braid braid_exec_tests
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
timeout 60 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu.*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head; el gputests
SH=16384x4096x4096,8192x4096x4096,4096x4096x4096,2048x4096x4096,1024x4096x4096,512x4096x4096
SH=$SH,8192x2048x4096,4096x2048x4096,2048x2048x4096,1024x2048x4096
SH=$SH,8192x3584x8192,4096x3584x8192,2048x3584x8192,1024x3584x8192
timeout 300 $B calibrate --measure --ranks 2 --only gemm,overlap,copy_engine --dtypes bf16 --gemm-shapes $SH --min-bytes 1048576 --max-bytes 268435456 --reps 10 -o $R/overlap_meas.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; grep -i "beside" $R/calibrate.log | head -100; el calibrate
mkdir -p $R/hp
hp() { local name=$1; shift; timeout 60 $B run "$@" --host-profile > $R/hp/run_${name}.log 2>&1; echo "$name rc=$? $(grep -c 'host profile' $R/hp/run_${name}.log) tables"; }
hp small1 ag_matmul --backend cuda --ranks 1 --devices 1 --m 64 --k 64 --n 64 --streams 8 --repeat 200 --no-check --no-poison
hp small1s1 ag_matmul --backend cuda --ranks 1 --devices 1 --m 64 --k 64 --n 64 --streams 1 --repeat 200 --no-check --no-poison
hp rs2nccl matmul_rs --backend cuda --ranks 2 --dtype bf16 --m 1024 --k 1024 --n 1024 --streams 4 --repeat 100 --no-check --no-poison
el hostprofile

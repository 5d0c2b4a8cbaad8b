#!/bin/bash
# Session 8, call V (2 H200): (1) probe: is a same-device copy an SM kernel that waits behind a
# GEMM's dispatch, and do the batch-copy overlap hint or a high stream priority change it;
# (2) calibrate's overlap part at --comm-priority high (the priority every graph benchmark runs at).
TAG=${TAG:-v}; BUDGET=${BUDGET:-420}; source .dev/common.sh
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
echo "nvcc: $NVCC"
if [ -n "$NVCC" ]; then $NVCC -O2 -arch=sm_90 -o /tmp/probe .dev/ce_copy_probe.cu > $R/probe_build.log 2>&1; /tmp/probe | tee $R/probe.txt; fi
python3 .dev/prio_probe.py 2>&1 | tee $R/prio_probe.txt
el probe
build braid
SH=16384x4096x4096,8192x4096x4096,4096x4096x4096,2048x4096x4096,1024x4096x4096,8192x2048x4096,2048x2048x4096,8192x3584x8192,4096x3584x8192,2048x3584x8192
timeout 240 $B calibrate --measure --ranks 2 --only overlap --comm-priority high --dtypes bf16 --gemm-shapes $SH --max-bytes 268435456 --reps 10 -o $R/overlap_high.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; grep -i "beside" $R/calibrate.log | sed 's/^\[rank 0\] //' | cut -c1-170; el calibrate

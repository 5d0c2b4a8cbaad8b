#!/bin/bash
# Session 10, call BD (1 H200): GEMMs with the L2 warm (back to back) and cold (flushed before each).
TAG=${TAG:-bd}; BUDGET=${BUDGET:-200}; source .dev/common.sh
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > $R/smi_trace.csv 2>&1 &
SMI=$!
CUDA_VISIBLE_DEVICES=0 timeout 150 python3 .dev/l2_probe.py $R/l2.json > $R/l2.log 2>&1; echo "probe rc=$?"; tail -2 $R/l2.log; el probe
kill $SMI

#!/bin/bash
# Session 12, call DB (1 H200): the SM clock after idle, sampled on the device (clock_probe.cu).
TAG=${TAG:-db}; BUDGET=${BUDGET:-200}; source .dev/common.sh
nvcc -O2 -arch=sm_90 -o $R/clock_probe .dev/clock_probe.cu -lcublas > $R/nvcc.log 2>&1 || { cat $R/nvcc.log; exit 1; }
el built
timeout 150 $R/clock_probe $R/clock.jsonl > $R/clock_probe.log 2>&1; echo "probe rc=$?"; tail -2 $R/clock_probe.log
python3 .dev/clock_summary.py $R/clock.jsonl | tee $R/clock_summary.txt
rm $R/clock_probe; el done

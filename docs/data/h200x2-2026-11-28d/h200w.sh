#!/bin/bash
# Session 8, call W (one H200): the two probes of call V, fixed: a same-device copy and a small
# kernel beside a multi-wave spin kernel and beside cuBLAS GEMMs, at normal and high priority.
TAG=${TAG:-w}; BUDGET=${BUDGET:-200}; source .dev/common.sh
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -O2 -arch=sm_90 -o /tmp/probe .dev/ce_copy_probe.cu > $R/probe_build.log 2>&1 || cat $R/probe_build.log | head -20
/tmp/probe | tee $R/probe.txt
python3 .dev/prio_probe.py 2>&1 | tee $R/prio_probe.txt
el probes

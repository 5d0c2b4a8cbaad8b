#!/bin/bash
# Session 8, call X (one H200): probe 2 (raw cudaMemcpyAsync vs torch copy_ vs a kernel beside a cuBLAS GEMM).
TAG=${TAG:-x}; BUDGET=${BUDGET:-120}; source .dev/common.sh
python3 .dev/prio_probe2.py 2>&1 | tee $R/prio_probe2.txt
el probe

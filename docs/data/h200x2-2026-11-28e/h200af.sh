#!/bin/bash
# Session 9, call AF (2 H200): measured timelines of AG+GEMM 8192x8192x3584 serial (NCCL and
# copy engines) to see the allgather inside the program against alone.
TAG=${TAG:-af}; BUDGET=${BUDGET:-250}; source .dev/common.sh
build braid
for cb in nccl cuda; do
  timeout 60 $B run ag_matmul --backend cuda --ranks 2 --dtype bf16 --m 8192 --k 8192 --n 3584 --streams 1 --comm-backend $cb --no-check --no-poison --repeat 10 --timeline-run 8 --timeline $R/tl_agL_s1_$cb.json > $R/run_$cb.log 2>&1; echo "$cb rc=$?"; grep "rank 0 timing" $R/run_$cb.log
done
el done

#!/bin/bash
# Session 6, call M (2 H200): measured timelines of the pipelined GEMM + RS / AR with the schedules
# (pool 1, deferred waits, prefetch) over both transports: why the copy engines' pipelined
# reductions hide almost nothing (ACCURACY.md, sixth session).
TAG=${TAG:-m}; BUDGET=${BUDGET:-200}; source .dev/common.sh
build braid braid_exec_cli
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
mkdir -p $R/tl
launch() { local name=$1; shift 1
  if (( $(left) < 20 )); then echo "$name NOTRUN"; return; fi
  timeout 60 $B run "$@" > $R/tl/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/tl/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/tl/run_${name}.log; }
V="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 10 --timeline-run 10 --timeout 50 --comm-priority high --pool 1 --defer-waits --prefetch"
for rep in 1 2; do
  launch rsLs_$rep matmul_rs $V --m 16384 --k 8192 --n 4096 --timeline $R/tl/tl_rsLs_$rep.json --sweep streams=4 protocol=A comm-backend=nccl,cuda
  launch arLs_$rep matmul_ar $V --m 16384 --k 8192 --n 4096 --timeline $R/tl/tl_arLs_$rep.json --sweep streams=4 protocol=A comm-backend=nccl,cuda
done; el timelines

#!/bin/bash
# Session 6, call L (2 H200): measured timelines (interpreted, the 10th timed run) of programs on
# the copy engines beside the same programs on NCCL (--sweep comm-backend=nccl,cuda), for the
# simulator's per-op check of the copy engines: the reductions of GEMM+RS / GEMM+AR, the allgather
# of AG+GEMM, and the p2p AG+GEMM with and without prefetch.
TAG=${TAG:-l}; BUDGET=${BUDGET:-400}; source .dev/common.sh
build braid braid_exec_cli
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
mkdir -p $R/tl
launch() { local name=$1; shift 1
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  timeout 100 $B run "$@" > $R/tl/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/tl/run_${name}.log) configs [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/tl/run_${name}.log; }
V="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 10 --timeline-run 10 --timeout 90 --comm-priority high"
for rep in 1 2; do
  launch rsL_$rep matmul_rs $V --m 16384 --k 8192 --n 4096 --timeline $R/tl/tl_rsL_$rep.json --sweep streams=1,2 protocol=A comm-backend=nccl,cuda
  launch arL_$rep matmul_ar $V --m 16384 --k 8192 --n 4096 --timeline $R/tl/tl_arL_$rep.json --sweep streams=1,2 protocol=A comm-backend=nccl,cuda
  launch rsM_$rep matmul_rs $V --m 8192 --k 8192 --n 2048 --timeline $R/tl/tl_rsM_$rep.json --sweep streams=1,2 protocol=A comm-backend=nccl,cuda
  launch agL_$rep ag_matmul $V --m 8192 --k 8192 --n 3584 --timeline $R/tl/tl_agL_$rep.json --sweep streams=1,2 protocol=A comm-backend=nccl,cuda
  launch agMp_$rep ag_matmul $V --m 4096 --k 8192 --n 1792 --pipeline p2p --timeline $R/tl/tl_agMp_$rep.json --sweep streams=2 prefetch=off,on protocol=A comm-backend=nccl,cuda
  launch agLp_$rep ag_matmul $V --m 8192 --k 8192 --n 3584 --pipeline p2p --timeline $R/tl/tl_agLp_$rep.json --sweep streams=2 prefetch=off,on protocol=A comm-backend=nccl,cuda
done; el timelines

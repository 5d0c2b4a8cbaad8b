#!/bin/bash
# Session 8, call Y (2 H200): every GPU test at this session's executor (microbench overlaps on the
# copy engines, matmul folded into mm, calibrate --comm-priority); then an attempt on GEMM + all-
# reduce: an SM carve-out so the copy engines' local sums find SMs beside the GEMMs (CUDA graphs).
TAG=${TAG:-y}; BUDGET=${BUDGET:-570}; source .dev/common.sh
build braid braid_exec_tests
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
timeout 300 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED" $R/gpu_tests.log | head -20; el tests
mkdir -p $R/g
launch() { local name=$1; shift 1
  if (( $(left) < 30 )); then echo "$name NOTRUN"; return; fi
  timeout 100 $B run "$@" > $R/g/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep 'rank 0 timing' $R/g/run_${name}.log | sed 's/.*timing \[\(.*\)\].*wall \([0-9.]*\) us.*/\1: \2/' | tr '\n' ';') [$(( $(date +%s) - T0 )) s]"; [ $rc = 0 ] || tail -n 3 $R/g/run_${name}.log; }
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
AR="matmul_ar $G --m 16384 --k 8192 --n 4096 --sweep streams=4,8 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=cuda"
RS="matmul_rs $G --m 8192 --k 8192 --n 2048 --sweep streams=2,4 pool=1 prefetch=on defer-waits=on protocol=A comm-backend=cuda"
for rep in 1 2; do
  for c in 0 8 16; do launch arC${c}_sched_$rep $AR --sm-carveout $c; done
  for c in 0 16; do launch rsMC${c}_sched_$rep $RS --sm-carveout $c; done
done
el carveout

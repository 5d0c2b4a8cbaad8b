#!/bin/bash
# Session 5, call D (2 H200): the GPU tests after the launcher's SIGPIPE change (f72ffce); the p2p
# pipeline reading its own shard in place (forward-own-shard) checked under three launchers and
# both transports, then timed side by side with --copy-own-shard as CUDA-graph replays.
TAG=${TAG:-d}; BUDGET=${BUDGET:-560}; source .dev/common.sh
build braid braid_exec_cli braid_exec_tests
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
mkdir -p $R/c $R/g
launch() { local dir=$1 name=$2; shift 2
  if (( $(left) < 25 )); then echo "$name NOTRUN"; return; fi
  timeout 120 "$@" > $R/$dir/run_${name}.log 2>&1
  local rc=$?; echo "$name rc=$rc $(grep -c 'rank 0 timing' $R/$dir/run_${name}.log) timed, $(grep -c 'outputs match the float64' $R/$dir/run_${name}.log) matched, $(grep -c 'own shard copied' $R/$dir/run_${name}.log) copied"; [ $rc = 0 ] || tail -n 4 $R/$dir/run_${name}.log; }
# Correctness: every output against the float64 reference (default checks on).
K="ag_matmul --backend cuda --pipeline p2p --m 64 --k 32 --n 32 --sweep streams=1,2 protocol=A,B,C copy-own-shard=off,on prefetch=off,on"
for t in nccl cuda; do
  launch c ranks_$t $B run $K --ranks 2 --backend-override $t
  launch c torchrun_$t torchrun --nproc-per-node 2 --master-port 2950$([ $t = nccl ] && echo 1 || echo 2) --no-python -- $B run $K --backend-override $t
  launch c mpirun_$t mpirun --allow-run-as-root -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=2951$([ $t = nccl ] && echo 1 || echo 2) $B run $K --backend-override $t
done; el "p2p correctness"
# The H200 microbenchmarks for a calibration (fitted here on the CPU machine, held out against
# call C's timelines).
timeout 240 $B calibrate --measure --ranks 2 -o $R/h200x2.measurements.json > $R/calibrate.log 2>&1
echo "calibrate rc=$?"; tail -n 3 $R/calibrate.log; el "calibrate"
# Side by side: in place vs copied, graph replays, two launch sets.
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 90 --graph --comm-priority high"
for rep in 1 2; do
  launch g agL_fwd_$rep $B run ag_matmul $G --m 8192 --k 8192 --n 3584 --pipeline p2p --sweep streams=1,2,4 copy-own-shard=off,on prefetch=off,on protocol=A
  launch g agM_fwd_$rep $B run ag_matmul $G --m 4096 --k 8192 --n 1792 --pipeline p2p --sweep streams=1,2,4 copy-own-shard=off,on prefetch=off,on protocol=A
done; el "graph side by side"
timeout $(( $(left) > 60 ? 200 : 1 )) build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:Distributed.*:-GpuCli.EveryWorkloadOnTwoGpus*' > $R/gpu_tests.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $R/gpu_tests.log | head; el done

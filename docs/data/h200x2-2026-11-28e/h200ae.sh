#!/bin/bash
# Session 9, call AE (2 H200): every GPU test at this session's executor; how the cost of
# starting from idle depends on the idle time (rsM and arL, serial and scheduled, --cool-down 0 to 50).
TAG=${TAG:-ae}; BUDGET=${BUDGET:-480}; source .dev/common.sh
build braid braid_exec_tests
timeout 300 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head; el gputests
mkdir -p $R/cd
G="--backend cuda --ranks 2 --dtype bf16 --no-check --no-poison --repeat 20 --timeout 60 --graph --comm-priority high"
for cd in 0 1 3 10 50; do
  if (( $(left) < 20 )); then echo "cd $cd NOTRUN"; continue; fi
  timeout 60 $B run matmul_rs $G --m 8192 --k 8192 --n 2048 --cool-down $cd --sweep streams=1,4 protocol=A comm-backend=nccl > $R/cd/rsM_$cd.log 2>&1; echo "rsM cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/rsM_$cd.log | grep -o 'wall [0-9.]* us' | tr '\n' ' ')"
  timeout 60 $B run matmul_ar $G --m 16384 --k 8192 --n 4096 --cool-down $cd --sweep streams=1 protocol=A comm-backend=nccl > $R/cd/arL_$cd.log 2>&1; echo "arL cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/arL_$cd.log | grep -o 'wall [0-9.]* us' | tr '\n' ' ')"
done
el done

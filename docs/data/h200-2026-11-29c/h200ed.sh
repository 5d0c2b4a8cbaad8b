#!/bin/bash
# Session 13, call ED (1 H200): the GPU tests with the after-idle benchmark's own test; tiny
# programs replayed at cool-downs 0 and 20 ms (does a replay call's wake cost follow the graph's
# structure or its work?).
TAG=${TAG:-ed}; BUDGET=${BUDGET:-300}; source .dev/common.sh
build braid braid_exec_tests
timeout 120 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:Microbench*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED|AfterIdle" $R/gpu_tests.log | head -8; el gputests
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --repeat 30 --graph"
prog() { local name=$1; shift
  for cd in 0 20; do
    if (( $(left) < 20 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 40 $B run "$@" $P --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us, host issue [0-9.]* us')"
  done; }
prog rsT_g matmul_rs --m 256 --k 256 --n 256 --streams 1
prog rsT4_g matmul_rs --m 1024 --k 256 --n 256 --streams 4
prog agT_g ag_matmul --m 512 --k 256 --n 256 --streams 2
prog mlpT_g mlp --m 256 --k 256 --n 512 --streams 2
el done

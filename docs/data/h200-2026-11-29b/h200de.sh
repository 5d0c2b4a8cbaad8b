#!/bin/bash
# Session 12, call DE (1 H200): calibrate's after-idle and host parts; the programs launched and
# replayed at cool-downs (a second set beside call DD's), every run's wall and issue time.
TAG=${TAG:-de}; BUDGET=${BUDGET:-400}; source .dev/common.sh
build braid braid_exec_tests
timeout 60 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:Microbench*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head -5
timeout 90 $B calibrate --measure --ranks 1 --only after_idle,host --dtypes bf16 -o $R/after_idle.json > $R/after_idle.log 2>&1; echo "calibrate rc=$?"; grep -E 'after idle|host costs' $R/after_idle.log | tail -12; el calibrate
timeout 30 $B calibrate --from $R/after_idle.json --machine h200 -o $R/h200-after-idle.json > $R/fit.log 2>&1; grep -E 'note: after|host\.' $R/fit.log
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --repeat 20"
prog() { local name=$1 mode=$2; shift 2
  for cd in 0 2 20 100; do
    if (( $(left) < 30 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 60 $B run "$@" $P $mode --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us')"
  done; }
prog rsM_i "" matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog arL_i "" matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
prog mlpL_i "" mlp --m 4096 --k 4096 --n 8192 --streams 2
prog rsM_g --graph matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog arL_g --graph matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
el done

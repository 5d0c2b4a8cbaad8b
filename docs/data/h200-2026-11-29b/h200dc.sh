#!/bin/bash
# Session 12, call DC (1 H200): one-GPU tests at the new exec (wake-up benchmark); calibrate's
# power part with the wake-up series; the four programs at cool-downs 0-100 ms again (a second
# launch set beside call DA's), every run's time.
TAG=${TAG:-dc}; BUDGET=${BUDGET:-500}; source .dev/common.sh
build braid braid_exec_tests
timeout 150 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED|SKIPPED" $R/gpu_tests.log | head; el gputests
timeout 90 $B calibrate --measure --ranks 1 --only power --dtypes bf16 -o $R/power_wake.json > $R/calibrate.log 2>&1; echo "calibrate rc=$?"; grep -E 'wake-up' $R/calibrate.log | tail -12; el calibrate
timeout 30 $B calibrate --from $R/power_wake.json --machine h200 -o $R/h200-wake.json > $R/fit.log 2>&1; echo "fit rc=$?"; grep -E 'note|wake' $R/fit.log | head
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --graph --repeat 20"
prog() { local name=$1; shift
  for cd in 0 0.5 1 2 5 10 20 50 100; do
    if (( $(left) < 15 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 60 $B run "$@" $P --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us')"
  done; }
prog rsM matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog arL matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
prog mlpL mlp --m 4096 --k 4096 --n 8192 --streams 2
prog agL ag_matmul --m 8192 --k 8192 --n 3584 --streams 2
el done

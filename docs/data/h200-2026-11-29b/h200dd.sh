#!/bin/bash
# Session 12, call DD (1 H200): calibrate's wake-up part (launched and graph) on a cool GPU, the
# programs launched and replayed at cool-downs, then the wake-up again after the power part (hot).
TAG=${TAG:-dd}; BUDGET=${BUDGET:-420}; source .dev/common.sh
build braid braid_exec_tests
timeout 100 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head -5
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv > $R/smi_cool.txt
timeout 60 $B calibrate --measure --ranks 1 --only wake_up --dtypes bf16 -o $R/wake_cool.json > $R/wake_cool.log 2>&1; echo "wake cool rc=$?"; grep -E 'wake-up' $R/wake_cool.log | tail -18; el wake_cool
timeout 30 $B calibrate --from $R/wake_cool.json --machine h200 -o $R/h200-wake.json > $R/fit_cool.log 2>&1; grep -E 'note: wake' $R/fit_cool.log
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --repeat 20"
prog() { local name=$1 mode=$2; shift 2
  for cd in 0 2 20 100; do
    if (( $(left) < 60 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 60 $B run "$@" $P $mode --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us')"
  done; }
prog rsM_g --graph matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog rsM_i "" matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog arL_g --graph matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
prog arL_i "" matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
el programs
timeout 60 $B calibrate --measure --ranks 1 --only power --quick --dtypes bf16 -o $R/power_quick.json > $R/power_quick.log 2>&1; echo "power rc=$?"
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv > $R/smi_hot.txt
timeout 60 $B calibrate --measure --ranks 1 --only wake_up --dtypes bf16 -o $R/wake_hot.json > $R/wake_hot.log 2>&1; echo "wake hot rc=$?"; grep -E 'wake-up' $R/wake_hot.log | tail -18
cat $R/smi_cool.txt $R/smi_hot.txt
el done

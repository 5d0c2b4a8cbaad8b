#!/bin/bash
# Session 12, call DG (1 H200): calibrate's after-idle part with a program-like operation mix, and
# the programs launched and replayed at cool-downs 0, 2, 20 ms (a third set), every run's issue.
TAG=${TAG:-dg}; BUDGET=${BUDGET:-250}; source .dev/common.sh
build braid
timeout 60 $B calibrate --measure --ranks 1 --only after_idle --dtypes bf16 -o $R/after_idle.json > $R/after_idle.log 2>&1; echo "calibrate rc=$?"; grep -E 'after idle' $R/after_idle.log | tail -10; el calibrate
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --repeat 20"
prog() { local name=$1 mode=$2; shift 2
  for cd in 0 2 20; do
    if (( $(left) < 10 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 30 $B run "$@" $P $mode --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us, host issue [0-9.]* us')"
  done; }
prog rsM_i "" matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog mlpL_i "" mlp --m 4096 --k 4096 --n 8192 --streams 2
prog arL_i "" matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
prog rsM_g --graph matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
el done

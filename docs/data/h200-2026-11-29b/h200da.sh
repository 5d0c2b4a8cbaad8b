#!/bin/bash
# Session 12, call DA (1 H200): the clock ramp after idle, kernel by kernel (idle_probe.py), and
# single-GPU programs (graph replays) at cool-downs 0-100 ms with every run's time.
TAG=${TAG:-da}; BUDGET=${BUDGET:-420}; source .dev/common.sh
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit --format=csv > $R/smi.txt 2>&1
timeout 120 python3 .dev/idle_probe.py $R/idle_probe.json > $R/idle_probe.log 2>&1; echo "probe rc=$?"; el probe
build braid
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --graph --repeat 20"
prog() { local name=$1; shift
  for cd in 0 0.5 1 3 10 20 50 100; do
    if (( $(left) < 15 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 60 $B run "$@" $P --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us')"
  done; }
prog rsM matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog arL matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
prog mlpL mlp --m 4096 --k 4096 --n 8192 --streams 2
prog agL ag_matmul --m 8192 --k 8192 --n 3584 --streams 2
el done

#!/bin/bash
# Session 11, call CD (1 H200): programs not run before, back to back on normal inputs (graph
# replays and one interpreted), every run's time: a held-out check of the h200 preset's power cap
# (fitted in call CB on normal operands).
TAG=${TAG:-cd}; BUDGET=${BUDGET:-300}; source .dev/common.sh
build braid
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 50 > $R/smi_trace.csv 2>&1 & SMI=$!
mkdir -p $R/b2b
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 0 --inputs normal"
b2b() { local name=$1 reps=$2 extra=$3; shift 3
  if (( $(left) < 20 )); then echo "$name NOTRUN"; return; fi
  sleep 1
  timeout 60 $B run "$@" $P $extra --repeat $reps --run-times $R/b2b/$name.jsonl > $R/b2b/$name.log 2>&1
  echo "b2b $name rc=$? $(grep 'rank 0 timing' $R/b2b/$name.log | grep -o 'wall [0-9.]* us')"; }
b2b ag2 500 --graph ag_matmul --m 8192 --k 8192 --n 3584 --streams 2
b2b mlp1 500 --graph mlp --m 4096 --k 4096 --n 8192 --streams 1
b2b arB 250 --graph matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
b2b rplB 120 --graph row_parallel_linear --m 8192 --k 8192 --n 8192 --streams 4
b2b rsB_cd2 300 "--graph --cool-down 2" matmul_rs --m 16384 --k 8192 --n 4096 --streams 2
b2b rsB 300 --graph matmul_rs --m 16384 --k 8192 --n 4096 --streams 2
b2b mlpB_i 120 "" mlp --m 8192 --k 4096 --n 8192 --streams 2
kill $SMI; gzip $R/smi_trace.csv
el done

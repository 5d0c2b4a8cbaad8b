#!/bin/bash
# Session 11, call CE (1 H200): calibrate's power benchmark with GEMMs of three more sizes
# sustained (gpu.power_cap.gemm_power), integers and normal; beside it in the same call, chunked
# single-GPU programs back to back with every run's time, on integers and on normal values.
TAG=${TAG:-ce}; BUDGET=${BUDGET:-420}; source .dev/common.sh
build braid
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 50 > $R/smi_trace.csv 2>&1 & SMI=$!
for ops in integers normal; do
  timeout 90 $B calibrate --measure --ranks 1 --only power --dtypes bf16 --gemm-operands $ops -o $R/power_$ops.json > $R/power_$ops.log 2>&1
  echo "calibrate power $ops rc=$?"; grep -E '1 x (400|300) ms' $R/power_$ops.log | grep -v duty
done
el calpower
mkdir -p $R/b2b
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 0"
b2b() { local name=$1 reps=$2 extra=$3; shift 3
  if (( $(left) < 20 )); then echo "$name NOTRUN"; return; fi
  sleep 1
  timeout 60 $B run "$@" $P $extra --repeat $reps --run-times $R/b2b/$name.jsonl > $R/b2b/$name.log 2>&1
  echo "b2b $name rc=$? $(grep 'rank 0 timing' $R/b2b/$name.log | grep -o 'wall [0-9.]* us')"; }
b2b rsL_g 500 --graph matmul_rs --m 16384 --k 4096 --n 4096
b2b rsM_g 1500 --graph matmul_rs --m 8192 --k 4096 --n 2048
b2b rplL_g 500 --graph row_parallel_linear --m 16384 --k 4096 --n 4096
b2b agL_g 600 --graph ag_matmul --m 8192 --k 8192 --n 3584
b2b mlpL_g 400 --graph mlp --m 4096 --k 4096 --n 8192
b2b arL_g 500 --graph matmul_ar --m 16384 --k 4096 --n 4096
b2b rsX_g 600 --graph matmul_rs --m 12288 --k 6144 --n 3072
b2b rsB_gn 300 "--graph --inputs normal" matmul_rs --m 16384 --k 8192 --n 4096 --streams 2
b2b arB_gn 250 "--graph --inputs normal" matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
b2b mlp1_gn 500 "--graph --inputs normal" mlp --m 4096 --k 4096 --n 8192 --streams 1
kill $SMI; gzip $R/smi_trace.csv
el done

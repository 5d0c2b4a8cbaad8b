#!/bin/bash
# Session 11, call CA (1 H200): one-GPU tests at HEAD; the power state (every GEMM of a 400 ms
# load and of 20 ms bursts, integers and normal); single-GPU programs back to back as graph
# replays with every run's time (--run-times), without and with --cool-down; calibrate's aligned
# GEMM plan on integers, two passes; the programs of calls BF and BG (1, 2, 4 chunks) for a
# held-out check of a machine fitted to that plan.
TAG=${TAG:-ca}; BUDGET=${BUDGET:-580}; source .dev/common.sh
build braid braid_exec_tests
timeout 120 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head; el gputests
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 50 > $R/smi_trace.csv 2>&1 & SMI=$!
timeout 90 python3 .dev/power_probe.py $R/power.json > $R/power.log 2>&1; echo "power probe rc=$?"; cat $R/power.log; el power
for ops in integers normal; do
  timeout 60 $B calibrate --measure --ranks 1 --only power --dtypes bf16 --gemm-operands $ops -o $R/power_$ops.json > $R/power_$ops.log 2>&1
  echo "calibrate power $ops rc=$?"; tail -7 $R/power_$ops.log
done
el calpower
mkdir -p $R/b2b
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 0"
b2b() { local name=$1 reps=$2 extra=$3; shift 3
  if (( $(left) < 60 )); then echo "$name NOTRUN"; return; fi
  sleep 1
  timeout 60 $B run "$@" $P $extra --repeat $reps --run-times $R/b2b/$name.jsonl > $R/b2b/$name.log 2>&1
  echo "b2b $name rc=$? $(grep 'rank 0 timing' $R/b2b/$name.log | grep -o 'wall [0-9.]* us')"; }
b2b mlpH_g 80 --graph mlp --m 8192 --k 8192 --n 16384
b2b rsL_g 500 --graph matmul_rs --m 16384 --k 4096 --n 4096
b2b mlpL_g 400 --graph mlp --m 4096 --k 4096 --n 8192
b2b rsM_g 1500 --graph matmul_rs --m 8192 --k 4096 --n 2048
b2b rsL4_g 500 --graph matmul_rs --m 16384 --k 4096 --n 4096 --streams 4
b2b mlpH_gn 80 "--graph --inputs normal" mlp --m 8192 --k 8192 --n 16384
b2b rsL_gc 40 "--graph --cool-down 20" matmul_rs --m 16384 --k 4096 --n 4096
b2b mlpH_gc 30 "--graph --cool-down 20" mlp --m 8192 --k 8192 --n 16384
b2b mlpH_i 80 "" mlp --m 8192 --k 8192 --n 16384
el b2b
for rep in 1 2; do
  timeout 60 $B calibrate --measure --ranks 1 --only gemm --dtypes bf16 --reps 10 -o $R/plan_$rep.json > $R/cal_$rep.log 2>&1
  echo "cal $rep rc=$? $(grep -c 'gemm ' $R/cal_$rep.log) gemms"
done
el calibrate
mkdir -p $R/g $R/held
G="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --graph --repeat 50 --sweep streams=1,2,4"
for rep in 1 2; do
  for w in "rsL matmul_rs --m 16384 --k 4096 --n 4096" "rsM matmul_rs --m 8192 --k 4096 --n 2048" "arL matmul_ar --m 16384 --k 4096 --n 4096" "agL ag_matmul --m 8192 --k 8192 --n 3584" "mlpL mlp --m 4096 --k 4096 --n 8192" "rplL row_parallel_linear --m 16384 --k 4096 --n 4096" "rsX matmul_rs --m 12288 --k 6144 --n 3072" "arX matmul_ar --m 6144 --k 6144 --n 6144" "agX ag_matmul --m 6144 --k 4096 --n 5120" "mlpX mlp --m 2048 --k 6144 --n 12288" "rplX row_parallel_linear --m 10240 --k 5120 --n 2560" "rsY matmul_rs --m 3072 --k 3072 --n 3072"; do
    set -- $w; name=$1; shift
    if (( $(left) < 15 )); then echo "$name $rep NOTRUN"; continue; fi
    timeout 40 $B run "$@" $G > $R/g/run_${name}_$rep.log 2>&1
    echo "$name $rep rc=$? $(grep 'rank 0 timing' $R/g/run_${name}_$rep.log | grep -o 'wall [0-9.]* us' | tr '\n' ' ')"
  done
done
kill $SMI; gzip $R/smi_trace.csv
el done

#!/bin/bash
# Session 10, call BG (1 H200): single-GPU programs (1, 2, 4 chunks, graph replays, two passes)
# on normal inputs (for the normal-operand preset), and on integers at shapes whose GEMMs no
# machine here measured (held out of h200-int.json's table: its fractional-wave curve predicts them).
TAG=${TAG:-bg}; BUDGET=${BUDGET:-400}; source .dev/common.sh
build braid
G="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --graph --repeat 50 --sweep streams=1,2,4"
mkdir -p $R/normal $R/held
for rep in 1 2; do
  for w in "rsL matmul_rs --m 16384 --k 4096 --n 4096" "rsM matmul_rs --m 8192 --k 4096 --n 2048" "arL matmul_ar --m 16384 --k 4096 --n 4096" "agL ag_matmul --m 8192 --k 8192 --n 3584" "mlpL mlp --m 4096 --k 4096 --n 8192" "rplL row_parallel_linear --m 16384 --k 4096 --n 4096"; do
    set -- $w; name=$1; shift
    timeout 60 $B run "$@" $G --inputs normal > $R/normal/run_${name}_$rep.log 2>&1
    echo "normal $name $rep rc=$? $(grep 'rank 0 timing' $R/normal/run_${name}_$rep.log | grep -o 'wall [0-9.]* us' | tr '\n' ' ')"
  done
  for w in "rsX matmul_rs --m 12288 --k 6144 --n 3072" "arX matmul_ar --m 6144 --k 6144 --n 6144" "agX ag_matmul --m 6144 --k 4096 --n 5120" "mlpX mlp --m 2048 --k 6144 --n 12288" "rplX row_parallel_linear --m 10240 --k 5120 --n 2560" "rsY matmul_rs --m 3072 --k 3072 --n 3072"; do
    set -- $w; name=$1; shift
    timeout 60 $B run "$@" $G > $R/held/run_${name}_$rep.log 2>&1
    echo "held $name $rep rc=$? $(grep 'rank 0 timing' $R/held/run_${name}_$rep.log | grep -o 'wall [0-9.]* us' | tr '\n' ' ')"
  done
done
el done

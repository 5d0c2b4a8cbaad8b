#!/bin/bash
# Session 12, call DF (1 H200): where the host's issue time goes after idle: --host-profile of two
# interpreted programs at cool-downs 0, 2 and 20 ms.
TAG=${TAG:-df}; BUDGET=${BUDGET:-300}; source .dev/common.sh
build braid
mkdir -p $R/hp
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --repeat 20 --host-profile"
for w in "rsM matmul_rs --m 8192 --k 8192 --n 2048 --streams 1" "mlpL mlp --m 4096 --k 4096 --n 8192 --streams 2"; do
  set -- $w; name=$1; shift
  for cd in 0 2 20; do
    timeout 60 $B run "$@" $P --cool-down $cd --run-times $R/hp/${name}_cd$cd.jsonl > $R/hp/${name}_cd$cd.log 2>&1
    echo "== $name cd=$cd rc=$?"; sed -n '/rank 0 timing/,$p' $R/hp/${name}_cd$cd.log | head -16
  done
done
el done

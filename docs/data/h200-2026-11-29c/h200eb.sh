#!/bin/bash
# Session 13, call EB (1 H200): exec tests at the changed after-idle benchmark (graph entries time
# the replay call); calibrate's after-idle part, two passes; programs replayed and launched at
# cool-downs (held out: the fit sees the benchmark only).
TAG=${TAG:-eb}; BUDGET=${BUDGET:-430}; source .dev/common.sh
build braid braid_exec_tests
timeout 90 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:Microbench*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head -5; el gputests
for pass in 1 2; do
  timeout 90 $B calibrate --measure --ranks 1 --only after_idle --reps 20 --dtypes bf16 -o $R/after_idle$pass.json > $R/after_idle$pass.log 2>&1; echo "calibrate pass $pass rc=$?"; el calibrate$pass
  timeout 30 $B calibrate --from $R/after_idle$pass.json --machine h200 -o $R/h200-after-idle$pass.json > $R/fit$pass.log 2>&1; echo "fit rc=$?"; grep -E 'note: after' $R/fit$pass.log
done
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --repeat 20"
prog() { local name=$1 mode=$2; shift 2
  for cd in 0 1 5 10 20 100; do
    if (( $(left) < 20 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 40 $B run "$@" $P $mode --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us, host issue [0-9.]* us')"
  done; }
prog rsM_g --graph matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog arL_g --graph matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
prog mlpL_g --graph mlp --m 4096 --k 4096 --n 8192 --streams 2
prog agL_g --graph ag_matmul --m 8192 --k 8192 --n 3584 --streams 2
prog rplS_g --graph row_parallel_linear --m 4096 --k 4096 --n 4096 --streams 4
prog arL_i "" matmul_ar --m 16384 --k 8192 --n 4096 --streams 2
prog agL_i "" ag_matmul --m 8192 --k 8192 --n 3584 --streams 2
el done

#!/bin/bash
# Session 13, call EC (1 H200): the after-idle benchmark's graph entries preceded by replays of
# their own graph (a program's back-to-back state), two passes; exec tests; more programs
# replayed and launched at cool-downs (held out).
TAG=${TAG:-ec}; BUDGET=${BUDGET:-330}; source .dev/common.sh
build braid braid_exec_tests
for pass in 1 2; do
  timeout 90 $B calibrate --measure --ranks 1 --only after_idle --reps 20 --dtypes bf16 -o $R/after_idle$pass.json > $R/after_idle$pass.log 2>&1; echo "calibrate pass $pass rc=$?"; el calibrate$pass
  timeout 30 $B calibrate --from $R/after_idle$pass.json --machine h200 -o $R/h200-after-idle$pass.json > $R/fit$pass.log 2>&1; echo "fit rc=$?"; grep -E 'note: after' $R/fit$pass.log
done
timeout 90 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:Microbench*' > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED" $R/gpu_tests.log | head -5; el gputests
mkdir -p $R/cd
P="--backend cuda --ranks 1 --devices 1 --dtype bf16 --no-check --no-poison --timeout 60 --warmup 2 --repeat 20"
prog() { local name=$1 mode=$2; shift 2
  for cd in 0 2 20; do
    if (( $(left) < 20 )); then echo "$name $cd NOTRUN"; continue; fi
    timeout 40 $B run "$@" $P $mode --cool-down $cd --run-times $R/cd/${name}_cd$cd.jsonl > $R/cd/${name}_cd$cd.log 2>&1
    echo "$name cd=$cd rc=$? $(grep 'rank 0 timing' $R/cd/${name}_cd$cd.log | grep -o 'wall [0-9.]* us, host issue [0-9.]* us')"
  done; }
prog rsL_g --graph matmul_rs --m 16384 --k 4096 --n 4096 --streams 4
prog mlpS_g --graph mlp --m 2048 --k 6144 --n 12288 --streams 4
prog rsM_g --graph matmul_rs --m 8192 --k 8192 --n 2048 --streams 1
prog rplS_i "" row_parallel_linear --m 4096 --k 4096 --n 4096 --streams 4
prog rsL_i "" matmul_rs --m 16384 --k 4096 --n 4096 --streams 4
el done

#!/bin/bash
# Run 1 (session 3): build, GPU tests, re-measure with the held stream, p2p vs collective pipelines
# at the large shapes (never measured), tune --confirm on the GPUs, torch references. Tarred.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/r; mkdir -p $R
finish() { tar czf $OUT/results.tgz -C $R . ; el "tarred $(du -sh $OUT/results.tgz | cut -f1)"; }
trap finish EXIT
which clang clang++ clang-18 clang-17 2>&1 | head; ls /usr/lib/llvm-*/lib/clang/*/lib/linux/ 2>/dev/null | grep -i fuzzer | head -3
cmake -S . -B build-gpu -G Ninja -DBRAID_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') > $R/configure.log 2>&1 || { tail -30 $R/configure.log; exit 1; }
cmake --build build-gpu -j32 --target braid braid_exec_cli braid_exec_tests > $R/build.log 2>&1 || { grep -B2 -A12 'error' $R/build.log | head -80; exit 1; }
el built
B=build-gpu/cli/braid
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.csv
timeout 200 build-gpu/tests/braid_exec_tests --gtest_filter='Gpu*:*Microbench*:*Measure*' > $R/gpu_tests.log 2>&1; el "gpu tests rc=$?"; grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $R/gpu_tests.log | head; grep -B3 -A20 'Failure' $R/gpu_tests.log | head -60
timeout 120 $B calibrate --measure --ranks 2 -o $R/h100x2.measurements.json > $R/measure.log 2>&1; el "measure rc=$?"; tail -3 $R/measure.log
$B calibrate --from $R/h100x2.measurements.json --machine h100 -o $R/h100-calibrated.json > $R/fit.log 2>&1; el "fit rc=$?"; tail -4 $R/fit.log
run() { # workload m k n tag extra...
  local w=$1 m=$2 k=$3 n=$4 tag=$5; shift 5
  timeout 150 $B run $w --backend cuda --ranks 2 --dtype bf16 --m $m --k $k --n $n --no-check --no-poison --repeat 10 --timeout 60 \
    --timeline $R/tl_${w}_${tag}.json --timeline-run 5 "$@" > $R/run_${w}_${tag}.log 2>&1
  echo "$w $tag rc=$? $(grep -E 'timing' $R/run_${w}_${tag}.log | sed -E 's/^/  /' | tr '\n' ' ' | cut -c1-600)"
}
for comm in nccl cuda; do
  run ag_matmul 8192 8192 3584 coll_$comm --backend-override $comm --sweep-streams 1,2,4 --sweep-protocols A,B
  run ag_matmul 8192 8192 3584 p2p_$comm --backend-override $comm --pipeline p2p --sweep-streams 2 --sweep-protocols A,B,C
  run ag_matmul 4096 8192 1792 p2pmid_$comm --backend-override $comm --pipeline p2p --sweep-streams 1,2 --sweep-protocols A,B
  run ag_matmul 4096 8192 1792 collmid_$comm --backend-override $comm --sweep-streams 1,2,4 --sweep-protocols B
done
el "ag done"
for w in matmul_rs matmul_ar row_parallel_linear; do
  run $w 16384 8192 4096 coll --sweep-streams 1,2,4 --sweep-protocols A,B
  run $w 16384 8192 4096 p2p --pipeline p2p --sweep-streams 1,2 --sweep-protocols A,B
done
run mlp 4096 4096 8192 coll --sweep-streams 1,2,4 --sweep-protocols A,B
run mlp 4096 4096 8192 p2p --pipeline p2p --sweep-streams 1,2 --sweep-protocols A,B
el "others done"
timeout 120 $B run ag_matmul --backend cuda --ranks 2 --dtype bf16 --m 8192 --k 8192 --n 3584 --no-check --no-poison --repeat 20 --graph --pipeline p2p --streams 2 > $R/graph_p2p.log 2>&1; el "graph rc=$? $(grep timing $R/graph_p2p.log | tr '\n' ' ')"
timeout 150 $B tune ag_matmul --machine $R/h100-calibrated.json --devices 2 --m 8192 --k 8192 --n 3584 --streams 1,2,4 --confirm 3 > $R/tune_confirm.log 2>&1; el "tune confirm rc=$?"; tail -12 $R/tune_confirm.log
for wm in ag_matmul:8192,8192,3584 matmul_rs:16384,8192,4096 ag_matmul:4096,8192,1792; do
  w=${wm%%:*}; mkn=${wm#*:}
  timeout 90 torchrun --nproc-per-node 2 bench/torch_reference.py --workload $w --mkn $mkn > $R/torch_${w}_$mkn.log 2>&1; el "torch $w $mkn rc=$? $(grep -E '^\{' $R/torch_${w}_$mkn.log | cut -c1-400)"
done

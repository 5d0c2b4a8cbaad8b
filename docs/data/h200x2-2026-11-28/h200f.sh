#!/bin/bash
# Session 5, call F (1 H200; two were not lent): jemalloc (static, from .carry) on the GPU host: lower_bench and
# verify_bench side by side with and without it; braid run with it under --ranks and mpirun.
TAG=${TAG:-f}; BUDGET=${BUDGET:-300}; source .dev/common.sh
P=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
for v in je glibc; do
  opt=$([ $v = je ] && echo ON || echo OFF)
  cmake -S . -B build-$v -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBRAID_BUILD_BENCH=ON -DBRAID_WITH_JEMALLOC=$opt -DCMAKE_PREFIX_PATH=$P > $R/configure-$v.log 2>&1 || { tail -30 $R/configure-$v.log; exit 1; }
  grep -A7 "braid features" $R/configure-$v.log | grep JEMALLOC
done
cmake --build build-je -j32 --target braid braid_exec_cli lower_bench verify_bench > $R/build-je.log 2>&1 || { grep -B2 -A12 'error' $R/build-je.log | head -60; exit 1; }
cmake --build build-glibc -j32 --target lower_bench verify_bench > $R/build-glibc.log 2>&1 || { grep -B2 -A12 'error' $R/build-glibc.log | head -60; exit 1; }
el "built"; nm build-je/bench/lower_bench | grep -c " T je_malloc\| T malloc$"
for rep in 1 2; do for v in glibc je; do
  echo "$v $(build-$v/bench/lower_bench --benchmark_min_time=0.01 --benchmark_repetitions=5 2>/dev/null | grep -E '_median' | awk '{print $1, $4, $5}' | tr '\n' ' ')"
done; done
for v in glibc je; do /usr/bin/time -v build-$v/bench/verify_bench --benchmark_filter='BM_VerifyProtocolA/200000' 2>&1 | grep -E "^BM_|Maximum resident|User time|System time" | tr '\n' ' '; echo " [$v]"; done
B=build-je/cli/braid
timeout 60 $B run ag_matmul --backend cuda --ranks 1 --devices 1 --m 64 --k 32 --n 32 --sweep streams=1,2 protocol=A,B,C > $R/run_je.log 2>&1; echo "ranks rc=$? $(grep -c 'outputs match' $R/run_je.log) matched"
timeout 60 mpirun --allow-run-as-root -np 1 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29555 $B run matmul_rs --backend cuda --devices 1 --m 64 --k 32 --n 32 --sweep streams=1,2 protocol=A,B,C > $R/mpirun_je.log 2>&1; echo "mpirun rc=$? $(grep -c 'outputs match' $R/mpirun_je.log) matched"
timeout 60 $B run mlp --backend cuda --ranks 1 --devices 1 --dtype bf16 --m 4096 --k 4096 --n 8192 --no-check --repeat 10 --graph --sweep streams=1,2 > $R/graph_je.log 2>&1; echo "graph rc=$?"; grep "rank 0 timing" $R/graph_je.log | cut -c1-160
el done

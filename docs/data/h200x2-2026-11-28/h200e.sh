#!/bin/bash
# Session 5, call E (2 H200): main after the lowering-speed merge (perf10) and the own-shard
# default: every workload checked on two GPUs; lower_bench and verify_bench on an idle CPU.
TAG=${TAG:-e}; BUDGET=${BUDGET:-400}; source .dev/common.sh
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBRAID_BUILD_BENCH=ON -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') > $R/configure.log 2>&1 || { tail -30 $R/configure.log; exit 1; }
cmake --build build-gpu -j32 --target braid braid_exec_cli lower_bench verify_bench > $R/build.log 2>&1 || { grep -B2 -A12 'error' $R/build.log | head -60; exit 1; }
el "built"
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
lscpu > $R/lscpu.txt; uptime > $R/uptime.txt
mkdir -p $R/c
for w in $($B lower --list | awk '{print $1}'); do
  timeout 60 $B run $w --backend cuda --ranks 2 --m 64 --k 32 --n 32 --streams 2 --sweep protocol=A,B,C > $R/c/$w.log 2>&1
  echo "$w rc=$? $(grep -c 'outputs match the float64' $R/c/$w.log) matched"
done
timeout 60 $B run ag_matmul --backend cuda --ranks 2 --pipeline p2p --m 64 --k 32 --n 32 --sweep streams=1,2 protocol=A,B,C own-shard=copy,in-place prefetch=off,on > $R/c/ag_matmul_p2p.log 2>&1
echo "ag_matmul p2p rc=$? $(grep -c 'outputs match the float64' $R/c/ag_matmul_p2p.log) matched"
el "workloads"
build-gpu/bench/lower_bench --benchmark_repetitions=5 --benchmark_min_time=0.01 > $R/lower_bench.txt 2>&1; tail -12 $R/lower_bench.txt
T=$([ -x /usr/bin/time ] && echo '/usr/bin/time -v'); $T build-gpu/bench/verify_bench --benchmark_filter='BM_VerifyProtocolA/200000' > $R/verify_bench.txt 2>&1
grep -E "BM_|Maximum resident|User time|System time|Elapsed" $R/verify_bench.txt
el done

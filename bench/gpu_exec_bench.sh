#!/bin/sh
# One-GPU benchmarks of `braid run --backend cuda` (docs/PERFORMANCE.md, "GPU executor"):
# 1. AG+GEMM (ag_matmul on one rank: the allgather is NCCL's copy within a world of one) in bf16
#    at 8192^3, unchunked (S=1) and chunked (S=2, 4, 8): TFLOP/s of the whole program;
# 2. host overhead per host instruction, interpreted vs replayed from a CUDA graph, on a program
#    small enough that the host, not the GPU, is the bottleneck;
# 3. PyTorch's own bf16 GEMM at the same size, as the ceiling.
# Usage: bench/gpu_exec_bench.sh BUILD_DIR [REPEAT]. Prints one table row per run.
set -u
B="$1/cli/braid"
R="${2:-20}"
export NCCL_NVLS_ENABLE=0
row() {  # row LABEL FLOPS ARGS...: runs braid and prints wall, TFLOP/s, issue per instruction
  label="$1"; flops="$2"; shift 2
  line=$("$B" run "$@" --backend cuda --ranks 1 --devices 1 --no-check --no-poison 2>&1 | grep "timing (" | head -1)
  if [ -z "$line" ]; then echo "| $label | FAILED | | | |"; return; fi
  echo "$line" | awk -v label="$label" -v flops="$flops" '{
    for (i = 1; i <= NF; ++i) {
      if ($i == "wall") wall = $(i + 1);
      if ($i == "issue") issue = $(i + 1);
      if ($i == "per") per = $(i - 2);
      if ($i == "instructions)") n = $(i - 1);
    }
    sub(/\(/, "", n);
    tf = flops > 0 ? sprintf("%.1f", flops / (wall * 1e-6) / 1e12) : "-";
    printf "| %s | %.1f | %s | %.1f | %.3f | %s |\n", label, wall, tf, issue, per, n
  }'
}
echo "| run | wall us (median) | TFLOP/s | host issue us | us per host instruction | instructions |"
echo "|---|---|---|---|---|---|"
M=8192
F=$(awk -v m=$M 'BEGIN { printf "%.0f", 2 * m * m * m }')
for s in 1 2 4 8; do
  row "ag_matmul bf16 ${M}^3 S=$s interpreted" "$F" ag_matmul --dtype bf16 --m $M --k $M --n $M --streams $s --repeat "$R"
  row "ag_matmul bf16 ${M}^3 S=$s graph" "$F" ag_matmul --dtype bf16 --m $M --k $M --n $M --streams $s --repeat "$R" --graph
done
for s in 1 4 8; do
  row "ag_matmul float 64^3 S=$s interpreted" 0 ag_matmul --m 64 --k 64 --n 64 --streams $s --repeat 200
  row "ag_matmul float 64^3 S=$s graph" 0 ag_matmul --m 64 --k 64 --n 64 --streams $s --repeat 200 --graph
done
python3 - <<PY
import torch
m = $M
a = torch.randn(m, m, device="cuda", dtype=torch.bfloat16); b = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
for _ in range(3): a @ b
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
ts = []
for _ in range($R):
    s.record(); a @ b; e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) * 1e3)
ts.sort(); w = ts[len(ts) // 2]
print("| torch.matmul bf16 %d^3 (events) | %.1f | %.1f | - | - | - |" % (m, w, 2 * m**3 / (w * 1e-6) / 1e12))
PY

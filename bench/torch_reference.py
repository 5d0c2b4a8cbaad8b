#!/usr/bin/env python3
"""The outside reference for braid's overlap benchmarks (docs/PERFORMANCE.md, "Against torch").

Times, on every rank of a torchrun job, in bf16 with CUDA events:
  gemm     the rank's GEMM alone            ([M, K] @ [K, N] for AG+GEMM, [M, K/d] @ [K/d, N] otherwise)
  comm     the collective alone             (all-gather of A, reduce-scatter or all-reduce of C)
  serial   collective then GEMM (or GEMM then collective) on one stream
  fused    torch.ops.symm_mem.fused_all_gather_matmul / fused_matmul_reduce_scatter (PyTorch's
           async-TP: copy-engine transfers from symmetric memory, GEMM chunks on two streams);
           none for GEMM+Allreduce, which torch has no fused op for.
Each figure is the median of --iters timed runs after --warmup, then the max over ranks.
Prints one JSON object per (workload, shape) line on rank 0.

  torchrun --nproc-per-node 2 bench/torch_reference.py --workload ag_matmul --mkn 16384,8192,8192
"""
import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist


def timed(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for s, e in zip(starts, ends):
        dist.barrier()
        torch.cuda.synchronize()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    us = statistics.median(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))
    t = torch.tensor([us], device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workload", choices=["ag_matmul", "matmul_rs", "matmul_ar"], required=True)
    # One option for the shape: torchrun's parser would take "--m" for an abbreviation of its own.
    p.add_argument("--mkn", required=True, help="M,K,N of the global problem")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    a = p.parse_args()
    a.m, a.k, a.n = (int(x) for x in a.mkn.split(","))

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    d, rank = dist.get_world_size(), dist.get_rank()
    group = dist.group.WORLD
    torch.manual_seed(rank)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    row = {"workload": a.workload, "m": a.m, "k": a.k, "n": a.n, "ranks": d, "dtype": "bf16",
           "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
           "gpu": torch.cuda.get_device_name()}

    if a.workload == "ag_matmul":
        # C[M, N] = allgather(A)[M, K] @ B[K, N]; A's rows sharded over d ranks.
        a_shard = torch.randn(a.m // d, a.k, **bf)
        b = torch.randn(a.k, a.n, **bf)
        full = torch.empty(a.m, a.k, **bf)
        row["flop_per_rank"] = 2 * a.m * a.k * a.n
        row["gemm_us"] = timed(lambda: full @ b, a.warmup, a.iters)
        row["comm_us"] = timed(lambda: dist.all_gather_into_tensor(full, a_shard), a.warmup, a.iters)
        row["serial_us"] = timed(lambda: (dist.all_gather_into_tensor(full, a_shard), full @ b), a.warmup, a.iters)
        fused_op = "fused_all_gather_matmul"
    else:
        # C[M, N] = A[M, K/d] @ B[K/d, N] summed over ranks (k sharded), then reduce-scattered
        # (rows) or all-reduced.
        ka = a.k // d
        a_local = torch.randn(a.m, ka, **bf)
        b = torch.randn(ka, a.n, **bf)
        c = torch.empty(a.m, a.n, **bf)
        out = torch.empty(a.m // d, a.n, **bf)
        row["flop_per_rank"] = 2 * a.m * ka * a.n
        row["gemm_us"] = timed(lambda: torch.mm(a_local, b, out=c), a.warmup, a.iters)
        if a.workload == "matmul_rs":
            comm = lambda: dist.reduce_scatter_tensor(out, c)
            fused_op = "fused_matmul_reduce_scatter"
        else:
            comm = lambda: dist.all_reduce(c)
            fused_op = None
        row["comm_us"] = timed(comm, a.warmup, a.iters)
        row["serial_us"] = timed(lambda: (torch.mm(a_local, b, out=c), comm()), a.warmup, a.iters)

    row["ideal_us"] = max(row["gemm_us"], row["comm_us"])
    row["fused_op"] = fused_op
    row["fused_us"] = None
    if fused_op is not None:
        try:
            from torch.distributed._symmetric_memory import enable_symm_mem_for_group
            enable_symm_mem_for_group(group.group_name)
            if fused_op == "fused_all_gather_matmul":
                fn = lambda: torch.ops.symm_mem.fused_all_gather_matmul(a_shard, [b], gather_dim=0,
                                                                         group_name=group.group_name)
            else:
                fn = lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a_local, b, "sum", scatter_dim=0,
                                                                             group_name=group.group_name)
            row["fused_us"] = timed(fn, a.warmup, a.iters)
        except Exception as e:  # report why torch's op did not run instead of hiding the row
            row["fused_error"] = f"{type(e).__name__}: {e}"[:300]
    if rank == 0:
        print(json.dumps(row), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

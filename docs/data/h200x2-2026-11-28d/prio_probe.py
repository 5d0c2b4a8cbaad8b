# Session 8 probe: does work on a second stream (a small add kernel, a same-device copy) wait for a
# cuBLAS GEMM on the first, at normal and at the greatest stream priority? Times in us (events).
import torch
torch.manual_seed(0)
dev = torch.device("cuda", 0)
lo, hi = torch.cuda.Stream.priority_range() if hasattr(torch.cuda.Stream, "priority_range") else (0, -1)
print("priority range", lo, hi)
a = torch.randn(16384, 4096, dtype=torch.bfloat16, device=dev)
b = torch.randn(4096, 4096, dtype=torch.bfloat16, device=dev)
c = torch.empty(16384, 4096, dtype=torch.bfloat16, device=dev)
src = torch.randn(32 * 2**20, dtype=torch.bfloat16, device=dev)  # 64 MiB
dst = torch.empty_like(src)
small = torch.zeros(2**20, device=dev)
ops = {"copy 64 MiB": lambda: dst.copy_(src), "add 4 MiB": lambda: small.add_(1.0)}
def ev():
    return torch.cuda.Event(enable_timing=True)
for prio_name, prio in (("normal", 0), ("high", hi)):
    s = torch.cuda.Stream(priority=prio)
    for name, op in ops.items():
        alone, beside, gemm = [], [], []
        for rep in range(7):
            torch.cuda.synchronize()
            e0, e1 = ev(), ev()
            with torch.cuda.stream(s):
                e0.record(); op(); e1.record()
            torch.cuda.synchronize()
            alone.append(e0.elapsed_time(e1) * 1e3)
            g0, g1, e0, e1 = ev(), ev(), ev(), ev()
            g0.record(); torch.matmul(a, b, out=c); torch.matmul(a, b, out=c); g1.record()
            with torch.cuda.stream(s):
                torch.cuda._sleep(20000)  # start ~10 us later, inside the first GEMM
                e0.record(); op(); e1.record()
            torch.cuda.synchronize()
            beside.append(e0.elapsed_time(e1) * 1e3); gemm.append(g0.elapsed_time(g1) * 1e3)
        med = lambda v: sorted(v)[len(v) // 2]
        print(f"{prio_name:6s} {name:12s} alone {med(alone):8.1f} us  beside two GEMMs ({med(gemm):7.1f} us) {med(beside):8.1f} us")

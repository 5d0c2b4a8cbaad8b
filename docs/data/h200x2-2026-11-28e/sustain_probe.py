# Session 9 probe: does a GEMM slow down as it runs back to back (power / clock state)?
# Times 16384x4096x4096 and 4096^3 bf16 GEMMs in bursts: after 0, 0.2, 0.5, 1, 2 s of
# continuous GEMMs, and after an idle second; prints per-GEMM medians per burst.
import time, torch, json, sys
torch.backends.cuda.matmul.allow_tf32 = False
out = []
for (m, n, k) in [(16384, 4096, 4096), (4096, 4096, 4096)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    def burst(reps):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
        ev[0].record()
        for i in range(reps):
            torch.mm(a, b, out=c); ev[i + 1].record()
        torch.cuda.synchronize()
        t = sorted(ev[i].elapsed_time(ev[i + 1]) * 1000 for i in range(reps))
        return t[len(t) // 2]
    for _ in range(3): torch.mm(a, b, out=c)
    torch.cuda.synchronize(); time.sleep(1.0)
    cold = burst(10)
    row = {"shape": f"{m}x{n}x{k}", "cold_10": cold, "after_s": {}}
    t0 = time.time(); last = 0
    for mark in [0.2, 0.5, 1.0, 2.0, 4.0]:
        while time.time() - t0 < mark:
            for _ in range(20): torch.mm(a, b, out=c)
            torch.cuda.synchronize()
        row["after_s"][str(mark)] = burst(10)
    time.sleep(1.0)
    row["idle_1s_then_10"] = burst(10)
    out.append(row); print(json.dumps(row), flush=True)

# Session 12 probe: how much slower does work start after the GPU idled g ms (the SM clock drops
# while idle and ramps back under load)? Per trial: 10 ms idle, 3 ms of GEMMs (clocks up), an idle
# gap g (host spin after the device finished), then a series of kernels each timed with events.
import json, random, sys, time, torch
out_path = sys.argv[1]
torch.backends.cuda.matmul.allow_tf32 = False
def spin(sec):
    t = time.perf_counter()
    while time.perf_counter() - t < sec: pass
def ints(*s): return torch.randint(-2, 3, s, device="cuda").to(torch.bfloat16)
A2, B2, C2 = ints(2048, 4096), ints(4096, 2048), torch.empty(2048, 2048, device="cuda", dtype=torch.bfloat16)
A4, B4, C4 = ints(4096, 4096), ints(4096, 4096), torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16)
S, D = torch.empty(64 << 20, device="cuda"), torch.empty(64 << 20, device="cuda")  # 256 MiB each
kinds = {"gemm2048x2048x4096": (lambda: torch.mm(A2, B2, out=C2), 30),
         "gemm4096^3": (lambda: torch.mm(A4, B4, out=C4), 8),
         "copy256MiB": (lambda: D.copy_(S), 12)}
for f, _ in kinds.values():
    for _ in range(20): f()
torch.cuda.synchronize()
gaps = [0, 0.05, 0.2, 0.5, 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 200, 500]
res = []
random.seed(1)
for rep in range(3):
    for kind, (f, n) in kinds.items():
        order = gaps[:]; random.shuffle(order)
        for gap in order:
            spin(0.010)
            ew = torch.cuda.Event(enable_timing=True)
            for _ in range(60): torch.mm(A2, B2, out=C2)   # ~3 ms at full clocks
            ew.record(); ew.synchronize()
            spin(gap / 1000)
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
            ev[0].record()
            for i in range(n): f(); ev[i + 1].record()
            ev[-1].synchronize()
            res.append({"rep": rep, "kind": kind, "gap_ms": gap,
                        "idle_us": round(ew.elapsed_time(ev[0]) * 1000, 1),
                        "us": [round(ev[i].elapsed_time(ev[i + 1]) * 1000, 2) for i in range(n)]})
        print(kind, rep, flush=True)
json.dump(res, open(out_path, "w"))
# summary: per kind and gap, the median over reps of the series' total and of its first kernels
import statistics as st
for kind in kinds:
    base = st.median(sum(r["us"]) for r in res if r["kind"] == kind and r["gap_ms"] == 0)
    for gap in gaps:
        rs = [r for r in res if r["kind"] == kind and r["gap_ms"] == gap]
        tot = st.median(sum(r["us"]) for r in rs)
        first = [round(st.median(r["us"][i] for r in rs), 1) for i in range(min(6, len(rs[0]["us"])))]
        print(f"{kind:20s} gap {gap:6.2f} ms idle {st.median(r['idle_us'] for r in rs)/1000:7.2f} ms total {tot:8.1f} (+{tot-base:6.1f}) first {first}", flush=True)

# Session 9 probe: how fast does a GEMM slow down under continuous load (power cap), and how
# much idle time between bursts keeps it at its cold speed? Every GEMM is timed with events.
import time, torch, json
out = {}
for (m, n, k) in [(16384, 4096, 4096), (4096, 4096, 4096), (8192, 3584, 8192)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    name = f"{m}x{n}x{k}"
    for _ in range(3): torch.mm(a, b, out=c)
    torch.cuda.synchronize(); time.sleep(1.5)
    # continuous: ~600 ms of back-to-back GEMMs, each timed
    per = 2 * m * n * k / 700e12
    reps = int(0.6 / per)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    ev[0].record()
    for i in range(reps):
        torch.mm(a, b, out=c); ev[i + 1].record()
    torch.cuda.synchronize()
    t = [ev[i].elapsed_time(ev[i + 1]) * 1000 for i in range(reps)]
    el = 0; ramp = []
    for x in t:
        ramp.append((round(el / 1000, 2), round(x, 1))); el += x
    # keep every point for the first 60 ms, then every 10th
    keep = [r for i, r in enumerate(ramp) if r[0] < 60 or i % 10 == 0]
    out[name] = {"continuous": keep}
    # bursts of ~20 ms separated by idle gaps
    bursts = {}
    for gap_ms in [0, 2, 10, 50, 200]:
        time.sleep(1.5)
        nb = max(1, int(0.02 / per)); res = []
        for j in range(12):
            e = [torch.cuda.Event(enable_timing=True) for _ in range(nb + 1)]
            e[0].record()
            for i in range(nb): torch.mm(a, b, out=c); e[i + 1].record()
            torch.cuda.synchronize()
            s = sorted(e[i].elapsed_time(e[i + 1]) * 1000 for i in range(nb))
            res.append(round(s[len(s) // 2], 1))
            if gap_ms: time.sleep(gap_ms / 1000)
        bursts[str(gap_ms)] = res
    out[name]["bursts_20ms_gap_ms"] = bursts
    print(name, json.dumps(bursts), flush=True)
json.dump(out, open("/tmp/r/ramp.json", "w"))

# Session 11 probe: the power state of one GPU, every GEMM timed with events on one GPU clock.
# Continuous: ~400 ms of back-to-back GEMMs after an idle second. Bursts: 12 bursts of ~20 ms
# separated by idle gaps of G ms. Operands: integers in [-2, 2] (braid run's) and normal values.
import time, torch, json, sys
out = {}
def timed(a, b, c, n, base):
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    ev[0].record()
    for i in range(n):
        torch.mm(a, b, out=c); ev[i + 1].record()
    return ev
for kind in ["integers", "normal"]:
    for (m, n, k) in [(8192, 3584, 8192), (16384, 4096, 4096), (4096, 4096, 4096)]:
        g = torch.Generator(device="cuda"); g.manual_seed(0)
        if kind == "integers":
            a = torch.randint(-2, 3, (m, k), device="cuda", generator=g).to(torch.bfloat16)
            b = torch.randint(-2, 3, (k, n), device="cuda", generator=g).to(torch.bfloat16)
        else:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=g)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        name = f"{kind}/{m}x{n}x{k}"
        for _ in range(3): torch.mm(a, b, out=c)
        torch.cuda.synchronize(); time.sleep(1.0)
        per = 2 * m * n * k / 700e12
        base = torch.cuda.Event(enable_timing=True); base.record()
        ev = timed(a, b, c, int(0.4 / per), base)
        torch.cuda.synchronize()
        rec = {"continuous": [[round(base.elapsed_time(ev[i]), 4), round(ev[i].elapsed_time(ev[i + 1]) * 1000, 2)] for i in range(len(ev) - 1)]}
        bursts = {}
        for gap_ms in [2, 5, 10, 20, 50]:
            time.sleep(1.0)
            nb = max(1, int(0.02 / per)); pts = []
            base = torch.cuda.Event(enable_timing=True); base.record()
            for j in range(12):
                ev = timed(a, b, c, nb, base)
                torch.cuda.synchronize()
                pts += [[round(base.elapsed_time(ev[i]), 4), round(ev[i].elapsed_time(ev[i + 1]) * 1000, 2)] for i in range(nb)]
                time.sleep(gap_ms / 1000)
            bursts[str(gap_ms)] = pts
        rec["bursts_20ms"] = bursts
        out[name] = rec
        cont = [d for _, d in rec["continuous"]]
        print(name, "first", cont[:3], "last", cont[-3:], flush=True)
json.dump(out, open(sys.argv[1], "w"))

# Session 10 probe: is a GEMM timed back to back on the same operands faster than inside a
# program because its operands stay in the 50 MB L2? Integer operands (braid run's), NN; each
# shape from idle (100 ms), 5 warm-up, 10 timed with events; "hot L2": back to back; "cold L2":
# a 512 MiB buffer zeroed before each GEMM (untimed: the start event is recorded after it).
import json, sys, time, torch
SHAPES = [(16384, 4096, 4096), (8192, 4096, 4096), (4096, 4096, 4096), (2048, 4096, 4096),
          (1024, 4096, 4096), (512, 4096, 4096), (8192, 2048, 4096), (4096, 2048, 4096),
          (2048, 2048, 4096), (1024, 2048, 4096), (8192, 3584, 8192), (4096, 3584, 8192),
          (2048, 3584, 8192), (1024, 3584, 8192), (4096, 8192, 4096), (4096, 4096, 8192)]
dev = "cuda"
flush = torch.empty(512 * 1024 * 1024 // 4, device=dev, dtype=torch.float32)
ints = lambda s: torch.randint(-2, 3, s, device=dev, dtype=torch.float32).to(torch.bfloat16)
med = lambda x: sorted(x)[len(x) // 2]
res = []
for rep in range(2):
    for (m, n, k) in SHAPES:
        a, b, c = ints((m, k)), ints((k, n)), torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        r = dict(m=m, n=n, k=k, rep=rep)
        for mode in (("hot", "cold") if rep == 0 else ("cold", "hot")):
            torch.cuda.synchronize(); time.sleep(0.1)
            for _ in range(5): torch.mm(a, b, out=c)
            t = []
            for i in range(10):
                if mode == "cold": flush.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record(); torch.mm(a, b, out=c); e.record()
                t.append((s, e))
            torch.cuda.synchronize()
            r[mode] = med([s.elapsed_time(e) * 1000 for s, e in t])
        res.append(r)
        print(json.dumps(r), flush=True)
json.dump(res, open(sys.argv[1], "w"))

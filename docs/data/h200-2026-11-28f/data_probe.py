# Session 10 probe: does a bf16 GEMM's time on an H200 depend on its operands' values? braid run
# seeds integers in [-2, 2] (exact check); calibrate used randn. Same shapes, both layouts (NN as
# matmul, NT as linear), four kinds of data, interleaved, in two clock states:
#   cool: 100 ms idle, 5 warm-up, 10 timed back-to-back (median)
#   hot : 300 ms of back-to-back GEMMs first (power cap), then 20 timed (median)
import json, sys, time, torch
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
SHAPES = [(16384, 4096, 4096), (8192, 4096, 4096), (4096, 4096, 4096), (2048, 4096, 4096),
          (1024, 4096, 4096), (512, 4096, 4096), (8192, 2048, 4096), (4096, 2048, 4096),
          (2048, 2048, 4096), (1024, 2048, 4096), (8192, 3584, 8192), (4096, 3584, 8192),
          (2048, 3584, 8192), (1024, 3584, 8192), (8320, 4096, 4096), (6144, 6144, 6144)]
DATA = ["randn", "int2", "uniform", "zeros"]
dev = "cuda"
def make(kind, shape):
    if kind == "randn": return torch.randn(shape, device=dev, dtype=torch.bfloat16)
    if kind == "int2": return torch.randint(-2, 3, shape, device=dev, dtype=torch.float64).to(torch.bfloat16)
    if kind == "uniform": return (torch.rand(shape, device=dev, dtype=torch.float32) * 2 - 1).to(torch.bfloat16)
    return torch.zeros(shape, device=dev, dtype=torch.bfloat16)
def timed(f, n):
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    ev[0].record()
    for i in range(n): f(); ev[i + 1].record()
    torch.cuda.synchronize()
    return [ev[i].elapsed_time(ev[i + 1]) * 1000 for i in range(n)]
med = lambda x: sorted(x)[len(x) // 2]
res = []
for (m, n, k) in SHAPES:
    for rep in range(2):
        order = DATA[rep:] + DATA[:rep] if rep == 0 else list(reversed(DATA))
        for kind in order:
            a = make(kind, (m, k)); bnn = make(kind, (k, n)); w = make(kind, (n, k)); c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
            for lay, b in (("NN", bnn), ("NT", w.t())):
                f = lambda: torch.mm(a, b, out=c)
                torch.cuda.synchronize(); time.sleep(0.1)
                for _ in range(5): f()
                cool = timed(f, 10)
                per = 2 * m * n * k / 700e12
                for _ in range(max(1, int(0.3 / per))): f()
                hot = timed(f, 20)
                r = dict(m=m, n=n, k=k, data=kind, layout=lay, rep=rep, cool=med(cool), hot=med(hot), t=time.time())
                res.append(r)
                print(json.dumps(r), flush=True)
            del a, bnn, w, c
json.dump(res, open(sys.argv[1], "w"))

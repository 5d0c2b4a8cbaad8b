# NCCL against the copy engines as CUDA-graph replays on two H200s (session 6, calls H and I; calls
# K and L have their own scripts: k_table.py):
# every configuration of the graph table over both transports, side by side in each call
# (callH: NCCL first per shape; callI: copy engines first). GEMM alone / comm alone from torch's
# reference at the end of call I (callI/torch.jsonl; ideal = max of the two, comm = NCCL's
# collective alone); mlp and rsM have none there: their ideal is from the earlier folder's torch run.
# Usage: python3 table.py [--configs SHAPE]  (per-configuration rows of one shape)
import re, glob, os, collections, json, statistics, sys
HERE = os.path.dirname(os.path.abspath(__file__))
pat = re.compile(r"rank (\d+) timing (?:\[(.*?)\] )?\((interpreted|CUDA graph replay), (\d+) runs, median\): wall ([0-9.]+) us")
data = collections.defaultdict(dict)  # (shape, comm, variant, config) -> {call: max over ranks}
for f in glob.glob(os.path.join(HERE, 'call[HI]', 'g', 'run_*.log')):
    shape, comm, variant, rep = os.path.basename(f)[4:-4].split('_')
    res = {}
    for line in open(f):
        m = pat.search(line)
        if m: res.setdefault(m.group(2), {})[int(m.group(1))] = float(m.group(5))
    for cfg, v in res.items():
        if len(v) == 2: data[(shape, comm, variant, cfg)][rep] = max(v.values())
torch = {}
for f in [os.path.join(HERE, 'callI', 'torch.jsonl'), *glob.glob(os.path.join(HERE, '..', 'h200x2-2026-11-28', 'callB', 'torch', '*.log'))]:
    for line in open(f):
        if line.startswith('{'):
            d = json.loads(line); torch.setdefault((d['workload'], d['m'], d['k'], d['n']), d)
shapes = {'agL': ('ag_matmul', 8192, 8192, 3584), 'agM': ('ag_matmul', 4096, 8192, 1792),
          'rsL': ('matmul_rs', 16384, 8192, 4096), 'rsM': ('matmul_rs', 8192, 8192, 2048),
          'arL': ('matmul_ar', 16384, 8192, 4096), 'rplL': ('row_parallel_linear', 16384, 8192, 4096),
          'mlpL': ('mlp', 4096, 4096, 8192)}
MLP = (493, 193)  # PERFORMANCE.md's fourth-session table (device spans of the serial timelines)
med = {k: statistics.median(v.values()) for k, v in data.items()}
spread = {k: (max(v.values()) - min(v.values())) / min(v.values()) * 100 for k, v in data.items()}
short = lambda k: (k[2] + ' ' + k[3].replace(' prefetch=on defer-waits=on', ' +prefetch/defer')).replace('base ', '')
if len(sys.argv) > 2 and sys.argv[1] == '--configs':
    s = sys.argv[2]
    print('| configuration | NCCL (H / I) | copy engines (H / I) | copy engines / NCCL |'); print('|---|---|---|---|')
    for k in sorted({(k[2], k[3]) for k in data if k[0] == s}):
        n, c = data.get((s, 'nccl') + k, {}), data.get((s, 'cuda') + k, {})
        g = lambda d: ' / '.join(f"{d[r]:.0f}" if r in d else '—' for r in ('1', '2'))
        ratio = statistics.median(c.values()) / statistics.median(n.values()) if n and c else None
        print(f"| {short((0, 0) + k)} | {g(n)} | {g(c)} | {ratio:.2f} |" if ratio else f"| {short((0, 0) + k)} | {g(n)} | {g(c)} | — |")
    sys.exit()
print('| workload | m×k×n | GFLOP/rank | ideal | NCCL serial | NCCL best (config, spread) | copy engines serial | copy engines best (config, spread) | best / ideal | best vs serial |')
print('|---|---|---|---|---|---|---|---|---|---|')
for s, (w, m, k, n) in shapes.items():
    t = torch.get((w if w != 'row_parallel_linear' else 'matmul_ar', m, k, n))
    g, c = (t['gemm_us'], t['comm_us']) if t else MLP
    ideal = max(g, c)
    cells, bests, serials = [], [], []
    for comm in ('nccl', 'cuda'):
        rows = [(v, key) for key, v in med.items() if key[0] == s and key[1] == comm]
        if not rows: cells += ['—', '—']; continue
        serial = min(v for v, key in rows if key[2] == 'base' and key[3].startswith('streams=1 '))
        b = min(rows); bests.append(b); serials.append(serial)
        cells += [f"{serial:.0f}", f"{b[0]:.0f} ({short(b[1])}; {spread[b[1]]:.1f}%)"]
    b = min(bests)
    gf = (4 if w == 'mlp' else 2) * m * k * n / (1 if w == 'ag_matmul' else 2) / 1e9
    print(f"| {w} | {m}×{k}×{n} | {gf:.0f} | {ideal:.0f} | {' | '.join(cells)} | {ideal / b[0] * 100:.0f}% ({b[1][1]}) | {min(serials) / b[0]:.2f}x |")

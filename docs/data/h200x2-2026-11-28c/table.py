# The copy engines' new reductions against NCCL as CUDA-graph replays on two H200s (session 7,
# calls N, O and P: three launch sets; both transports in each sweep, `comm-backend=` in the config).
# A point is the median over the launch sets of the slower rank's median; spread = (max - min) / min.
# GEMM alone / NCCL collective alone from torch's reference in call O (callO/torch); mlp and agL from
# the sixth session's folder (h200x2-2026-11-28b) and the fourth session's table.
# Usage: python3 table.py [--configs SHAPE]
import re, glob, os, collections, json, statistics, sys
HERE = os.path.dirname(os.path.abspath(__file__))
pat = re.compile(r"rank (\d+) timing \[(.*?)\] \(CUDA graph replay, (\d+) runs, median\): wall ([0-9.]+) us")
data = collections.defaultdict(dict)  # (shape, config) -> {launch: max over ranks}
for f in glob.glob(os.path.join(HERE, 'call[NOP]', 'g', 'run_*.log')):
    shape, variant, rep = os.path.basename(f)[4:-4].split('_')
    res = collections.defaultdict(dict)
    for line in open(f):
        m = pat.search(line)
        if m: res[m.group(2)][int(m.group(1))] = float(m.group(4))
    for cfg, v in res.items():
        if len(v) == 2: data[(shape, variant + ' ' + cfg)][rep] = max(v.values())
ideal = {}
for f in glob.glob(os.path.join(HERE, 'callO', 'torch', '*.log')):
    for line in open(f):
        if line.startswith('{'):
            d = json.loads(line); ideal[(d['workload'], d['m'], d['k'], d['n'])] = (d['gemm_us'], d['comm_us'])
shapes = {'rsL': ('matmul_rs', 16384, 8192, 4096), 'rsM': ('matmul_rs', 8192, 8192, 2048),
          'arL': ('matmul_ar', 16384, 8192, 4096), 'rplL': ('row_parallel_linear', 16384, 8192, 4096),
          'mlpL': ('mlp', 4096, 4096, 8192), 'agL': ('ag_matmul', 8192, 8192, 3584)}
elsewhere = {'rplL': ideal.get(('matmul_ar', 16384, 8192, 4096)), 'mlpL': (493, 193), 'agL': (602, 185)}
med = {k: statistics.median(v.values()) for k, v in data.items()}
spread = {k: (max(v.values()) - min(v.values())) / min(v.values()) for k, v in data.items()}
if len(sys.argv) > 2 and sys.argv[1] == '--configs':
    for (s, c), t in sorted(med.items()):
        if s == sys.argv[2]: print(f"{t:8.1f} {100*spread[(s, c)]:5.1f}% {len(data[(s, c)])}  {c}")
    sys.exit()
print("| workload | m×k×n | GEMM alone | ideal | NCCL serial | NCCL best | copy engines best | best / ideal | best vs NCCL serial |")
print("|---|---|---|---|---|---|---|---|---|")
for s, (w, m, k, n) in shapes.items():
    g, c = ideal.get((w, m, k, n)) or elsewhere[s]
    best = {}
    for (sh, cfg), t in med.items():
        if sh != s: continue
        tr = 'cuda' if 'comm-backend=cuda' in cfg else 'nccl'
        if tr not in best or t < best[tr][0]: best[tr] = (t, cfg)
    serial = [t for (sh, cfg), t in med.items() if sh == s and 'streams=1 ' in cfg and 'prefetch' not in cfg and 'comm-backend=nccl' in cfg]
    b = min(best['nccl'][0], best['cuda'][0])
    fmt = lambda x: f"{x[0]:.0f} ({x[1].split(' ', 1)[1].replace(' comm-backend=nccl', '').replace(' comm-backend=cuda', '')}; {100*spread[(s, x[1])]:.1f}%)"
    print(f"| {w} | {m}×{k}×{n} | {g:.0f} | {max(g, c):.0f} | {serial[0]:.0f} | {fmt(best['nccl'])} | {fmt(best['cuda'])} | "
          f"{100*max(g, c)/b:.0f}% | {serial[0]/b:.2f}x |")

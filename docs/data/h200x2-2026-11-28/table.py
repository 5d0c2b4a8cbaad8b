# The CUDA-graph table of PERFORMANCE.md (2026-11-28, two H200) from this folder: graph replays of
# every configuration in launch sets callB/g (set 1) and callC/g (set 2, and set 3 where present);
# GEMM alone, comm alone and torch's fused op from torch's reference (callB/torch); mlp's GEMM
# alone and comm alone from the device spans of braid's interpreted serial timelines (callC/tl).
# Usage: python3 table.py [VARIANT_FILTER]
import re, glob, os, collections, json, statistics, sys
HERE = os.path.dirname(os.path.abspath(__file__))
pat = re.compile(r"rank (\d+) timing (?:\[(.*?)\] )?\((interpreted|CUDA graph replay), (\d+) runs, median\): wall ([0-9.]+) us")
data = collections.defaultdict(dict)  # (shape, variant, config) -> {launch: max over ranks}
for f in glob.glob(os.path.join(HERE, 'call*', 'g', 'run_*.log')):
    name = os.path.basename(f)[4:-4]
    base, rep = name.rsplit('_', 1)
    shape, variant = base.split('_', 1)
    res = {}
    for line in open(f):
        m = pat.search(line)
        if m: res.setdefault(m.group(2), {})[int(m.group(1))] = float(m.group(5))
    for cfg, v in res.items():
        data[(shape, variant, cfg)][os.path.basename(os.path.dirname(os.path.dirname(f))) + rep] = max(v.values())
torch = {}
for f in glob.glob(os.path.join(HERE, 'callB', 'torch', '*.log')):
    for line in open(f):
        if line.startswith('{'):
            d = json.loads(line); torch[(d['workload'], d['m'], d['k'], d['n'])] = d
def alone_from_timelines(prefix):
    g, c = [], []
    for f in glob.glob(os.path.join(HERE, 'callC', 'tl', prefix + '_*.streams1.*.json')):
        d = json.load(open(f)); per = collections.defaultdict(lambda: [0, 0])
        for o in d['ops']:
            dur = o['end_us'] - o['start_us']
            if o['kind'] == 'compute': per[o['rank']][0] += dur
            if o['kind'] == 'communication': per[o['rank']][1] += dur
        g.append(max(v[0] for v in per.values())); c.append(max(v[1] for v in per.values()))
    return (statistics.median(g), statistics.median(c)) if g else (None, None)
shapes = {'agL': ('ag_matmul', 8192, 8192, 3584), 'agM': ('ag_matmul', 4096, 8192, 1792),
          'rsL': ('matmul_rs', 16384, 8192, 4096), 'rsM': ('matmul_rs', 8192, 8192, 2048),
          'arL': ('matmul_ar', 16384, 8192, 4096), 'rplL': ('row_parallel_linear', 16384, 8192, 4096),
          'mlpL': ('mlp', 4096, 4096, 8192)}
def gflop(w, m, k, n):
    if w == 'ag_matmul': return 2 * m * k * n / 1e9
    if w == 'mlp': return 4 * m * k * n / 2 / 1e9
    return 2 * m * k * n / 2 / 1e9
fmt = lambda x: f'{x:.0f}' if x else '—'
print("| workload | m×k×n | GFLOP/rank | GEMM alone | comm alone | ideal | serial | best default pipeline | best schedule | best p2p | best (config) | % of ideal | vs serial | torch fused | TFLOP/s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for s, (w, m, k, n) in shapes.items():
    rows = {k2: statistics.median(v.values()) for k2, v in data.items() if k2[0] == s}
    if not rows: continue
    launches = {k2: len(v) for k2, v in data.items() if k2[0] == s}
    sp = {k2: (max(v.values()) - min(v.values())) / min(v.values()) * 100 for k2, v in data.items() if k2[0] == s}
    def best(pred):
        c = [(v, k2) for k2, v in rows.items() if pred(k2)]
        return min(c) if c else None
    serial = best(lambda k2: k2[1] == 'base' and 'streams=1 ' in k2[2])
    bd = best(lambda k2: k2[1] == 'base' and 'streams=1 ' not in k2[2])
    bs = best(lambda k2: k2[1] == 'sched')
    bp = best(lambda k2: k2[1].startswith('p2p'))
    ball = best(lambda k2: True)
    t = torch.get((w if w != 'row_parallel_linear' else 'matmul_ar', m, k, n))
    g, c = (t['gemm_us'], t['comm_us']) if t else alone_from_timelines(f'tl_{s}')
    ideal = max(g, c) if g else None
    fused = t['fused_us'] if t and t.get('fused_us') and w != 'row_parallel_linear' else None
    f = lambda b: f"{b[0]:.0f}" if b else "—"
    desc = lambda b: (b[1][1] + " " + b[1][2].replace(' prefetch=on defer-waits=on', ' +prefetch/defer')).replace('base ', '')
    print(f"| {w} | {m}×{k}×{n} | {gflop(w, m, k, n):.0f} | {fmt(g)} | {fmt(c)} | {fmt(ideal)} | {serial[0]:.0f} | {f(bd)} | {f(bs)} | {f(bp)} | "
          f"{ball[0]:.0f} ({desc(ball)}; {launches[ball[1]]} launches, spread {sp[ball[1]]:.1f}%) | {(f'{ideal / ball[0] * 100:.0f}%' if ideal else '—')} | "
          f"{serial[0] / ball[0]:.2f}x | {fmt(fused)} | {gflop(w, m, k, n) / ball[0] * 1e3:.0f} |")

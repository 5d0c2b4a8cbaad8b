# ACCURACY.md's 2026-11-28 table: the h200 preset against call C's interpreted runs on two H200s.
# measured = median over the two launches of the slower rank's median of 10 timed runs (run logs);
# predicted = braid validate of each launch's recorded timeline (rank skew from that launch),
# median over the launches; spread = (max - min) / min of the measured medians over the launches.
# Usage: python3 accuracy.py VALIDATION.jsonl   (bench/validate_timelines.py DIR --jsonl ...)
import json, re, sys, glob, os, collections, statistics
HERE = os.path.dirname(os.path.abspath(__file__))
pat = re.compile(r"rank (\d+) timing \[streams=(\d+) protocol=(\w)\] \(interpreted, (\d+) runs, median\): wall ([0-9.]+) us")
meas = collections.defaultdict(dict)
for f in glob.glob(os.path.join(HERE, 'callC', 'tl', 'run_*.log')):
    shape, rep = re.match(r'run_(\w+?)_(\d)\.log', os.path.basename(f)).groups()
    per = collections.defaultdict(dict)
    for line in open(f):
        m = pat.search(line)
        if m: per[(int(m.group(2)), m.group(3))][int(m.group(1))] = float(m.group(5))
    for k, v in per.items(): meas[(shape, k)][rep] = max(v.values())
pred = collections.defaultdict(dict); ops = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    shape, rep = re.match(r'tl_(\w+?)_(\d)\.', r['file']).groups()
    pred[(shape, (r['streams'], r['protocol']))][rep] = r['predicted_us']
    for kind, e in r['op_errors'].items(): ops[kind].append(abs(e) * 100)
rows = []
for k in sorted(meas):
    m = meas[k]; p = pred.get(k, {})
    if not p: continue
    mm = statistics.median(m.values()); pp = statistics.median(p.values())
    spread = (max(m.values()) - min(m.values())) / min(m.values()) * 100
    rows.append((k, mm, pp, (pp - mm) / mm * 100, spread))
print("| point | measured us | predicted us | error | spread |")
print("|---|---|---|---|---|")
for (shape, (s, pr)), mm, pp, e, sp in rows:
    print(f"| {shape} S={s} {pr} | {mm:.0f} | {pp:.0f} | {e:+.1f}% | {sp:.1f}% |")
def summary(sel, what):
    e = [abs(r[3]) for r in sel]
    if e: print(f"{what}: n={len(e)} median |error| {statistics.median(e):.1f}%, max {max(e):.1f}%")
summary(rows, "all points")
summary([r for r in rows if r[4] < 3], "points with spread < 3%")
print("per-op median |error| by kind: " + ", ".join(f"{k} {statistics.median(v):.1f}%" for k, v in sorted(ops.items())))
best = collections.defaultdict(list)
for (shape, cfg), mm, pp, e, sp in rows: best[shape].append((mm, pp, cfg))
agree = 0
for shape, v in sorted(best.items()):
    bm = min(v)[2]; bp = min(v, key=lambda x: x[1])[2]
    gap = (next(x[0] for x in v if x[2] == bp) - min(v)[0]) / min(v)[0] * 100
    agree += bm == bp
    print(f"{shape}: measured best S={bm[0]} {bm[1]}, predicted best S={bp[0]} {bp[1]} (measures {gap:.1f}% slower than the best)")
print(f"best choice agrees in {agree} of {len(best)} shapes")

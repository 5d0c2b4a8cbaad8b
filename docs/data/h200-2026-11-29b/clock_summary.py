import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
FMAX = 1980.0
def at(s, t):  # clock at time t (us): the sample interval containing t
    for x, f in s:
        if x >= t: return f
    return s[-1][1]
def deficit(s):  # microseconds lost to a clock below FMAX over the trace
    tot, prev = 0.0, 0.0
    for x, f in s:
        tot += (x - prev) * max(0.0, 1 - f / FMAX); prev = x
    return tot
for mode in ["alone", "load", "barrier"]:
    for g in sorted(set(r["gap_ms"] for r in rows)):
        rs = [r for r in rows if r["mode"] == mode and r["gap_ms"] == g]
        pts = [round(st.median(at(r["samples"], t) for r in rs)) for t in (5, 20, 50, 100, 150, 200, 300, 500, 1000, 1900)]
        print(f"{mode:8s} gap {g:6.2f} lat {st.median(r['start_latency_us'] for r in rs):7.1f} deficit {[round(deficit(r['samples']),1) for r in rs]} MHz@5,20,50,100,150,200,300,500,1000,1900us {pts}")

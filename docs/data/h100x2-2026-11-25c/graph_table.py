# The graph-replay table of PERFORMANCE.md from the logs of a run-5 directory (run5/ here, or
# ../h200x2-2026-11-25/run6 with a second argument to leave out the H100 spans): the serial,
# default, schedule and p2p configurations' medians over launches; GEMM alone and comm alone are
# device spans of the interpreted serial timelines of run2/ and run3/ (H100).
# Usage: python3 graph_table.py run5   |   python3 graph_table.py ../h200x2-2026-11-25/run6 noideal
import re,glob,os,collections,json,statistics,sys
HERE=os.path.dirname(os.path.abspath(__file__))
pat=re.compile(r"rank (\d+) timing (?:\[(.*?)\] )?\((interpreted|CUDA graph replay), (\d+) runs, median\): wall ([0-9.]+) us")
def load(d):
    data=collections.defaultdict(dict)
    for f in glob.glob(d+'/run_*.log'):
        name=os.path.basename(f)[4:-4]; base,rep=name.rsplit('_',1); shape,variant=base.split('_',1)
        res={}
        for line in open(f):
            m=pat.search(line)
            if m: res.setdefault(m.group(2),{})[int(m.group(1))]=float(m.group(5))
        for cfg,v in res.items(): data[(shape,variant,cfg)][rep]=max(v.values())
    return data
def alone(shape):
    g=[];c=[]
    for f in glob.glob(os.path.join(HERE,'run2',f'tl_{shape}_base.streams1.protocol*.json'))+glob.glob(os.path.join(HERE,'run3',f'tl_{shape}_base.streams1.protocol*.json')):
        d=json.load(open(f)); per=collections.defaultdict(lambda:[0,0])
        for o in d['ops']:
            dur=o['end_us']-o['start_us']
            if o['kind']=='compute': per[o['rank']][0]+=dur
            if o['kind']=='communication': per[o['rank']][1]+=dur
        g.append(max(v[0] for v in per.values())); c.append(max(v[1] for v in per.values()))
    return statistics.median(g) if g else None, statistics.median(c) if c else None
shapes={'agL':('ag_matmul',8192,8192,3584),'agM':('ag_matmul',4096,8192,1792),'rsL':('matmul_rs',16384,8192,4096),'rsM':('matmul_rs',8192,8192,2048),'arL':('matmul_ar',16384,8192,4096),'rplL':('row_parallel_linear',16384,8192,4096),'mlpL':('mlp',4096,4096,8192)}
def fmt(x): return f'{x:.0f}' if x else '—'
def gflop(w,m,k,n): 
    if w=='ag_matmul': return 2*m*k*n/1e9
    if w=='mlp': return 4*m*k*n/2/1e9
    return 2*m*k*n/2/1e9
data=load(sys.argv[1])
print("| workload | m×k×n | GFLOP/rank | GEMM alone | comm alone | ideal | serial | best default pipeline | best schedule | best p2p | best (config) | % of ideal | vs serial | TFLOP/s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for s,(w,m,k,n) in shapes.items():
    rows={k2:statistics.median(v.values()) for k2,v in data.items() if k2[0]==s}
    if not rows: continue
    sp={k2:(max(v.values())-min(v.values()))/min(v.values())*100 for k2,v in data.items() if k2[0]==s}
    serial=min((v,k2) for k2,v in rows.items() if k2[1]=='base' and 'streams=1 ' in k2[2])
    def best(pred):
        c=[(v,k2) for k2,v in rows.items() if pred(k2)]
        return min(c) if c else None
    bd=best(lambda k2:k2[1]=='base' and 'streams=1 ' not in k2[2])
    bs=best(lambda k2:k2[1]=='sched')
    bp=best(lambda k2:k2[1]=='p2p')
    ball=best(lambda k2:k2[1] in('base','sched','p2p'))
    g,c=alone(s); ideal=max(g,c) if g else None
    if len(sys.argv)>2: g=c=ideal=None
    f=lambda b:f"{b[0]:.0f}" if b else "—"
    desc=lambda b:(b[1][1]+" "+b[1][2].replace(' prefetch=on defer-waits=on',' +prefetch/defer')).replace('base ','')
    print(f"| {w} | {m}×{k}×{n} | {gflop(w,m,k,n):.0f} | {fmt(g)} | {fmt(c)} | {fmt(ideal)} | {serial[0]:.0f} | {f(bd)} | {f(bs)} | {f(bp)} | {ball[0]:.0f} ({desc(ball)}, spread {sp[ball[1]]:.1f}%) | {(f'{ideal/ball[0]*100:.0f}%' if ideal else '—')} | {serial[0]/ball[0]:.2f}x | {gflop(w,m,k,n)/ball[0]*1e3:.0f} |")

#!/usr/bin/env python3
"""The own shard copied vs read in place (call D): per configuration and launch, the slower
rank's median of 20 CUDA-graph replays, and the ratio in place / copied within each launch."""
import collections, glob, os, re, statistics

here = os.path.dirname(os.path.abspath(__file__))
t = collections.defaultdict(lambda: collections.defaultdict(list))  # key -> launch -> [rank medians]
for f in sorted(glob.glob(os.path.join(here, 'own_shard', 'run_*_fwd_*.log'))):
    shape, launch = re.search(r'run_(ag[LM])_fwd_(\d)', f).groups()
    for line in open(f):
        m = re.search(r'rank \d timing \[streams=(\d) copy-own-shard=(\w+) prefetch=(\w+).*wall ([0-9.]+) us', line)
        if m:
            s, copy, pf, us = m.groups()
            t[(shape, int(s), pf, 'copy' if copy == 'on' else 'in-place')][launch].append(float(us))
print('| shape | streams | prefetch | copied (launch 1 / 2) | in place (launch 1 / 2) | in place / copied |')
print('|---|---|---|---|---|---|')
for shape in ['agL', 'agM']:
    for s in [1, 2, 4]:
        for pf in ['off', 'on']:
            c = [max(t[(shape, s, pf, 'copy')][l]) for l in '12']
            i = [max(t[(shape, s, pf, 'in-place')][l]) for l in '12']
            r = [b / a for a, b in zip(c, i)]
            print(f'| {shape} | {s} | {pf} | {c[0]:.0f} / {c[1]:.0f} | {i[0]:.0f} / {i[1]:.0f} | {r[0]:.2f} / {r[1]:.2f} |')

#!/usr/bin/env python3
"""MACHINES.md's "h200 preset against measurements" tables, predicted by `braid sim` (interpreted,
protocol A, bf16) on the h200 preset and, in parentheses where it differs, h200-datasheet.
Usage: machines_table.py BRAID"""
import json
import subprocess
import sys

BRAID = sys.argv[1]


def sim(machine, d, m, k, n, streams):
    out = subprocess.run([BRAID, "sim", "ag_matmul", "--machine", machine, "--devices", str(d), "--m", str(m),
                          "--k", str(k), "--n", str(n), "--dtype", "bf16", "--streams", str(streams), "--json"],
                         check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    r = j["ranks"][0]
    return j["makespan_us"], r["compute_us"], r["comm_us"]


def both(f):
    a, b = f("h200"), f("h200-datasheet")
    return a if f"{a / 1e3:.2f}" == f"{b / 1e3:.2f}" else (a, b)


def ms(v):
    if isinstance(v, tuple):
        return f"{v[0] / 1e3:.2f} ({v[1] / 1e3:.2f})"
    return f"{v / 1e3:.2f}"


MEAS = {(2, 16384, 8192, 8192): ("3.31 ms", "0.70", "3.67", "3.58 (4)"), (2, 8192, 8192, 3584): ("0.66", "0.33", "0.97", "0.91 (4)"),
        (2, 4096, 8192, 3584): ("0.34", "0.18", "0.51", "0.52 (2)"), (4, 16384, 8192, 8192): ("3.32", "0.80", "3.75", "3.87 (8)"),
        (4, 8192, 8192, 3584): ("0.65", "0.40", "1.05", "1.04 (4)"), (4, 4096, 8192, 3584): ("0.35", "0.23", "0.58", "0.57 (2)")}
print("| GPUs | M, K, N | GEMM alone pred / meas | AG alone pred / meas | serial pred / meas | best chunked pred / meas |")
print("|---|---|---|---|---|---|")
for (d, m, k, n), meas in MEAS.items():
    gemm = both(lambda mc: sim(mc, d, m, k, n, 1)[1])
    ag = both(lambda mc: sim(mc, d, m, k, n, 1)[2])
    serial = both(lambda mc: sim(mc, d, m, k, n, 1)[0])
    best = {}
    for mc in ("h200", "h200-datasheet"):
        best[mc] = min((sim(mc, d, m, k, n, s)[0], s) for s in (2, 4, 8))
    bc = f"{best['h200'][0] / 1e3:.2f} ({best['h200'][1]})"
    if f"{best['h200'][0] / 1e3:.2f}" != f"{best['h200-datasheet'][0] / 1e3:.2f}":
        bc += f" ({best['h200-datasheet'][0] / 1e3:.2f} ({best['h200-datasheet'][1]}))"
    print(f"| {d} | {m}, {k}, {n} | {ms(gemm)} / {meas[0]} | {ms(ag)} / {meas[1]} | {ms(serial)} / {meas[2]} | "
          f"{bc} / {meas[3]} |")
print()
print("| all-gather output | 2 GPUs pred / meas | 4 GPUs pred / meas |")
print("|---|---|---|")
for label, rows, meas in (("1 MiB", 64, ("50 us", "40 us")), ("64 MiB", 4096, ("180 us", "210 us")),
                          ("256 MiB", 16384, ("600-700 us", "690-800 us")), ("512 MiB", 32768, ("1080 us", "1310 us"))):
    p = [sim("h200", d, rows, 8192, 64, 1)[2] for d in (2, 4)]
    print(f"| {label} | {p[0]:.0f} / {meas[0]} | {p[1]:.0f} / {meas[1]} |")

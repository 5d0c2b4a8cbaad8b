#!/usr/bin/env python3
"""Validate the simulator's power state against every timed run of a back-to-back sequence.

`braid run --repeat N --run-times FILE` writes, per configuration, every timed run's wall time
(docs/EXEC.md, "Run times"). Run after run the GPU's power rises, and on an H200 its GEMMs slow by
about 15% once the power cap is reached (docs/SIM.md, "Power state"). This script predicts run i
of each sequence with `braid sim --power R --power-gap G`, where R counts the runs before it (the
checked run, the warm-ups, the timed runs before i) and G is the cool-down plus the host's gap
between runs, and prints measured vs predicted at a spread of run indices, beside the prediction
from an idle start (`--power idle`, what braid sim gives without the power state). A point's error
is (predicted - measured) / measured; the summary gives the median and max |error| of both, and
per sequence the measured and predicted slowdown of its last runs over its first. When one program
ran at several cool-downs, a last table compares what the idle before each run cost, measured and
predicted: each cool-down's median run against the same program's run with the shortest cool-down
(the machine's host.after_idle and power state, docs/SIM.md), and sums up, for interpreted runs
and graph replays apart, how far the predicted cost is from the measured one as a share of the
cooled run, beside predicting no cost at all. Every file is read before anything is simulated: one
that cannot be read, a line that is not such a record, or an impossible value (a time <= 0, a
missing field) is refused with the file, the line and the field, exit 1.

Usage:
  bench/validate_runs.py FILE.jsonl [FILE.jsonl ...] --braid build/cli/braid --machine M.json
      [--dtype bf16] [--host-gap-us 20] [--points 12] [--jsonl OUT]
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# one reading of a run label, and of --braid and --jsonl
from validate_graphs import check_braid, check_output, parse_label, write_jsonl  # noqa: E402

LABEL = re.compile(r"^(\w+) \((.*)\)$")


def _kind(v):
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)


def _number(v):
    """A finite JSON number (not a boolean, not NaN or infinite, not an integer past a double's range)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return math.isfinite(v) if isinstance(v, float) else abs(v) < 1e300


def read_runs(path):
    """The sequences of a `braid run --run-times` file: one (line number, record, braid sim flags,
    per-run wall time of the slower rank) per line. A file that cannot be read, a line that is not
    such a record, or an impossible value is an error naming the file, the line and the field; so is
    a file with no record at all."""
    def bad(n, what):
        sys.exit(f"validate_runs: {path}: " + (f"line {n}: " if n else "") + what)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        bad(0, f"cannot read: {e.strerror or e}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad(data[:e.start].count(b"\n") + 1, "not UTF-8 text (is it a --run-times file?)")
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except (ValueError, RecursionError) as e:
            bad(n, f"not valid JSON ({getattr(e, 'msg', e)}, column {getattr(e, 'colno', '?')}); a --run-times file "
                "has one JSON object per line")
        if not isinstance(d, dict):
            bad(n, f"expected a JSON object (one configuration's runs), got {_kind(d)}")
        for field in ("program", "graph", "warmup_runs", "cool_down_ms", "ranks"):
            if field not in d:
                bad(n, f"missing field '{field}' (is it a braid run --run-times file?)")
        label = d["program"]
        m = LABEL.match(label) if isinstance(label, str) else None
        if not m:
            bad(n, f"program: expected braid run's label, 'WORKLOAD (D=..., S=..., ...)', got {label!r}")
        try:
            flags = [m.group(1)] + parse_label(m.group(1), m.group(2))
        except SystemExit as e:
            bad(n, "program: " + str(e.code).removeprefix("validate_graphs: "))
        if not isinstance(d.setdefault("settings", ""), str):
            bad(n, f"settings: expected a string, got {d['settings']!r}")
        if not isinstance(d["graph"], bool):
            bad(n, f"graph: expected true or false, got {d['graph']!r}")
        if not isinstance(d["warmup_runs"], int) or isinstance(d["warmup_runs"], bool) or d["warmup_runs"] < 0:
            bad(n, f"warmup_runs: expected a number of runs >= 0, got {d['warmup_runs']!r}")
        if not _number(d["cool_down_ms"]) or d["cool_down_ms"] < 0:
            bad(n, f"cool_down_ms: expected a number of milliseconds >= 0, got {d['cool_down_ms']!r}")
        ranks = d["ranks"]
        if not isinstance(ranks, list) or not ranks:
            bad(n, f"ranks: expected a non-empty array of ranks' runs, got {ranks!r}")
        runs = None
        for r, rank in enumerate(ranks):
            walls = rank.get("wall_us") if isinstance(rank, dict) else None
            if not isinstance(walls, list) or not walls:
                bad(n, f"ranks[{r}].wall_us: expected a non-empty array of run times, got {walls!r}")
            for i, w in enumerate(walls):
                if not _number(w) or w <= 0:
                    bad(n, f"ranks[{r}].wall_us[{i}]: expected a time in microseconds > 0, got {w!r}")
            if runs is not None and len(walls) != runs:
                bad(n, f"ranks[{r}].wall_us: {len(walls)} runs, ranks[0] has {runs} (every rank times the same runs)")
            runs = len(walls)
        walls = [max(rank["wall_us"][i] for rank in ranks) for i in range(runs)]
        out.append((n, d, flags, walls))
    if not out:
        bad(0, "no runs in it (empty; braid run --run-times writes one JSON line per configuration)")
    return out


def indices(n, points):
    """Run indices 0 .. n-1, dense at the start and geometric after."""
    out = set(range(min(n, 4)))
    x = 4.0
    while x < n and len(out) < points:
        out.add(int(x))
        x *= 1.6
    out.add(n - 1)
    return sorted(out)


def predict(args, flags, graph, power, gap_ms):
    cmd = [args.braid, "sim"] + flags + ["--dtype", args.dtype, "--machine", args.machine, "--json",
                                         "--power", str(power), "--power-gap", repr(gap_ms)]
    if graph:
        cmd.append("--graph")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("braid sim failed: " + " ".join(cmd) + "\n" + out.stderr)
    return json.loads(out.stdout)["makespan_us"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--braid", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--host-gap-us", type=float, default=20.0,
                    help="idle time between consecutive runs besides the cool-down (host sync, barrier, launch)")
    ap.add_argument("--points", type=int, default=12)
    ap.add_argument("--jsonl")
    args = ap.parse_args()
    if args.points < 1:
        ap.error(f"--points must be 1 or more, got {args.points}")
    if not math.isfinite(args.host_gap_us) or args.host_gap_us < 0:
        ap.error(f"--host-gap-us must be a number of microseconds >= 0, got {args.host_gap_us:g}")
    check_braid("validate_runs", args.braid)
    check_output("validate_runs", "--jsonl", args.jsonl)
    files = [(path, read_runs(path)) for path in args.files]  # every file read before anything is simulated
    records, with_power, idle_only = [], [], []
    by_program = {}  # (program, settings, graph) -> [(cool-down, measured median, predicted median)]
    for path, sequences in files:
        for _, d, flags, walls in sequences:
            label = d["program"]
            before = 1 + d["warmup_runs"]  # the checked run and the untimed ones
            gap_ms = d["cool_down_ms"] + args.host_gap_us / 1e3
            print(f"\n{os.path.basename(path)}: {label}{' [' + d['settings'] + ']' if d['settings'] else ''}, "
                  f"{'graph replays' if d['graph'] else 'interpreted'}, cool-down {d['cool_down_ms']} ms, "
                  f"{len(walls)} runs")
            print(f"  {'run':>5} {'measured':>10} {'predicted':>10} {'error':>7} {'idle start':>10} {'error':>7}")
            idle = predict(args, flags, d["graph"], "idle", 0)
            rows = []
            for i in indices(len(walls), args.points):
                p = predict(args, flags, d["graph"], before + i, gap_ms)
                e, e0 = (p - walls[i]) / walls[i], (idle - walls[i]) / walls[i]
                rows.append((i, walls[i], p, e, e0))
                with_power.append(abs(e))
                idle_only.append(abs(e0))
                print(f"  {i:>5} {walls[i]:>10.1f} {p:>10.1f} {100 * e:>+6.1f}% {idle:>10.1f} {100 * e0:>+6.1f}%")
                records.append({"file": path, "program": label, "settings": d["settings"], "run": i,
                                "measured_us": walls[i], "predicted_us": p, "idle_start_us": idle})
            k = max(1, len(walls) // 10)
            first, last = statistics.median(walls[:k]), statistics.median(walls[-k:])
            pf, pl = rows[0][2], rows[-1][2]
            print(f"  last runs / first runs: measured {last / first:.3f}, predicted {pl / pf:.3f}")
            by_program.setdefault((label, d["settings"], d["graph"]), []).append(
                (d["cool_down_ms"], statistics.median(r[1] for r in rows), statistics.median(r[2] for r in rows)))
    print(f"\n{len(with_power)} points: median |error| {100 * statistics.median(with_power):.1f}%, "
          f"max {100 * max(with_power):.1f}% with the power state; from an idle start "
          f"{100 * statistics.median(idle_only):.1f}%, max {100 * max(idle_only):.1f}%")
    cooled = {k: sorted(v) for k, v in by_program.items() if len({c for c, _, _ in v}) > 1}
    if cooled:
        print("\nWhat the idle before a run costs: each cool-down against the program's shortest one")
        print(f"  {'cool-down ms':>12} {'measured':>10} {'predicted':>10} {'+measured':>10} {'+predicted':>10}")
        share = {False: ([], []), True: ([], [])}  # per kind: |predicted - measured| cost, the measured cost, / run
        for (label, settings, graph), rows in cooled.items():
            print(f"{label}{' [' + settings + ']' if settings else ''}, {'graph replays' if graph else 'interpreted'}")
            base_m, base_p = rows[0][1], rows[0][2]
            for cd, m, p in rows:
                print(f"  {cd:>12g} {m:>10.1f} {p:>10.1f} {m - base_m:>+10.1f} {p - base_p:>+10.1f}")
            for cd, m, p in rows[1:]:
                share[graph][0].append(abs((p - base_p) - (m - base_m)) / m)
                share[graph][1].append(abs(m - base_m) / m)
        # The cost of the idle as a share of the cooled run: how far the prediction is from it, and
        # how far a prediction of no cost (no after-idle delay, no power state) would be.
        for graph, (err, none) in share.items():
            if err:
                print(f"{'graph replays' if graph else 'interpreted'}: the idle's cost predicted within "
                      f"{100 * statistics.median(err):.1f}% of the run median, {100 * max(err):.1f}% max, over "
                      f"{len(err)} cool-downs (predicting no cost: {100 * statistics.median(none):.1f}%, "
                      f"{100 * max(none):.1f}% max)")
    if args.jsonl:
        write_jsonl("validate_runs", "--jsonl", args.jsonl, records)


if __name__ == "__main__":
    main()

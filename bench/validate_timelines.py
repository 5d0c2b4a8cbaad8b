#!/usr/bin/env python3
"""Validate a directory of measured timelines against a machine: one `braid validate` per file.

Each timeline (`braid run --timeline`, docs/TIMELINE.md) names its program in its `program` field,
e.g. "ag_matmul (D=2, S=4, m=8192, k=8192, n=3584, protocol B, modulo, collective)", and its
transport in `meta.backend` ("nccl", "cuda-ipc"); this script turns those into the workload flags
of `braid validate`, runs it with `--json`, and prints one table row per timeline, the error
summary by workload / pipeline / transport, per-kind op errors, and whether the simulator's
fastest configuration of each shape is the measured fastest. A timeline that is not a JSON object
with a string `program` (and an object `meta`) is an error naming it and the field, exit 1.

    bench/validate_timelines.py DIR --braid build/cli/braid --machine h100 [--jsonl OUT] [--markdown]
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# one reader of braid run's program labels, and of --braid and --jsonl
from validate_graphs import check_braid, check_output, parse_label, write_jsonl  # noqa: E402

PROGRAM = re.compile(r"^(\w+) \((D=[^()]*)\)$")


def flags_of(program):
    """The workload, its `braid validate` flags and a summary from a timeline's `program` field
    ("ag_matmul (D=2, S=4, m=..., protocol B, modulo, p2p, prefetch, copy engines)"), or None."""
    g = PROGRAM.match(program)
    if not g:
        return None
    w, inner = g.groups()
    try:
        flags = parse_label(w, inner)
    except SystemExit:
        return None
    value = {flags[i]: flags[i + 1] for i in range(len(flags) - 1) if flags[i].startswith("--")}
    m, k, n = value.get("--m"), value.get("--k"), value.get("--n")
    info = {"workload": w, "streams": int(value.get("--streams", 1)), "protocol": value.get("--protocol"),
            "pipeline": value.get("--pipeline", "collective"), "shape": f"{m}x{k}x{n}"}
    schedule = [f"pool={value['--pool']}"] if "--pool" in value else []
    schedule += [f[2:] for f in ("--defer-waits", "--prefetch") if f in flags]
    schedule += ["own-shard in-place"] if value.get("--own-shard") == "in-place" else []
    if schedule:
        info["schedule"] = " ".join(schedule)
    return w, flags, info


HAS_TRANSPORT = {}


def read_timeline(path):
    """The timeline at `path` as a dict whose `program` is a string and whose `meta` (if any) is an
    object with a string `backend`; anything else is an error naming the file (and the field)."""
    try:
        with open(path, "rb") as f:
            t = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise SystemExit(f"{path}: cannot read: {e.strerror or e}")
    except UnicodeDecodeError:
        raise SystemExit(f"{path}: not UTF-8 text (a braid run --timeline file is JSON)") from None
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path}: not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise SystemExit(f"{path}: not valid JSON: nested too deeply") from None
    if not isinstance(t, dict):
        raise SystemExit(f"{path}: expected a JSON object (a braid run --timeline file), got "
                         f"{'an array' if isinstance(t, list) else repr(t)}")
    if not isinstance(t.get("program"), str):
        what = "missing" if "program" not in t else f"expected a string, got {t['program']!r}"
        raise SystemExit(f"{path}: program: {what} (braid run's label, e.g. 'ag_matmul (D=2, S=4, ...)')")
    meta = t.setdefault("meta", {})
    if not isinstance(meta, dict):
        raise SystemExit(f"{path}: meta: expected an object, got {meta!r}")
    if not isinstance(meta.setdefault("backend", "nccl"), str):
        raise SystemExit(f"{path}: meta.backend: expected a string (nccl, cuda-ipc), got {meta['backend']!r}")
    return t


def validate(braid, machine, path, extra):
    t = read_timeline(path)
    parsed = flags_of(t["program"])
    if not parsed:
        raise SystemExit(f"{path}: cannot read the workload from program {t['program']!r}")
    workload, flags, info = parsed
    # The transport: the program's own (`--comm-backend cuda` in its label), or every communication
    # moved onto the copy engines by `braid run --backend-override cuda` (its only communicator).
    backend = t["meta"]["backend"]
    transport = "cuda" if "--comm-backend" in flags or backend == "cuda-ipc" else "nccl"
    cmd = [braid, "validate", workload, "--measured", path, "--machine", machine, "--json"] + flags + extra
    if backend == "cuda-ipc" and "--comm-backend" not in flags and HAS_TRANSPORT.get(braid):
        cmd += ["--transport", "cuda"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{path}: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    v = json.loads(out.stdout)
    info.update(file=os.path.basename(path), transport=transport,
                measured_us=v["measured_makespan_us"], predicted_us=v["predicted_makespan_us"],
                error=v["makespan_error"], median_op_error=v["median_abs_op_error"],
                op_errors={}, skew_us=v.get("rank_skew_us"))
    by_kind = {}
    for op in v["ops"]:
        kind = "gemm" if op["op"] in ("matmul", "linear") else op["op"].split()[0]
        by_kind.setdefault(kind, []).append(op["error"])
    info["op_errors"] = {k: statistics.median(map(abs, e)) for k, e in by_kind.items()}
    return info


def pct(x):
    return f"{100 * x:+.1f}%"


def summary(rows, key):
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(abs(r["error"]))
    return {k: (len(e), statistics.median(e), max(e)) for k, e in sorted(groups.items())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--braid", default="build/cli/braid")
    ap.add_argument("--machine", default="h100")
    ap.add_argument("--jsonl", help="also write one JSON line per timeline here")
    ap.add_argument("--extra", default="", help="more flags for braid validate (one string)")
    a = ap.parse_args()
    check_braid("validate_timelines", a.braid)
    check_output("validate_timelines", "--jsonl", a.jsonl)
    files = sorted(glob.glob(os.path.join(a.dir, "tl_*.json")))
    if not files:
        raise SystemExit(f"no tl_*.json timelines in {a.dir}")
    help_text = subprocess.run([a.braid, "validate", "--help"], capture_output=True, text=True).stdout
    HAS_TRANSPORT[a.braid] = "--transport" in help_text
    rows = [validate(a.braid, a.machine, f, a.extra.split()) for f in files]
    if a.jsonl:
        write_jsonl("validate_timelines", "--jsonl", a.jsonl, rows)
    print(f"machine {a.machine}: {len(rows)} timelines")
    print("| timeline | measured us | predicted us | error | median per-op error |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['file'][3:-5]} | {r['measured_us']:.1f} | {r['predicted_us']:.1f} | {pct(r['error'])} | "
              f"{100 * r['median_op_error']:.1f}% |")
    errs = [abs(r["error"]) for r in rows]
    print(f"\nall: median |error| {100 * statistics.median(errs):.1f}%, max {100 * max(errs):.1f}%")
    for name, key in (("workload", lambda r: r["workload"]), ("pipeline", lambda r: r["pipeline"]),
                      ("transport", lambda r: r["transport"]), ("streams", lambda r: r["streams"])):
        print(f"by {name}: " + ", ".join(f"{k}: n={n} median {100 * m:.1f}% max {100 * x:.1f}%"
                                         for k, (n, m, x) in summary(rows, key).items()))
    kinds = {}
    for r in rows:
        for k, e in r["op_errors"].items():
            kinds.setdefault(k, []).append(e)
    print("per-op median |error| by kind (median over timelines): " +
          ", ".join(f"{k} {100 * statistics.median(e):.1f}%" for k, e in sorted(kinds.items())))
    # Best choice per workload, shape and transport, among the measured configurations.
    print("\n| workload | shape | transport | configs | simulator's best | measured best | agree | measured gap of the pick |")
    print("|---|---|---|---|---|---|---|---|")
    cells = {}
    for r in rows:
        cells.setdefault((r["workload"], r["shape"], r["transport"]), []).append(r)
    agree = 0
    for (w, s, t), rs in sorted(cells.items()):
        def name(r):
            return f"S={r['streams']} {r['protocol']} {r['pipeline']}" + (f" {r['schedule']}" if r.get("schedule") else "")
        p = min(rs, key=lambda r: r["predicted_us"])
        m = min(rs, key=lambda r: r["measured_us"])
        gap = p["measured_us"] / m["measured_us"] - 1
        ok = p is m
        agree += ok
        print(f"| {w} | {s} | {t} | {len(rs)} | {name(p)} | {name(m)} | {'yes' if ok else 'no'} | {100 * gap:.1f}% |")
    print(f"\nbest choice agrees in {agree} of {len(cells)} cells")


if __name__ == "__main__":
    sys.exit(main())

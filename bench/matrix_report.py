#!/usr/bin/env python3
"""Turns bench/overlap_matrix.py's JSON lines into the markdown tables of docs/PERFORMANCE.md
("Overlap on two GPUs") and docs/ACCURACY.md. Python 3 standard library only.

  bench/matrix_report.py RESULTS_DIR_OR_JSONL... [--machine M] [--fit-from MEASUREMENTS.json]
                         [--fit W:M:K:N ...] [--section performance|accuracy|all] [-o OUT.md]

Measured figures are medians over a point's launches; a point's spread is (max - min) / min over
its launches. The fit set is the shapes a calibration was fitted to: given with --fit, or taken
from the calibration's measurement file (--fit-from: a shape whose serial GEMM or collective is
in it). Error statistics are never pooled across the two sets.
"""
import argparse
import json
import os
import statistics
import sys

SPREAD_LIMIT = 0.03          # points noisier than this are left out of the error statistics
TARGET_MEDIAN = 0.03         # docs/ACCURACY.md's targets
TARGET_MAX = 0.08
COLLECTIVE = {"ag_matmul": "Allgather", "matmul_rs": "ReduceScatter", "matmul_ar": "Allreduce",
              "row_parallel_linear": "Allreduce", "mlp": "Allreduce"}


# ---------------------------------------------------------------- loading

def load(paths):
    recs = []
    for p in paths:
        files = [os.path.join(p, f) for f in sorted(os.listdir(p)) if f.endswith(".jsonl")] if os.path.isdir(p) else [p]
        for f in files:
            with open(f) as fh:
                for n, line in enumerate(fh, 1):
                    if line.strip():
                        try:
                            recs.append(json.loads(line))
                        except ValueError as e:
                            raise SystemExit(f"matrix_report: {f}:{n}: not JSON ({e})")
    return recs


def shape_key(r):
    return (r["workload"], r["m"], r["k"], r["n"])


def other_knobs(r):
    """A record's lowering knobs besides streams and protocol, as sorted (knob, value) pairs: the
    pipeline kind (records from before it ran the collective pipeline) and any --knob dimension."""
    knobs = dict(r.get("knobs") or {})
    knobs.setdefault("pipeline", r.get("pipeline") or "collective")
    return tuple(sorted((k, str(v)) for k, v in knobs.items() if k not in ("streams", "protocol")))


def point_key(r):
    """(workload, m, k, n, streams, protocol, comm, other knobs): the fields at [4], [5], [6] are
    what every table groups by; [7] carries the pipeline and any further knob."""
    return shape_key(r) + (r["streams"], r["protocol"], r["comm"], other_knobs(r))


def knob(key, name, default=None):
    return dict(key[7]).get(name, default)


def config_label(key, comm=True):
    """"S=2 B p2p nccl" (+ any further knob as name=value)."""
    extra = " ".join(f"{k}={v}" for k, v in key[7] if k != "pipeline")
    parts = [f"S={key[4]}", key[5], knob(key, "pipeline", "collective")] + ([extra] if extra else [])
    return " ".join(parts + ([key[6]] if comm else []))


def spread(values):
    values = [v for v in values if v is not None]
    if len(values) < 2 or min(values) <= 0:
        return None
    return (max(values) - min(values)) / min(values)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


class Matrix:
    """The records grouped: launches per point, validations per (machine, point), torch per shape."""

    def __init__(self, recs):
        self.meta = [r for r in recs if r.get("type") == "meta"]
        self.runs, self.vals, self.torch, self.tune = {}, {}, {}, {}
        self.sizes, self.gflop = {}, {}
        for r in recs:
            t = r.get("type")
            if t == "run" and r.get("exit_code") == 0 and r.get("wall_us") is not None:
                self.runs.setdefault(point_key(r), []).append(r)
                self.sizes[shape_key(r)] = r.get("size")
                self.gflop[shape_key(r)] = r.get("gflop_per_rank")
            elif t == "validation" and r.get("exit_code") == 0 and r.get("predicted_makespan_us") is not None:
                # One per launch: validating the same timelines again (bench/overlap_matrix.py
                # validate) replaces the earlier record.
                self.vals.setdefault(r["machine"], {}).setdefault(point_key(r), {})[r.get("launch")] = r
            elif t == "torch" and r.get("result"):
                self.torch.setdefault(shape_key(r), []).append(r["result"])
            elif t == "tune" and r.get("exit_code") == 0 and r.get("best"):
                self.tune[(r["machine"],) + shape_key(r)] = r
        self.failed = [r for r in recs if r.get("type") == "run" and (r.get("exit_code") != 0 or r.get("wall_us") is None)]
        self.skipped = [r for r in recs if r.get("type") == "skipped"]

    def shapes(self):
        return sorted({k[:4] for k in self.runs}, key=lambda s: (s[0], self.gflop.get(s, 0)))

    def comms(self, shape):
        return sorted({k[6] for k in self.runs if k[:4] == shape})

    def wall(self, key):
        rs = self.runs.get(key, [])
        return median([r["wall_us"] for r in rs]), spread([r["wall_us"] for r in rs]), len(rs)

    def serial_key(self, shape, comm):
        """Protocol A's one-chunk program on the collective pipeline, else another one-chunk one."""
        keys = sorted((k for k in self.runs if k[:4] == shape and k[4] == 1 and k[6] == comm),
                      key=lambda k: (k[5] != "A", knob(k, "pipeline") != "collective", k))
        return keys[0] if keys else None

    def serial_spans(self, shape, comm):
        rs = self.runs.get(self.serial_key(shape, comm), [])
        spans = [r["spans"] for r in rs if r.get("spans")]
        if not spans:
            return None, None
        return median([s["compute_us"] for s in spans]), median([s["comm_us"] for s in spans])


# ---------------------------------------------------------------- formatting

def ms(us):
    return "—" if us is None else f"{us / 1e3:.3f}"


def pct(x, signed=False):
    if x is None:
        return "—"
    return f"{x * 100:+.1f}%" if signed else f"{x * 100:.1f}%"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def shape_str(shape):
    w, m, k, n = shape
    return f"{m}×{k}×{n}"


# ---------------------------------------------------------------- (a) the benchmark table

def performance(mx, machine):
    rows, notes = [], []
    for shape in mx.shapes():
        comms = mx.comms(shape)
        base = "nccl" if "nccl" in comms else comms[0]
        gemm, comm_alone = mx.serial_spans(shape, base)
        comm_each = {c: mx.serial_spans(shape, c)[1] for c in comms}
        serial, serial_spread, _ = mx.wall(mx.serial_key(shape, base))
        best = None  # (us, spread, key): the fastest pipelined configuration (S > 1)
        overall = None  # the fastest of all, serial ones (S = 1) included: braid's best choice
        for key in sorted(k for k in mx.runs if k[:4] == shape):
            us, sp, _ = mx.wall(key)
            if key[4] > 1 and (best is None or us < best[0]):
                best = (us, sp, key)
            if overall is None or us < overall[0]:
                overall = (us, sp, key)
        fastest_comm = min([c for c in comm_each.values() if c is not None], default=None)
        ideal = max(gemm, fastest_comm) if gemm is not None and fastest_comm is not None else None
        torch = mx.torch.get(shape, [])
        fused = median([t.get("fused_us") for t in torch])
        tserial = median([t.get("serial_us") for t in torch])
        gflop = mx.gflop.get(shape)
        best_us = overall[0] if overall else None
        spreads = [s for s in (serial_spread, best[1] if best else None, overall[1] if overall else None)
                   if s is not None]
        flag = ""
        if overall and overall[2][4] == 1 and best:
            # The rule: never slower than serial; choose serial when pipelining loses, and say so.
            tune = mx.tune.get((machine,) + shape) if machine else None
            pick = "—" if tune is None else ("yes" if tune["picks_serial"] else f"no ({tune_label(tune['best'])})")
            flag = (f"every pipelined configuration is slower than the fastest serial one: choose serial; "
                    f"tune picks serial: {pick}")
        best_cell = "—"
        if overall:
            best_cell = f"{ms(overall[0])} ({'serial: ' if overall[2][4] == 1 else ''}{config_label(overall[2])})"
        rows.append([shape[0], shape_str(shape), f"{gflop:.3g}" if gflop else "—", ms(gemm),
                     " / ".join(f"{ms(comm_each[c])} ({c})" for c in comms), ms(serial),
                     f"{ms(best[0])} ({config_label(best[2])})" if best else "—", best_cell, ms(ideal),
                     pct(ideal / best_us) if ideal and best_us else "—",
                     f"{gflop / best_us * 1e3:.3g}" if gflop and best_us else "—", ms(fused), ms(tserial),
                     pct(max(spreads)) if spreads else "—", flag])
    header = ["workload", "m×k×n", "GFLOP/rank", "GEMM alone ms", "comm alone ms", "serial ms",
              "best pipelined ms (S, protocol, pipeline, transport)", "best braid ms (its configuration)",
              "ideal ms", "% of ideal (best braid)", "TFLOP/s", "torch fused ms", "torch serial ms", "spread", "note"]
    text = table(header, rows)
    if mx.failed or mx.skipped:
        notes.append(f"{len(mx.failed)} launches failed and {len(mx.skipped)} were skipped (time budget); "
                     "they are not in the table.")
    return text + ("\n\n" + "\n".join(notes) if notes else "")


def tune_label(best):
    """braid tune's pick as "S=2 B p2p" (records from before pipelines: the collective one)."""
    return f"S={best['streams']} {best['protocol']} {best.get('pipeline', 'collective')}"


# ---------------------------------------------------------------- (b) accuracy

def fit_shapes_from(path, ranks_default=2):
    """Shapes (workload, m, k, n) whose serial GEMM or collective a calibration measured."""
    with open(path) as f:
        meas = json.load(f)
    gemms = {(g["m"], g["n"], g["k"]) for g in meas.get("gemm", [])}
    colls = {(c["kind"], c["bytes"]) for c in meas.get("collective", [])}
    for o in meas.get("overlap", []):  # a contention pair fits its GEMM and its collective too
        gemms.add((o["gemm"]["m"], o["gemm"]["n"], o["gemm"]["k"]))
        colls.add((o["collective"]["kind"], o["collective"]["bytes"]))
    return gemms, colls


def in_fit(shape, fit, fit_meas, ranks=2, bytes_per=2):
    if shape in fit:
        return True
    if not fit_meas:
        return False
    gemms, colls = fit_meas
    w, m, k, n = shape
    d = ranks
    if w == "ag_matmul":
        g, coll_bytes = [(m, n, k)], m * k * bytes_per
    elif w == "mlp":
        g, coll_bytes = [(m, n // d, k), (m, k, n // d)], m * k * bytes_per
    else:
        g, coll_bytes = [(m, n, k // d)], m * n * bytes_per
    return any(x in gemms for x in g) or (COLLECTIVE[w], coll_bytes) in colls


def accuracy_points(mx, machine, fit, fit_meas):
    pts = []
    for key, by_launch in sorted(mx.vals.get(machine, {}).items()):
        vs = list(by_launch.values())
        measured = [v["measured_makespan_us"] for v in vs]
        pred = median([v["predicted_makespan_us"] for v in vs])
        meas = median(measured)
        ranks = vs[0].get("ranks") or 2
        pts.append({"key": key, "predicted": pred, "measured": meas,
                    "error": (pred - meas) / meas if meas else None, "spread": spread(measured),
                    "launches": len(vs), "op_median": median([v.get("median_abs_op_error") for v in vs]),
                    "fit": in_fit(key[:4], fit, fit_meas, ranks)})
    return pts


def error_stats(pts):
    ok = [p for p in pts if p["spread"] is not None and p["spread"] < SPREAD_LIMIT and p["error"] is not None]
    errs = [abs(p["error"]) for p in ok]
    return {"points": len(pts), "used": len(ok), "median": median(errs), "max": max(errs) if errs else None}


def verdict(st):
    if st["median"] is None:
        return "no point with spread < 3%"
    good = st["median"] <= TARGET_MEDIAN and st["max"] <= TARGET_MAX
    return "meets the targets" if good else "misses the targets"


def accuracy(mx, machine, fit, fit_meas, preset):
    pts = accuracy_points(mx, machine, fit, fit_meas)
    out = [f"### Machine `{machine}`"]
    if preset:
        out.append("An uncalibrated preset: no point was fitted, every point is held out.")
    rows = [[k[0], shape_str(k[:4]), k[4], k[5], " ".join(f"{n}={v}" if n != "pipeline" else v for n, v in k[7]),
             k[6], ms(p["predicted"]), ms(p["measured"]),
             pct(p["error"], True), pct(p["spread"]), pct(p["op_median"]), "fit" if p["fit"] else "held out"]
            for p in pts for k in [p["key"]]]
    out.append(table(["workload", "m×k×n", "S", "protocol", "pipeline", "transport", "predicted ms", "measured ms",
                      "error",
                      "spread", "median op error", "set"], rows))
    summary = []
    for name, sel in (("fit", [p for p in pts if p["fit"]]), ("held out", [p for p in pts if not p["fit"]])):
        if preset and name == "fit":
            continue
        st = error_stats(sel)
        summary.append([name, st["points"], st["used"], pct(st["median"]), pct(st["max"]), verdict(st)])
    out.append(f"End-to-end absolute error over points with spread < {SPREAD_LIMIT:.0%} (targets: median ≤ "
               f"{TARGET_MEDIAN:.0%}, max ≤ {TARGET_MAX:.0%}):")
    out.append(table(["set", "points", "spread < 3%", "median abs. error", "max abs. error", "verdict"], summary))
    out.append("Best configuration, simulated vs measured (among the measured pipelined and serial "
               "configurations; measured = median wall time):")
    out.append(table(["workload", "m×k×n", "transport", "simulator's best", "measured best", "agree",
                      "measured gap of the simulator's pick", "braid tune's pick"], best_rows(mx, machine, pts)))
    out.append("Protocols side by side (the nvFuser paradox; A: separate sync loop, B: in-loop sync + join "
               "loop, C: in-loop sync + per-iteration join), predicted / measured ms:")
    out.append(table(["workload", "m×k×n", "transport, pipeline", "S", "A", "B", "C", "fastest predicted",
                      "fastest measured"],
                     paradox_rows(pts)))
    return "\n\n".join(out)


def best_rows(mx, machine, pts):
    rows = []
    groups = {}
    for p in pts:
        groups.setdefault(p["key"][:4] + (p["key"][6],), []).append(p)
    for g, ps in sorted(groups.items()):
        walls = {p["key"]: mx.wall(p["key"]) for p in ps}
        measured = [p for p in ps if walls[p["key"]][0] is not None]
        if not measured:
            continue
        sim_best = min(ps, key=lambda p: p["predicted"])
        meas_best = min(measured, key=lambda p: walls[p["key"]][0])
        cfg = lambda p: config_label(p["key"], comm=False)
        gap = None
        if walls.get(sim_best["key"], (None,))[0] is not None:
            gap = walls[sim_best["key"]][0] / walls[meas_best["key"]][0] - 1
        tune = mx.tune.get((machine,) + g[:4])
        tpick = tune_label(tune["best"]) if tune else "—"
        agree = "yes" if sim_best is meas_best else ("within spread" if gap is not None and gap < SPREAD_LIMIT else "no")
        rows.append([g[0], shape_str(g[:4]), g[4], cfg(sim_best), cfg(meas_best), agree, pct(gap), tpick])
    return rows


def paradox_rows(pts):
    rows = []
    by = {p["key"]: p for p in pts}
    groups = sorted({k[:5] + (k[6], k[7]) for k in by if k[4] > 1})
    for w, m, k, n, s, comm, other in groups:
        cells, pred, meas = [], {}, {}
        for proto in "ABC":
            p = by.get((w, m, k, n, s, proto, comm, other))
            if p:
                pred[proto], meas[proto] = p["predicted"], p["measured"]
            cells.append(f"{ms(p['predicted'])} / {ms(p['measured'])}" if p else "—")
        rows.append([w, shape_str((w, m, k, n)), comm + "".join(f" {v}" for _, v in other), s] + cells +
                    [min(pred, key=pred.get) if pred else "—", min(meas, key=meas.get) if meas else "—"])
    return rows


# ---------------------------------------------------------------- main

def header(mx):
    if not mx.meta:
        return "No meta record: machine, versions and commit unknown."
    lines = []
    for m in mx.meta:
        gpus = "; ".join(m.get("gpus") or []) or "no GPU"
        lines.append(f"- {m.get('date')}, part {m.get('part')}: {gpus}; braid {m.get('commit', 'unknown')[:12]}"
                     f"{' (dirty)' if m.get('dirty') else ''}; backend {m.get('backend')}, {m.get('ranks')} ranks, "
                     f"{m.get('dtype')}, {m.get('launches')} launches x {m.get('repeat')} timed runs; transports "
                     f"{', '.join(m.get('override_backends') or [])}")
    return "\n".join(lines)


PRESETS = {"h100", "h200", "b200", "a100"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="result directories (every *.jsonl in them) or JSON lines files")
    ap.add_argument("--machine", action="append", default=[],
                    help="machines whose validations to report (default: every one found)")
    ap.add_argument("--fit", action="append", default=[], help="a fitted shape, WORKLOAD:M:K:N (repeatable)")
    ap.add_argument("--fit-from", help="the calibration's measurement file: its GEMM and collective shapes")
    ap.add_argument("--section", choices=["performance", "accuracy", "all"], default="all")
    ap.add_argument("-o", "--out", help="write here instead of stdout")
    a = ap.parse_args(argv)
    fit = set()
    for f in a.fit:
        parts = f.split(":")
        if len(parts) != 4 or not all(x.isdigit() for x in parts[1:]):
            ap.error(f"--fit {f}: expected WORKLOAD:M:K:N")
        fit.add((parts[0], int(parts[1]), int(parts[2]), int(parts[3])))
    fit_meas = fit_shapes_from(a.fit_from) if a.fit_from else None
    mx = Matrix(load(a.inputs))
    machines = a.machine or sorted(set(mx.vals) | {k[0] for k in mx.tune})
    out = ["Measured: " + header(mx)]
    if a.section in ("performance", "all"):
        out.append("## Overlap on two GPUs\n\n" + performance(mx, machines[0] if machines else None))
    if a.section in ("accuracy", "all"):
        out.append("## Accuracy")
        if not machines:
            out.append("No validation records (timelines are measured on GPUs only).")
        for m in machines:
            if m not in mx.vals:
                out.append(f"### Machine `{m}`\n\nNo validation records (timelines are measured on GPUs only).")
                continue
            is_preset = m in PRESETS
            if not is_preset and not fit and not fit_meas:
                out.append(f"### Machine `{m}`\n\nA calibrated machine needs --fit or --fit-from: without the fit "
                           "set, held-out error cannot be told from fitted error.")
                continue
            out.append(accuracy(mx, m, fit, fit_meas, is_preset))
    text = "\n\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

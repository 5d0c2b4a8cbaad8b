#!/usr/bin/env python3
"""Validate `braid sim --graph` against measured CUDA-graph replays.

`braid run --graph` prints, per configuration of a sweep, one timing line per rank ("rank R
timing [CONFIG] (CUDA graph replay, N runs, median): wall W us ...") and then the program's label
("braid run: WORKLOAD (D=2, S=4, P=1, m=..., k=..., n=..., protocol A, modulo, collective,
deferred waits, prefetch, copy engines) on 2 ranks [COMMUNICATORS, ...]"; a run whose only
communicator is `cuda-ipc`, i.e. `--backend-override cuda`, is simulated with `--comm-backend
cuda`). This script reads such logs from one or more
folders (one folder per launch set; a log is `run_<shape>_<variant>_<rep>.log`), takes a
point's measured time as the median over its launches of the slower rank's median, simulates the
same program with `braid sim --graph` (no host issue: the whole program is submitted at once), and
prints predicted vs measured, the error, the spread between launches, the median and max error
(all points, and those whose spread is under 3%), the signed median error per class (transport x
serial / chunked / scheduled: a biased class points at the part of the model that is off) and
whether the simulator picks the measured best configuration of each shape. With --interpreted it also simulates the interpreted run (host
issue per instruction) beside it, to show what host issue changes. A log with no point (a failed
launch) is noted and skipped; an unreadable or misnamed log, an impossible time, no point at all or
no point that simulates is an error naming the log (and line), exit 1.

Usage:
  bench/validate_graphs.py DIR [DIR...] --braid build/cli/braid --machine h200 [--dtype bf16]
      [--jsonl OUT] [--interpreted]
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

TIMING = re.compile(r"rank (\d+) timing (?:\[(.*?)\] )?\(CUDA graph replay, (\d+) runs, median\): wall ([0-9.]+) us")
LABEL = re.compile(r"^braid run: (\w+) \((D=.*?)\) on (\d+) ranks?(?: \[([a-z+-]+),)?")
COOL_DOWN = re.compile(r"^braid run: cool-down: ([0-9.]+) ms")
INPUTS = re.compile(r"^braid run: .*, seed \d+ \((\w+) inputs\)")  # absent: integers
WARM_SWEEP = re.compile(r"warm-up: every one of the (\d+) configurations runs (\d+) times untimed first; then each, "
                        r"after its checked run, (\d+) more untimed runs before its (\d+) timed ones")
WARM_ONE = re.compile(r"warm-up: (\d+) untimed runs after the checked run, before the (\d+) timed ones")


def runs_before_median(lines, graph_runs):
    """How many runs of its configuration went before a point's median timed run, back to back:
    the checked run, the warm-ups (a graph: at least one replay) and half the timed runs. A
    sweep's warm-up pass and earlier configurations are not counted: between configurations the
    host lowers, allocates and captures the next program while the GPU idles, and on one H200 the
    configurations of a sweep measured at their first runs' speed even when their index over the
    whole launch was past the power cap's onset (ACCURACY.md, eleventh session). So the start is a
    lower bound, as `braid validate`'s (meta.run_index) is."""
    for line in lines:
        m = WARM_SWEEP.search(line)
        if m:
            warm, timed = int(m.group(3)), int(m.group(4))
            return 1 + max(warm, 1) + timed // 2
        m = WARM_ONE.search(line)
        if m:
            warm, timed = int(m.group(1)), int(m.group(2))
            return 1 + max(warm, 1) + timed // 2
    return 1 + 1 + graph_runs // 2  # --warmup 0: the checked run and the graph's first replay


def check_braid(prog, braid):
    """`braid` as given to --braid, refused up front (`prog: --braid ...`) unless it names an
    executable file (a path, or a name on PATH)."""
    if shutil.which(braid) is None:
        why = "not an executable file" if os.path.exists(braid) else "no such file"
        raise SystemExit(f"{prog}: --braid {braid}: {why} (give the built braid, e.g. build/cli/braid)")
    return braid


def check_output(prog, flag, path):
    """Refuses an output file (`flag`) whose folder does not exist, before any work is done."""
    if path is not None:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise SystemExit(f"{prog}: {flag} {path}: the folder {folder} does not exist")
        if os.path.isdir(path):
            raise SystemExit(f"{prog}: {flag} {path}: is a folder")
    return path


def write_jsonl(prog, flag, path, rows):
    """One JSON object per line of `path`; a file that cannot be written is an error, not a traceback."""
    try:
        with open(path, "w") as out:
            for r in rows:
                out.write(json.dumps(r) + "\n")
    except OSError as e:
        raise SystemExit(f"{prog}: {flag} {path}: cannot write: {e.strerror or e}")


def read_log(f):
    """The lines of the log `f` (undecodable bytes replaced); one that cannot be read is an error."""
    try:
        with open(f, errors="replace") as fh:
            return fh.read().splitlines()
    except OSError as e:
        raise SystemExit(f"validate_graphs: {f}: cannot read: {e.strerror or e}")


def parse_label(workload, inner):
    """The `braid sim` flags of a run label's parenthesis."""
    flags = []
    for part in [p.strip() for p in inner.split(",")]:
        m = re.fullmatch(r"([DSPmkn])=(\d+)", part)
        if m:
            key = {"D": "--devices", "S": "--streams", "P": "--pool", "m": "--m", "k": "--k", "n": "--n"}[m.group(1)]
            flags += [key, m.group(2)]
        elif part.startswith("protocol "):
            flags += ["--protocol", part.split()[1]]
        elif part in ("modulo", "raw"):
            flags += ["--indexing", part]
        elif part in ("collective", "p2p"):
            flags += ["--pipeline", part]
        elif part == "ring":
            flags.append("--ring")
        elif part == "deferred waits":
            flags.append("--defer-waits")
        elif part == "prefetch":
            flags.append("--prefetch")
        elif part == "own shard in place":
            flags += ["--own-shard", "in-place"]
        elif part == "copy engines":
            flags += ["--comm-backend", "cuda"]
        else:
            raise SystemExit(f"validate_graphs: unknown part '{part}' in the label of {workload} ({inner})")
    return flags


def read_logs(dirs, sources=None):
    """(shape, label) -> {launch: slower rank's median}, and the sim flags of each label. A log
    that cannot be read, is misnamed or holds an impossible time is an error naming it (and the
    line); one with no point (a launch that failed, another kind of file) is noted on stderr and
    skipped. `sources`, when given, gets each point's first log."""
    points = collections.defaultdict(dict)
    flags, history = {}, {}
    for d in dirs:
        logs = sorted(glob.glob(os.path.join(d, "run_*.log")))
        if not logs:
            raise SystemExit(f"validate_graphs: no run_*.log in {d}")
        for f in logs:
            name = os.path.basename(f)[4:-4]
            base, _, rep = name.rpartition("_")
            shape = base.split("_", 1)[0]
            if not shape or not rep:
                raise SystemExit(f"validate_graphs: {f}: cannot read the shape and launch from its name "
                                 "(expected run_<shape>_<variant>_<rep>.log, e.g. run_agL_base_1.log)")
            launch = f"{d}#{rep}"
            ranks = {}
            lines = read_log(f)
            timed = found = 0
            for n, line in enumerate(lines, 1):
                m = TIMING.search(line)
                if m:
                    try:
                        wall = float(m.group(4))
                    except ValueError:
                        wall = 0.0
                    if not 0 < wall < float("inf"):
                        raise SystemExit(f"validate_graphs: {f}: line {n}: wall time '{m.group(4)}' is not a "
                                         "number of microseconds > 0")
                    ranks[int(m.group(1))] = wall
                    timed = int(m.group(3))
                    continue
                m = LABEL.search(line)
                if m and ranks:
                    workload, inner, comms = m.group(1), m.group(2), m.group(4)
                    try:
                        argv = [workload] + parse_label(workload, inner)
                    except SystemExit as e:
                        raise SystemExit(f"validate_graphs: {f}: line {n}: "
                                         f"{str(e.code).removeprefix('validate_graphs: ')}") from None
                    program = f"{workload} ({inner})"
                    # --backend-override cuda runs every communication on the copy engines: the
                    # label's communicators say so ("[cuda-ipc, ...]"), the program does not.
                    if comms == "cuda-ipc" and "--comm-backend" not in argv:
                        argv += ["--comm-backend", "cuda"]
                        program = f"{workload} ({inner}, copy engines)"
                    key = (shape, program)
                    flags[key] = argv
                    points[key][launch] = max(ranks.values())
                    history.setdefault(key, runs_before_median(lines, timed))
                    if sources is not None:
                        sources.setdefault(key, f)
                    ranks = {}
                    found += 1
            if ranks:
                print(f"validate_graphs: note: {f}: ends in timing lines with no program label after them "
                      "(a cut-off log?); they are skipped", file=sys.stderr)
            if not found:
                print(f"validate_graphs: note: {f}: no measured point in it (no 'rank R timing ... (CUDA graph "
                      "replay ...)' lines followed by their 'braid run: WORKLOAD (...)' label); skipped",
                      file=sys.stderr)
    if not points:
        raise SystemExit(f"validate_graphs: no measured point in the run_*.log of {', '.join(dirs)}: nothing to "
                         "validate (a point is 'rank R timing ... (CUDA graph replay, N runs, median): wall W us' "
                         "lines followed by the 'braid run: WORKLOAD (D=...)' label, as braid run --graph prints)")
    return points, flags, history


def launch_setting(dirs, pattern, parse, default, flag, why):
    """The value of a run setting that every log of `dirs` shares (`pattern`'s first match in a
    log, through `parse`; `default` when none matches); refuses logs that differ, since such
    launches are not repetitions of one measurement (`why` says so)."""
    seen = collections.defaultdict(list)
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "run_*.log"))):
            value = default
            for n, line in enumerate(read_log(f), 1):
                m = pattern.search(line)
                if m:
                    try:
                        value = parse(m.group(1))
                    except ValueError:
                        raise SystemExit(f"validate_graphs: {f}: line {n}: cannot read {flag} from "
                                         f"'{m.group(1)}'") from None
                    break
            seen[value].append(f)
    if len(seen) > 1:
        parts = ", ".join(f"{v} ({len(fs)} logs, e.g. {fs[0]})" for v, fs in sorted(seen.items()))
        raise SystemExit(f"validate_graphs: the logs were run with different {flag}: {parts}; {why}: validate "
                         "them apart")
    return next(iter(seen), default)


def cool_down(dirs):
    """The --cool-down (ms) every log of `dirs` was run with: a run that starts from an idle GPU
    takes longer (docs/EXEC.md, Power state)."""
    ms = launch_setting(dirs, COOL_DOWN, lambda s: f"{float(s):g} ms", "0 ms", "--cool-down",
                        "a run that starts from an idle GPU takes longer (docs/EXEC.md, Power state)")
    return float(ms.split()[0])


def input_values(dirs):
    """The --inputs every log of `dirs` was run with (integers unless a log says otherwise): a
    GEMM's time depends on its operands' values (docs/EXEC.md, Input values)."""
    return launch_setting(dirs, INPUTS, str, "integers", "--inputs",
                          "a GEMM's time depends on its operands' values (docs/EXEC.md, Input values)")


def machine_operands(braid, machine):
    """The operand values `machine`'s GEMMs were calibrated on (gpu.gemm_operands), or None."""
    r = subprocess.run([braid, "sim", "--machine", machine, "--print-machine"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"validate_graphs: braid sim --machine {machine} --print-machine failed: {r.stderr.strip()}")
    return json.loads(r.stdout).get("gpu", {}).get("gemm_operands")


def simulate(braid, machine, dtype, argv, graph, power=()):
    cmd = [braid, "sim"] + argv + ["--machine", machine, "--dtype", dtype, "--json"] + (["--graph"] if graph else [])
    cmd += list(power)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        why = [x for x in r.stderr.splitlines() if x.strip() and not x.startswith("Run with --help")]
        return None, why[-1] if why else f"exit {r.returncode}"
    return json.loads(r.stdout)["makespan_us"], ""


def point_class(program):
    """(transport, kind) of a point's program label: where in the model an error comes from.
    kind: serial (one chunk, no schedule), scheduled (pool, deferred waits or prefetch), or chunked."""
    transport = "copy engines" if "copy engines" in program else "NCCL"
    if "deferred waits" in program or "prefetch" in program or ", P=" in program:
        kind = "scheduled"
    elif "S=1," in program:
        kind = "serial"
    else:
        kind = "chunked"
    return transport, kind


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="folders of run_*.log, one per launch set")
    ap.add_argument("--braid", required=True)
    ap.add_argument("--machine", default="h200")
    ap.add_argument("--dtype", default="bf16", help="the runs' --dtype (their labels do not say)")
    ap.add_argument("--jsonl", help="write one JSON object per point")
    ap.add_argument("--interpreted", action="store_true", help="also simulate with host issue (no --graph)")
    ap.add_argument("--held-out", default="",
                    help="shapes (e.g. agL,rsM) whose GEMMs and overlaps the machine was not fitted to: their "
                         "points are summarized apart from the others (docs/ACCURACY.md, fit and held-out sets)")
    ap.add_argument("--power-idle", action="store_true",
                    help="simulate every point from an idle GPU, not at its median run's place in its launch")
    a = ap.parse_args()
    check_braid("validate_graphs", a.braid)
    check_output("validate_graphs", "--jsonl", a.jsonl)

    idle = cool_down(a.dirs)
    sources = {}
    points, flags, history = read_logs(a.dirs, sources)
    if not a.power_idle:
        print("power state: each point starts where its median timed run stood in its launch (runs before it, "
              f"{idle:g} ms apart), on a machine with a power cap (docs/SIM.md, Power state)")
    if idle:
        print(f"launches run with --cool-down {idle:g} ms (every run starts from an idle GPU)")
    values, operands = input_values(a.dirs), machine_operands(a.braid, a.machine)
    if operands and operands != values:
        print(f"note: {a.machine}'s GEMMs were calibrated on {operands} operands, the runs' inputs were {values}: "
              "a GEMM's time depends on its values (docs/EXEC.md, Input values)")
    rows = []
    for key in sorted(points):
        launches = points[key]
        measured = statistics.median(launches.values())
        spread = (max(launches.values()) - min(launches.values())) / min(launches.values()) * 100
        power = () if a.power_idle else ("--power", str(history[key]), "--power-gap", f"{idle:g}")
        pred, why = simulate(a.braid, a.machine, a.dtype, flags[key], True, power)
        interp = simulate(a.braid, a.machine, a.dtype, flags[key], False)[0] if a.interpreted else None
        rows.append({"shape": key[0], "program": key[1], "launches": len(launches), "measured_us": measured,
                     "spread_pct": spread, "predicted_us": pred, "interpreted_us": interp,
                     "error_pct": (pred - measured) / measured * 100 if pred else None, "failed": why})
    if a.jsonl:
        write_jsonl("validate_graphs", "--jsonl", a.jsonl, rows)

    head = "| shape | program | measured us | predicted us | error | spread | launches |"
    if a.interpreted:
        head += " predicted with host issue |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for r in rows:
        pred = f"{r['predicted_us']:.0f}" if r["predicted_us"] else f"failed: {r['failed']}"
        err = f"{r['error_pct']:+.1f}%" if r["error_pct"] is not None else "—"
        line = (f"| {r['shape']} | {r['program']} | {r['measured_us']:.0f} | {pred} | {err} | "
                f"{r['spread_pct']:.1f}% | {r['launches']} |")
        if a.interpreted:
            line += f" {r['interpreted_us']:.0f} |" if r["interpreted_us"] else " — |"
        print(line)

    ok = [r for r in rows if r["error_pct"] is not None]
    if not ok:
        first = min(rows, key=lambda r: (r["shape"], r["program"]))
        key = (first["shape"], first["program"])
        raise SystemExit(f"validate_graphs: none of the {len(rows)} points could be simulated, nothing validated; "
                         f"e.g. {first['program']} ({sources[key]}): braid sim failed: {first['failed']}")

    def summary(sel, what):
        if not sel:
            print(f"{what}: none")
            return
        e = [abs(r["error_pct"]) for r in sel]
        under = sum(1 for r in sel if r["error_pct"] < 0)
        print(f"{what}: n={len(sel)} median |error| {statistics.median(e):.1f}%, max {max(e):.1f}%, "
              f"{under} under-predicted")

    print()
    low = lambda sel: [r for r in sel if r["spread_pct"] < 3 and r["launches"] > 1]
    summary(ok, "all points")
    summary(low(ok), "points with spread < 3% (2+ launches)")
    held = {x for x in a.held_out.split(",") if x}
    if held:
        for name, sel in (("held-out", [r for r in ok if r["shape"] in held]),
                          ("fit", [r for r in ok if r["shape"] not in held])):
            summary(sel, f"{name} shapes ({', '.join(sorted({r['shape'] for r in sel}))}), all points")
            summary(low(sel), f"{name} shapes, spread < 3%")
    # Signed error by class: a model part that is off shows as a bias in one class.
    by_class = {}
    for r in ok:
        by_class.setdefault(point_class(r["program"]), []).append(r["error_pct"])
    for (transport, kind), errs in sorted(by_class.items()):
        print(f"{transport}, {kind}: n={len(errs)} signed median {statistics.median(errs):+.1f}%, "
              f"median |error| {statistics.median([abs(e) for e in errs]):.1f}%")
    agree = within = 0
    shapes = sorted({r["shape"] for r in ok})
    for s in shapes:
        sel = [r for r in ok if r["shape"] == s]
        mbest = min(sel, key=lambda r: r["measured_us"])
        pbest = min(sel, key=lambda r: r["predicted_us"])
        same = mbest is pbest
        agree += same
        slower = (pbest["measured_us"] - mbest["measured_us"]) / mbest["measured_us"] * 100
        # The target counts a pick that measured within the run-to-run spread of the best as agreeing.
        noise = max(mbest["spread_pct"], pbest["spread_pct"])
        close = same or slower <= noise
        within += close
        print(f"{s}: measured best {mbest['program']} ({mbest['measured_us']:.0f} us); predicted best "
              + ("the same" if same else f"{pbest['program']} (measures {slower:.1f}% slower; "
                 f"spread {noise:.1f}%{', within it' if close else ''})"))
    print(f"best choice agrees in {agree} of {len(shapes)} shapes; within the measured spread in {within} of {len(shapes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The overlap benchmark and validation matrix (docs/PERFORMANCE.md "Overlap on two GPUs",
docs/ACCURACY.md): runs `braid run` for every workload x shape x chunk count x protocol x
pipeline (x any --knob) x communication backend in several separate launches, takes GEMM alone and communication alone
from the serial program's measured timeline, compares every measured timeline with the
simulator (`braid validate`), asks `braid tune` which configuration it would pick, and runs
torch's reference (bench/torch_reference.py) for the same shapes. Everything goes into one JSON
lines file, read by bench/matrix_report.py. Python 3 standard library only.

  bench/overlap_matrix.py plan --part 1/3                        # what a part runs, estimated time
  bench/overlap_matrix.py run --braid build-gpu/cli/braid --out DIR --part 1/3 --machine h200
  bench/overlap_matrix.py validate --braid build/cli/braid --results DIR --machine calibrated.json
  bench/overlap_matrix.py run --braid build/cli/braid --out DIR --backend cpu --sizes tiny --ranks 1

Record types (field "type"): meta, run (one launch), validation (one launch against one
machine), tune (one shape against one machine), torch (one torchrun launch), skipped, end.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORKLOADS = ["ag_matmul", "matmul_rs", "matmul_ar", "row_parallel_linear", "mlp"]
TORCH_WORKLOADS = {"ag_matmul", "matmul_rs", "matmul_ar"}
TORCH_SCRIPT = os.path.join(HERE, "torch_reference.py")

# (m, k, n) per workload and size class; the GFLOP per rank of each is in every record.
# ag_matmul computes the whole [m, k] @ [k, n] on every rank; the row-parallel ones
# [m, k/d] @ [k/d, n]; mlp two linears of [m, k] x [k, n/d] (see gflop_per_rank).
SHAPES = {
    "full": {
        "ag_matmul": [(2048, 4096, 640), (4096, 8192, 1792), (8192, 8192, 3584)],
        "matmul_rs": [(2048, 4096, 1280), (8192, 8192, 2048), (16384, 8192, 4096)],
        "matmul_ar": [(2048, 4096, 1280), (8192, 8192, 2048), (16384, 8192, 4096)],
        "row_parallel_linear": [(2048, 4096, 1280), (8192, 8192, 2048), (16384, 8192, 4096)],
        "mlp": [(1024, 2048, 4096), (2048, 4096, 8192), (4096, 4096, 8192)],
    },
    # For CPU runs of the driver itself (tests, a dry run of the pipeline): seconds, not minutes.
    "tiny": {w: [(64, 32, 16)] for w in WORKLOADS},
}
SIZE_CLASSES = ["small", "mid", "large"]


def gflop_per_rank(workload, m, k, n, ranks):
    if workload == "ag_matmul":
        return 2.0 * m * k * n / 1e9
    if workload == "mlp":
        return 4.0 * m * k * n / ranks / 1e9
    return 2.0 * m * k * n / ranks / 1e9


# The lowering knobs a point varies, in the order `braid run --sweep` gets them (so the order of
# its tags and timeline suffixes): streams, protocol and pipeline from their own flags, then every
# --knob KEY=V1,V2 (any key `braid run --sweep` takes, e.g. a stream pool size). A new knob with a
# flag of its own is one line in knob_axes.
def knob_axes(args):
    """[(key, [values])] of the matrix's knobs."""
    axes = [("streams", list(args.streams)), ("protocol", list(args.protocols)),
            ("pipeline", list(getattr(args, "pipelines", None) or ["collective"]))]
    for key, values in getattr(args, "knob", None) or []:
        if key in dict(axes):
            raise SystemExit(f"overlap_matrix: --knob {key} is already a dimension (use --{key}s or --{key})")
        axes.append((key, values))
    return axes


def configs(axes):
    """Every combination of the knobs as a dict, serial (one chunk, protocol A, collective
    pipeline) first, then by chunk count. One chunk with protocols B and C (or the p2p pipeline)
    are serial programs too (their synchronization differs a little): measured, since a sweep
    costs little per configuration, and reported beside protocol A's."""
    out = [{}]
    for key, values in axes:
        out = [{**c, key: v} for c in out for v in values]
    rank = {"collective": 0, "p2p": 1}
    return sorted(out, key=lambda c: (c["streams"], c["protocol"], rank.get(c.get("pipeline"), 2),
                                      [str(c[k]) for k in c if k not in ("streams", "protocol", "pipeline")]))


# ---------------------------------------------------------------- parsing braid's output

TIMING = re.compile(
    r"rank (\d+) timing (?:\[([^\]]*)\] )?\((interpreted|CUDA graph replay), (\d+) runs, "
    r"median\): wall ([0-9.eE+-]+) us, host issue ([0-9.eE+-]+) us = ([0-9.eE+-]+) us per host instruction "
    r"\((\d+) instructions\)")


def tag_key(settings):
    """A sweep configuration's key: its settings as sorted (key, value-as-text) pairs."""
    return tuple(sorted((k, str(v)) for k, v in settings.items()))


def parse_tag(tag):
    """"streams=2 protocol=B pipeline=p2p" -> tag_key of {streams: 2, protocol: B, pipeline: p2p}."""
    return tag_key(dict(kv.split("=", 1) for kv in tag.split() if "=" in kv))


def parse_sweep_timings(text):
    """Every rank's timing lines: {tag_key of the line's settings, or None: {rank: {...}}}; the key
    is None for a launch without a sweep (untagged lines)."""
    out = {}
    for m in TIMING.finditer(text):
        cfg = parse_tag(m.group(2)) if m.group(2) else None
        out.setdefault(cfg, {})[int(m.group(1))] = {
            "mode": m.group(3), "runs": int(m.group(4)), "wall_us": float(m.group(5)), "issue_us": float(m.group(6)),
            "us_per_instruction": float(m.group(7)), "instructions": int(m.group(8))}
    return out


def parse_timings(text):
    """The untagged timing lines of a single-configuration launch: {rank: {...}}."""
    return parse_sweep_timings(text).get(None, {})


def timeline_spans(path):
    """Per rank: summed device time of compute ops (GEMMs and any other kernels), of GEMMs alone
    (matmul, linear), of communications; and the makespan. In the serial program (one chunk)
    nothing overlaps, so these are the GEMM and the collective alone."""
    with open(path) as f:
        t = json.load(f)
    ranks = {}
    for op in t["ops"]:
        r = ranks.setdefault(op["rank"], {"compute_us": 0.0, "gemm_us": 0.0, "comm_us": 0.0, "other_us": 0.0,
                                          "makespan_us": 0.0})
        d = op["end_us"] - op["start_us"]
        r["makespan_us"] = max(r["makespan_us"], op["end_us"])
        if op["kind"] == "compute":
            r["compute_us"] += d
            if op["name"] in ("matmul", "linear"):
                r["gemm_us"] += d
        elif op["kind"] == "communication":
            r["comm_us"] += d
        else:
            r["other_us"] += d
    keys = ["compute_us", "gemm_us", "comm_us", "other_us", "makespan_us"]
    summary = {k: max(r[k] for r in ranks.values()) if ranks else None for k in keys}
    summary["per_rank"] = {str(k): v for k, v in sorted(ranks.items())}
    return summary


def override_backends(help_text):
    """The transports `braid run --backend-override` accepts, from its --help ({nccl,gloo})."""
    m = re.search(r"--backend-override\s+\S*?\{([^}]*)\}", help_text)
    return [b.strip() for b in m.group(1).split(",")] if m else []


# ---------------------------------------------------------------- the plan

class Point:
    """One measured configuration; `launch` runs of it, each a separate `braid run`. `knobs` is the
    lowering configuration, {knob: value} in knob_axes order (streams, protocol, pipeline, ...)."""

    def __init__(self, workload, shape, size, knobs, comm, ranks, dtype):
        self.workload, self.shape, self.size = workload, shape, size
        self.knobs, self.comm = dict(knobs), comm
        self.streams, self.protocol = self.knobs["streams"], self.knobs["protocol"]
        self.pipeline = self.knobs.get("pipeline", "collective")
        self.ranks, self.dtype = ranks, dtype

    def key(self):
        """The record's identity: the shape, every knob as a field of its own, and `knobs` (their
        names, so a reader can tell which fields are knobs)."""
        m, k, n = self.shape
        return {"workload": self.workload, "m": m, "k": k, "n": n, "size": self.size, "dtype": self.dtype,
                "ranks": self.ranks, **self.knobs, "pipeline": self.pipeline, "comm": self.comm,
                "knobs": dict(self.knobs), "serial": self.streams == 1}

    def settings(self):
        return " ".join(f"{k}={v}" for k, v in self.knobs.items())

    def name(self):
        m, k, n = self.shape
        knobs = "_".join(f"{k}{v}" for k, v in self.knobs.items())
        return f"{self.workload}_m{m}_k{k}_n{n}_{knobs}_{self.comm}"

    def workload_flags(self):
        m, k, n = self.shape
        return (["--devices", str(self.ranks)] + knob_flags(self.knobs) +
                ["--m", str(m), "--k", str(k), "--n", str(n), "--dtype", self.dtype])


def knob_flags(knobs):
    """Each knob as the workload flag of the same name (--streams 2 --protocol B --pipeline p2p)."""
    return [x for k, v in knobs.items() for x in (f"--{k}", str(v))]


def units(args, comms):
    """The matrix as units of work: one (workload, shape) with every configuration and backend;
    a unit is never split across parts (its serial run gives the ideal of its pipelined runs)."""
    shapes = SHAPES["tiny" if args.sizes == "tiny" else "full"]
    classes = SIZE_CLASSES if args.sizes in ("tiny", "full") else args.sizes.split(",")
    out = []
    for w in args.workloads.split(","):
        if w not in shapes:
            raise SystemExit(f"overlap_matrix: unknown workload {w!r} (known: {', '.join(WORKLOADS)})")
        for i, shape in enumerate(shapes[w]):
            size = SIZE_CLASSES[i] if args.sizes != "tiny" else "tiny"
            if args.sizes != "tiny" and size not in classes:
                continue
            pts = [Point(w, shape, size, knobs, c, args.ranks, args.dtype)
                   for c in comms for knobs in configs(knob_axes(args))]
            out.append({"workload": w, "shape": shape, "size": size, "points": pts})
    return out


def estimate_s(unit, args):
    """Seconds a unit takes: per launch its start and its inputs (drawn once: braid run reuses them
    across a sweep's configurations), then per configuration its set-up (lowering, verification,
    the checked run, the output gather) and its runs (FLOP at a nominal rate), twice set up with
    a sweep's warm-up pass."""
    m, k, nn = unit["shape"]
    per_run = gflop_per_rank(unit["workload"], m, k, nn, args.ranks) / args.nominal_tflops / 1e3
    # Full inputs are drawn on the host in float64 (exec/reference.cpp), ~10 ns per element.
    inputs_s = (m * k + k * nn + (k * nn if unit["workload"] == "mlp" else 0)) * 1e-8
    warmup = 10 if getattr(args, "warmup", None) is None else args.warmup  # braid run's default
    per_config = args.config_overhead_s + (args.repeat + 1 + warmup) * per_run
    if args.sweep and warmup > 0:
        per_config += args.config_overhead_s + warmup * per_run
    points = len(unit["points"]) * args.launches
    comms = len({p.comm for p in unit["points"]})
    launches = comms * args.launches if args.sweep else points
    torch = args.torch_overhead_s * args.torch_launches if (args.torch and unit["workload"] in TORCH_WORKLOADS) else 0
    return launches * (args.launch_overhead_s + inputs_s) + points * per_config + torch


def select_part(all_units, args):
    """Part i of K: units dealt greedily by estimated time (largest first) to the lightest part,
    so parts take about the same time; the order inside a part stays the matrix's order."""
    i, k = args.part
    loads = [0.0] * k
    owner = {}
    for idx in sorted(range(len(all_units)), key=lambda j: -estimate_s(all_units[j], args)):
        p = loads.index(min(loads))
        owner[idx] = p
        loads[p] += estimate_s(all_units[idx], args)
    return [u for j, u in enumerate(all_units) if owner[j] == i - 1], loads


# ---------------------------------------------------------------- running

class Out:
    """The JSON lines file, flushed after every record (a run cut short keeps what it did)."""

    def __init__(self, path):
        self.f = open(path, "a")

    def write(self, rec):
        self.f.write(json.dumps(rec, sort_keys=True) + "\n")
        self.f.flush()

    def close(self):
        self.f.close()


def sh(cmd, timeout, env=None):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                           env=env)
        return p.returncode, p.stdout, time.time() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n(overlap_matrix: killed after {timeout} s)", time.time() - t0
    except OSError as e:
        return 127, str(e), time.time() - t0


def tail(text, n=1500):
    return text[-n:] if text else ""


def launch_points(points, launch, args, caps, tl_dir):
    """One `braid run` of one or several points of a unit (a sweep when braid has one), on one
    transport; returns a "run" record per point. With --backend cuda each point's timeline is that
    of its last timed run when braid can (--timeline-run), else its checked run's."""
    first = points[0]
    sweep = len(points) > 1
    cmd = [args.braid, "run", first.workload, "--backend", args.backend, "--ranks", str(args.ranks), "--no-check",
           "--no-poison", "--repeat", str(args.repeat), "--timeout", str(args.run_timeout)]
    m, k, n = first.shape
    cmd += ["--devices", str(first.ranks), "--m", str(m), "--k", str(k), "--n", str(n), "--dtype", first.dtype]
    if sweep:
        # Every knob is an axis (one value or several): each timing line and timeline names them all.
        cmd += ["--sweep"] + [f"{k}=" + ",".join(unique(str(p.knobs[k]) for p in points)) for k in first.knobs]
    else:
        cmd += knob_flags(first.knobs)
    if caps.get("warmup") and args.warmup is not None:
        cmd += ["--warmup", str(args.warmup)]
    if first.comm != "default":
        cmd += ["--backend-override", first.comm]
    timeline = None
    if args.backend == "cuda":
        base = f"{first.workload}_m{m}_k{k}_n{n}_{first.comm}_L{launch}"
        timeline = os.path.join(tl_dir, (base if sweep else f"{first.name()}_L{launch}") + ".json")
        cmd += ["--timeline", timeline]
        if caps["timeline_run"] and args.repeat > 0:
            cmd += ["--timeline-run", str(args.repeat)]
    code, out, elapsed = sh(cmd, args.run_timeout + 60)
    timings = parse_sweep_timings(out)
    recs = []
    for p in points:
        ranks = timings.get(tag_key(p.knobs) if sweep else None, {})
        complete = len(ranks) == args.ranks
        rec = {"type": "run", **p.key(), "launch": launch, "repeat": args.repeat,
               "exit_code": 0 if complete and (code == 0 or sweep) else (code or 3),
               "elapsed_s": round(elapsed / len(points), 3), "launch_elapsed_s": round(elapsed, 3),
               "sweep": sweep, "command": " ".join(shlex.quote(c) for c in cmd),
               "gflop_per_rank": gflop_per_rank(p.workload, *p.shape, args.ranks),
               "per_rank": {str(r): v for r, v in sorted(ranks.items())}}
        if not complete or code != 0:
            rec["launch_exit_code"] = code
            rec["error"] = tail(out)
        if ranks:
            rec["wall_us"] = max(v["wall_us"] for v in ranks.values())
            rec["issue_us"] = max(v["issue_us"] for v in ranks.values())
            rec["instructions"] = max(v["instructions"] for v in ranks.values())
            rec["tflops"] = rec["gflop_per_rank"] / rec["wall_us"] / 1e3 if rec["wall_us"] > 0 else None
        tl = timeline_file(timeline, p) if sweep and timeline else timeline
        if tl and complete and os.path.exists(tl):
            rec["timeline"] = os.path.relpath(tl, args.out)
            rec["timeline_run"] = args.repeat if caps["timeline_run"] and args.repeat > 0 else 0
            try:
                rec["spans"] = timeline_spans(tl)
            except (OSError, ValueError, KeyError) as e:
                rec["spans_error"] = f"{type(e).__name__}: {e}"
        recs.append(rec)
    return recs


def unique(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def timeline_file(base, point):
    """Where `braid run --sweep` writes a configuration's timeline: every swept setting, in the
    sweep's order, as a suffix (t.json -> t.streams2.protocolB.pipelinep2p.json)."""
    root, ext = os.path.splitext(base)
    suffix = "".join(f".{k}{v}" for k, v in point.knobs.items())
    return root + re.sub(r"[^A-Za-z0-9_.-]", "_", suffix) + ext


def run_launch(point, launch, args, caps, tl_dir):
    return launch_points([point], launch, args, caps, tl_dir)[0]


def validate_launch(run_rec, machine, args):
    """`braid validate` of one launch's timeline against one machine; the per-op list is left out
    (the statement summary, overlap and end-to-end figures stay)."""
    knobs = record_knobs(run_rec)
    point_flags = (["--devices", str(run_rec["ranks"])] + knob_flags(knobs) +
                   ["--m", str(run_rec["m"]), "--k", str(run_rec["k"]), "--n", str(run_rec["n"]),
                    "--dtype", run_rec["dtype"]])
    tl = os.path.join(args.results_dir, run_rec["timeline"])
    cmd = [args.braid, "validate", "--measured", tl, run_rec["workload"], "--machine", machine, "--json"] + point_flags
    code, out, elapsed = sh(cmd, 300)
    keys = ["workload", "m", "k", "n", "size", "dtype", "ranks", "comm", "serial", "launch", "timeline",
            "timeline_run"]
    rec = {"type": "validation", **{k: run_rec.get(k) for k in keys}, **knobs, "knobs": knobs,
           "pipeline": knobs.get("pipeline", "collective"), "machine": machine, "exit_code": code,
           "elapsed_s": round(elapsed, 3)}
    if code != 0:
        rec["error"] = tail(out)
        return rec
    try:
        v = json.loads(out)
    except ValueError:
        rec["error"] = "not JSON: " + tail(out, 500)
        return rec
    for k in ["measured_makespan_us", "predicted_makespan_us", "makespan_error", "median_abs_op_error",
              "max_abs_op_error", "matched_markers", "overlap", "statements"]:
        rec[k] = v.get(k)
    rec["unmatched_measured"] = len(v.get("unmatched_measured", []))
    rec["unmatched_predicted"] = len(v.get("unmatched_predicted", []))
    return rec


def record_knobs(rec):
    """A record's knobs: its `knobs` field; records from before it, streams and protocol."""
    return dict(rec.get("knobs") or {"streams": rec["streams"], "protocol": rec["protocol"]})


def tune_unit(unit, machine, args):
    """`braid tune` of one shape: the configuration the simulator would pick (serial or not)."""
    m, k, n = unit["shape"]
    protocols = ",".join(args.protocols)
    streams = ",".join(str(s) for s in args.streams)
    cmd = [args.braid, "tune", unit["workload"], "--machine", machine, "--devices", str(args.ranks), "--m", str(m),
           "--k", str(k), "--n", str(n), "--dtype", args.dtype, "--streams", streams, "--protocols", protocols,
           "--pipelines", ",".join(getattr(args, "pipelines", None) or ["collective"]), "--top", "100", "--json",
           # the schedules the matrix measures: one stream per chunk, waits in the loop, no prefetch
           "--pools", "chunks", "--defer-waits", "off", "--prefetch", "off",
           # the transports the matrix measures (the CPU's Gloo is modelled as NCCL)
           "--comm-backends", "nccl,cuda" if "cuda" in getattr(args, "measured_comms", []) else "nccl"]
    code, out, _ = sh(cmd, 300)
    rec = {"type": "tune", "workload": unit["workload"], "m": m, "k": k, "n": n, "size": unit["size"],
           "dtype": args.dtype, "ranks": args.ranks, "machine": machine, "exit_code": code}
    if code != 0:
        rec["error"] = tail(out)
        return rec
    try:
        cfgs = json.loads(out)["configurations"]
    except (ValueError, KeyError):
        rec["error"] = "unexpected output: " + tail(out, 500)
        return rec
    rec["predicted"] = [{"streams": int(c["config"]["streams"]), "protocol": c["config"]["protocol"],
                         "pipeline": c["config"].get("pipeline", "collective"),
                         "comm": c["config"].get("comm-backend", "nccl"), "predicted_us": c["predicted_us"]}
                        for c in cfgs]
    best = min(rec["predicted"], key=lambda c: c["predicted_us"]) if rec["predicted"] else None
    rec["best"] = best
    rec["picks_serial"] = bool(best and best["streams"] == 1)
    return rec


def torch_launch(unit, launch, args):
    script = TORCH_SCRIPT
    m, k, n = unit["shape"]
    runner = shlex.split(args.torchrun) if args.torchrun else (
        ["torchrun"] if shutil.which("torchrun") else [sys.executable, "-m", "torch.distributed.run"])
    # --mkn, not --m: torchrun's parser would take --m for an abbreviation of its own options.
    cmd = runner + ["--nproc-per-node", str(args.ranks), script, "--workload", unit["workload"],
                    "--mkn", f"{m},{k},{n}", "--iters", str(max(args.repeat, 3))]
    rec = {"type": "torch", "command": " ".join(shlex.quote(c) for c in cmd), "workload": unit["workload"],
           "m": m, "k": k, "n": n, "size": unit["size"], "dtype": args.dtype, "ranks": args.ranks, "launch": launch,
           "gflop_per_rank": gflop_per_rank(unit["workload"], m, k, n, args.ranks)}
    if not os.path.exists(script):
        rec["error"] = f"{os.path.relpath(script, ROOT)} is missing"
        return rec
    code, out, elapsed = sh(cmd, 600)
    rec.update({"exit_code": code, "elapsed_s": round(elapsed, 3)})
    row = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{") and '"workload"' in line:
            try:
                row = json.loads(line)
            except ValueError:
                pass
    if row is None:
        rec["error"] = tail(out)
    else:
        rec["result"] = row
    return rec


def capture(cmd):
    code, out, _ = sh(cmd, 60)
    return out.strip() if code == 0 else None


def meta_record(args, caps):
    commit = args.commit or capture(["git", "-C", ROOT, "rev-parse", "HEAD"])
    dirty = capture(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
    gpus = capture(["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,clocks.max.sm",
                    "--format=csv,noheader"])
    return {"type": "meta", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
            "commit": commit or "unknown", "dirty": bool(dirty) if dirty is not None else None,
            "braid_version": capture([args.braid, "--version"]), "gpus": gpus.splitlines() if gpus else [],
            "topology": capture(["nvidia-smi", "topo", "-m"]), "nvcc": capture(["nvcc", "--version"]),
            "env": {k: os.environ.get(k) for k in ["NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                                   "CUDA_DEVICE_MAX_CONNECTIONS", "NCCL_DEBUG"]},
            "backend": args.backend, "ranks": args.ranks, "dtype": args.dtype, "repeat": args.repeat,
            "launches": args.launches, "part": f"{args.part[0]}/{args.part[1]}", "machines": args.machine,
            "override_backends": caps["override"], "timeline_run_supported": caps["timeline_run"],
            "sweep": bool(args.sweep and caps["sweep"]), "knobs": {k: v for k, v in knob_axes(args)},
            "warmup": args.warmup if caps.get("warmup") else None,
            "argv": sys.argv}


def detect(args):
    code, text, _ = sh([args.braid, "run", "--help"], 60)
    if code != 0:
        raise SystemExit(f"overlap_matrix: `{args.braid} run --help` failed ({code}):\n{tail(text)}")
    # The generic --sweep KEY=... (older binaries had only --sweep-streams / --sweep-protocols:
    # then every configuration is a launch of its own).
    return {"override": override_backends(text), "timeline_run": "--timeline-run" in text,
            "sweep": re.search(r"--sweep(?![-\w])", text) is not None, "warmup": "--warmup" in text}


def comm_backends(args, caps):
    if args.backend == "cpu":
        return ["default"]
    wanted = args.comms.split(",")
    return [c for c in wanted if c in caps["override"]]


def cmd_run(args):
    # The GPU machines' rule (NVLink multicast off), for braid's NCCL and torch's symmetric memory.
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.makedirs(args.out, exist_ok=True)
    tl_dir = os.path.join(args.out, "timelines")
    os.makedirs(tl_dir, exist_ok=True)
    args.results_dir = args.out
    caps = detect(args)
    comms = comm_backends(args, caps)
    args.measured_comms = comms
    if not comms:
        raise SystemExit(f"overlap_matrix: none of --comms {args.comms} is accepted by this braid "
                         f"(--backend-override takes {caps['override']})")
    if not args.machine and args.backend == "cuda":
        args.machine = [guess_machine()]
    out = Out(os.path.join(args.out, "matrix.jsonl"))
    out.write(meta_record(args, caps))
    part, _ = select_part(units(args, comms), args)
    t_start = time.time()
    deadline = t_start + args.max_seconds
    runs = []
    skipped = 0
    launches = 0
    broken = {}  # transport -> launches in a row that completed no point (a broken or hanging transport)
    for unit in part:
        # Launch l of every configuration, then launch l + 1: a point's launches are separate
        # processes, each with its own set-up, warm-up and clocks, so their spread is the
        # run-to-run spread a user sees. With a sweep, one launch runs every configuration of one
        # transport.
        by_comm = {}
        for point in unit["points"]:
            by_comm.setdefault(point.comm, []).append(point)
        for launch in range(1, args.launches + 1):
            for comm, points in by_comm.items():
                groups = [points] if args.sweep and caps["sweep"] else [[p] for p in points]
                for group in groups:
                    need = args.launch_overhead_s + len(group) * args.config_overhead_s
                    reason = "--max-seconds" if time.time() + need > deadline else None
                    if broken.get(comm, 0) >= 2:
                        reason = f"transport {comm}: its last two launches completed nothing"
                    if reason:
                        for point in group:
                            out.write({"type": "skipped", **point.key(), "launch": launch, "reason": reason})
                        skipped += len(group)
                        continue
                    recs = launch_points(group, launch, args, caps, tl_dir)
                    launches += 1
                    if len(group) > 1:
                        recs, n = retry_alone(group, recs, launch, args, caps, tl_dir, deadline)
                        launches += n
                    ok = any(r["exit_code"] == 0 for r in recs)
                    broken[comm] = 0 if ok else broken.get(comm, 0) + 1
                    for rec in recs:
                        out.write(rec)
                        runs.append(rec)
                        print(f"[{time.time() - t_start:6.0f} s] {rec['workload']} {unit['shape']} "
                              f"{' '.join(f'{k}={v}' for k, v in rec['knobs'].items())} {rec['comm']} L{launch}: "
                              f"{rec.get('wall_us', 'FAILED')} us", flush=True)
        if args.torch and args.backend == "cuda" and unit["workload"] in TORCH_WORKLOADS:
            for launch in range(1, args.torch_launches + 1):
                if time.time() + args.torch_overhead_s > deadline:
                    out.write({"type": "skipped", "workload": unit["workload"], "m": unit["shape"][0],
                               "k": unit["shape"][1], "n": unit["shape"][2], "what": "torch", "launch": launch,
                               "reason": "--max-seconds"})
                    skipped += 1
                    continue
                rec = torch_launch(unit, launch, args)
                out.write(rec)
                print(f"[{time.time() - t_start:6.0f} s] torch {unit['workload']} {unit['shape']} L{launch}: "
                      f"{'ok' if 'result' in rec else 'FAILED'}", flush=True)
    gpu_s = time.time() - t_start
    # The simulator's side, on CPU, after every GPU launch (so it never competes with a timed run).
    n_val = simulate_side(part, runs, args, out)
    out.write({"type": "end", "elapsed_s": round(time.time() - t_start, 1), "gpu_phase_s": round(gpu_s, 1),
               "launches": launches, "points": len(runs), "failed": sum(1 for r in runs if r.get("exit_code") != 0),
               "skipped": skipped, "validations": n_val,
               "mean_launch_s": round(gpu_s / launches, 2) if launches else None})
    out.close()
    print(f"overlap_matrix: {launches} launches ({len(runs)} points), {skipped} skipped, {n_val} validations in "
          f"{time.time() - t_start:.0f} s; wrote {os.path.join(args.out, 'matrix.jsonl')}", flush=True)
    return 0


def retry_alone(group, recs, launch, args, caps, tl_dir, deadline):
    """A sweep stops at its first failing configuration: run the configurations it did not
    complete alone, until one fails alone too (then the rest keep the sweep's error: a transport
    that hangs would otherwise cost a timeout per configuration)."""
    done = [r for r in recs if r["exit_code"] == 0]
    n = 0
    for r in (r for r in recs if r["exit_code"] != 0):
        point = next(p for p in group if p.key() == {k: r[k] for k in p.key()})
        if time.time() + args.launch_overhead_s > deadline or (n > 0 and done[-1]["exit_code"] != 0):
            done.append(r)
            continue
        alone = run_launch(point, launch, args, caps, tl_dir)
        n += 1
        alone["retried_after_sweep_exit_code"] = r.get("launch_exit_code")
        done.append(alone)
    return done, n


def simulate_side(part, runs, args, out):
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for machine in args.machine or []:
            for unit in part:
                jobs.append(pool.submit(tune_unit, unit, machine, args))
            for r in runs:
                if r.get("timeline"):
                    jobs.append(pool.submit(validate_launch, r, machine, args))
        n = 0
        for j in jobs:
            rec = j.result()
            out.write(rec)
            n += rec["type"] == "validation"
    return n


def guess_machine():
    name = capture(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]) or ""
    for preset in ("h200", "h100", "b200", "a100"):
        if preset in name.lower():
            return preset
    return "h100"


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def cmd_validate(args):
    """Validates stored timelines again, against other machines (a calibrated machine file made
    after the GPU run): no GPU needed. Appends to RESULTS/validation-<machine>.jsonl."""
    args.results_dir = args.results
    recs = read_jsonl(os.path.join(args.results, "matrix.jsonl"))
    runs = [r for r in recs if r.get("type") == "run" and r.get("timeline")]
    meta = next((r for r in recs if r.get("type") == "meta"), {})
    args.ranks = meta.get("ranks", 2)
    args.dtype = meta.get("dtype", "bf16")
    shapes = sorted({(r["workload"], r["m"], r["k"], r["n"], r["size"]) for r in runs})
    part = [{"workload": w, "shape": (m, k, n), "size": s} for w, m, k, n, s in shapes]
    for machine in args.machine:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(machine))
        out = Out(os.path.join(args.results, f"validation-{name}.jsonl"))
        n = simulate_side(part, runs, argparse.Namespace(**{**vars(args), "machine": [machine]}), out)
        out.close()
        print(f"overlap_matrix: {n} validations against {machine}", flush=True)
    return 0


def cmd_plan(args):
    args.backend = "cuda"
    caps = {"override": ["nccl", "cuda"] if "cuda" in args.comms.split(",") else ["nccl"], "timeline_run": True,
            "sweep": True, "warmup": True}
    all_units = units(args, comm_backends(args, caps))
    part, loads = select_part(all_units, args)
    for u in part:
        print(f"{u['workload']:20s} {str(u['shape']):22s} {len(u['points']):3d} configs x {args.launches} launches "
              f"~{estimate_s(u, args):5.0f} s")
    print(f"part {args.part[0]}/{args.part[1]}: ~{loads[args.part[0] - 1]:.0f} s of GPU time "
          f"(parts: {', '.join(f'{x:.0f}' for x in loads)} s; at {args.launch_overhead_s} s per launch)")
    return 0


def part_arg(s):
    m = re.fullmatch(r"(\d+)/(\d+)", s)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise argparse.ArgumentTypeError(f"--part {s}: expected I/K with 1 <= I <= K")
    return int(m.group(1)), int(m.group(2))


def int_list(s):
    try:
        v = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s}: expected a comma-separated list of integers")
    if any(x < 1 for x in v):
        raise argparse.ArgumentTypeError(f"{s}: chunk counts must be >= 1")
    return v


def protocol_list(s):
    v = s.split(",")
    if any(p not in ("A", "B", "C") for p in v):
        raise argparse.ArgumentTypeError(f"{s}: protocols are A, B, C")
    return v


def pipeline_list(s):
    v = s.split(",")
    if any(p not in ("collective", "p2p") for p in v):
        raise argparse.ArgumentTypeError(f"{s}: pipelines are collective, p2p")
    return v


def knob_arg(s):
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_-]*)=([^,=\s]+(?:,[^,=\s]+)*)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"--knob {s}: expected KEY=V1,V2,... (a key of braid run --sweep)")
    return m.group(1), m.group(2).split(",")


def matrix_flags(p):
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--sizes", default="full", help="full (small,mid,large), a subset such as mid,large, or tiny (CPU)")
    p.add_argument("--streams", type=int_list, default=[1, 2, 4, 8], help="chunk counts (1 = serial)")
    p.add_argument("--protocols", type=protocol_list, default=["A", "B", "C"])
    p.add_argument("--pipelines", type=pipeline_list, default=["collective", "p2p"],
                   help="pipeline kinds (braid lower --pipeline): every one is measured, and braid tune ranks them")
    p.add_argument("--knob", type=knob_arg, action="append", default=[],
                   help="another lowering knob as a dimension: KEY=V1,V2 (any key of braid run --sweep; repeatable)")
    p.add_argument("--warmup", type=int, default=None,
                   help="braid run --warmup N: untimed runs before each configuration's timed ones, and a sweep's "
                        "untimed first pass (default: braid's)")
    p.add_argument("--comms", default="nccl,cuda",
                   help="--backend-override transports to measure (those the binary lacks are left out)")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--launches", type=int, default=2, help="separate launches per point (>= 2 gives a spread)")
    p.add_argument("--repeat", type=int, default=10, help="timed runs per launch (braid run --repeat)")
    p.add_argument("--part", type=part_arg, default=(1, 1), help="I/K: the I-th of K parts of about equal time")
    p.add_argument("--torch", action=argparse.BooleanOptionalAction, default=True,
                   help="run bench/torch_reference.py for ag_matmul, matmul_rs, matmul_ar (GPU)")
    p.add_argument("--torch-launches", type=int, default=1)
    p.add_argument("--sweep", action=argparse.BooleanOptionalAction, default=True,
                   help="one launch per transport runs every configuration (braid run --sweep), when braid has it")
    p.add_argument("--launch-overhead-s", type=float, default=4.0, help="for the estimate and the deadline")
    p.add_argument("--config-overhead-s", type=float, default=1.0,
                   help="per configuration in a launch (lowering, checked run, gather; about 1.3 s at the large "
                        "shapes on two H100s, 2026-11-25): for the estimate")
    p.add_argument("--torch-overhead-s", type=float, default=15.0, help="for the estimate and the deadline")
    p.add_argument("--nominal-tflops", type=float, default=600.0, help="for the estimate")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure (GPU: --backend cuda) and validate")
    r.add_argument("--braid", required=True)
    r.add_argument("--out", required=True, help="directory: matrix.jsonl and timelines/")
    r.add_argument("--backend", choices=["cuda", "cpu"], default="cuda")
    r.add_argument("--machine", action="append", default=[],
                   help="machine preset or file for braid validate / tune (repeatable; default from nvidia-smi)")
    r.add_argument("--max-seconds", type=float, default=1e9,
                   help="start no launch after this many seconds (the rest is recorded as skipped)")
    r.add_argument("--run-timeout", type=int, default=120,
                   help="braid run --timeout: bounds a whole launch (a sweep) and each NCCL operation")
    r.add_argument("--torchrun", default=None,
                   help="the torchrun command (default: torchrun on PATH, else python3 -m torch.distributed.run)")
    r.add_argument("--commit", default=os.environ.get("BRAID_COMMIT"), help="the commit measured (default: git)")
    r.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="parallel validations")
    matrix_flags(r)
    v = sub.add_parser("validate", help="validate stored timelines against (other) machines, on CPU")
    v.add_argument("--braid", required=True)
    v.add_argument("--results", required=True, help="a directory written by `run`")
    v.add_argument("--machine", action="append", required=True)
    v.add_argument("--streams", type=int_list, default=[1, 2, 4, 8])
    v.add_argument("--protocols", type=protocol_list, default=["A", "B", "C"])
    v.add_argument("--pipelines", type=pipeline_list, default=["collective", "p2p"])
    v.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 2))
    pl = sub.add_parser("plan", help="list a part's units and its estimated GPU time")
    matrix_flags(pl)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        if args.launches < 1 or args.repeat < 0:
            ap.error("--launches must be >= 1 and --repeat >= 0")
        return cmd_run(args)
    if args.cmd == "validate":
        return cmd_validate(args)
    return cmd_plan(args)


if __name__ == "__main__":
    sys.exit(main())

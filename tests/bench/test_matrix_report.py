"""bench/matrix_report.py on a recorded CPU run and on hand-made GPU-like records whose statistics
are known (python3 -m unittest discover -s tests/bench)."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import matrix_report as mr  # noqa: E402


def run(w, shape, s, p, launch, wall, comm="nccl", spans=None, size="mid"):
    m, k, n = shape
    r = {"type": "run", "workload": w, "m": m, "k": k, "n": n, "size": size, "dtype": "bf16", "ranks": 2,
         "streams": s, "protocol": p, "comm": comm, "serial": s == 1, "launch": launch, "exit_code": 0,
         "wall_us": wall, "gflop_per_rank": 2 * m * k * n / 1e9}
    if spans:
        r["spans"] = {"compute_us": spans[0], "comm_us": spans[1]}
    return r


def val(w, shape, s, p, launch, measured, predicted, machine="h200", comm="nccl"):
    m, k, n = shape
    return {"type": "validation", "workload": w, "m": m, "k": k, "n": n, "dtype": "bf16", "ranks": 2,
            "streams": s, "protocol": p, "comm": comm, "launch": launch, "machine": machine, "exit_code": 0,
            "measured_makespan_us": measured, "predicted_makespan_us": predicted, "median_abs_op_error": 0.05}


SHAPE = (4096, 8192, 1792)
SHAPE2 = (8192, 8192, 3584)


def sample():
    """ag_matmul at two shapes: serial 1000 us (GEMM 700, comm 300), S=4 B fastest at 800 us; the
    second shape's pipelined runs are all slower than serial and noisy."""
    recs = [{"type": "meta", "date": "2026-11-26", "part": "1/1", "gpus": ["0, NVIDIA H200"], "commit": "abc",
             "backend": "cuda", "ranks": 2, "dtype": "bf16", "launches": 2, "repeat": 10,
             "override_backends": ["nccl", "gloo"]}]
    for launch, f in ((1, 1.0), (2, 1.01)):
        recs.append(run("ag_matmul", SHAPE, 1, "A", launch, 1000 * f, spans=(700, 300)))
        recs.append(run("ag_matmul", SHAPE, 4, "A", launch, 850 * f))
        recs.append(run("ag_matmul", SHAPE, 4, "B", launch, 800 * f))
        recs.append(run("ag_matmul", SHAPE, 4, "C", launch, 990 * f))
        recs.append(run("ag_matmul", SHAPE2, 1, "A", launch, 2000, spans=(1500, 500), size="large"))
        recs.append(run("ag_matmul", SHAPE2, 4, "B", launch, 2100 * (1 if launch == 1 else 1.1), size="large"))
        # predicted: serial +1.5%, S=4 A -5%, B +5% (so the simulator picks A), C +10%
        recs.append(val("ag_matmul", SHAPE, 1, "A", launch, 1000 * f, 1020))
        recs.append(val("ag_matmul", SHAPE, 4, "A", launch, 850 * f, 850 * 1.005 * 0.95))
        recs.append(val("ag_matmul", SHAPE, 4, "B", launch, 800 * f, 800 * 1.005 * 1.05))
        recs.append(val("ag_matmul", SHAPE, 4, "C", launch, 990 * f, 990 * 1.005 * 1.10))
        recs.append(val("ag_matmul", SHAPE2, 4, "B", launch, 2100 * (1 if launch == 1 else 1.1), 1000))
    recs.append({"type": "torch", "workload": "ag_matmul", "m": SHAPE[0], "k": SHAPE[1], "n": SHAPE[2],
                 "result": {"fused_us": 900.0, "serial_us": 1100.0}})
    recs.append({"type": "tune", "workload": "ag_matmul", "m": SHAPE2[0], "k": SHAPE2[1], "n": SHAPE2[2],
                 "machine": "h200", "exit_code": 0, "best": {"streams": 1, "protocol": "B"}, "picks_serial": True})
    recs.append({"type": "run", "workload": "ag_matmul", "m": 1, "k": 1, "n": 1, "exit_code": 2, "error": "x"})
    return recs


def report(recs, *args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "matrix.jsonl")
        with open(path, "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        buf = io.StringIO()
        with redirect_stdout(buf):
            mr.main([path, *args])
        return buf.getvalue()


def row_of(text, *cells):
    for line in text.splitlines():
        if line.startswith("|") and all(c in line for c in cells):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError(f"no row with {cells} in\n{text}")


class Performance(unittest.TestCase):
    def test_best_config_ideal_and_torch(self):
        text = report(sample(), "--section", "performance")
        r = row_of(text, "4096×8192×1792")
        self.assertEqual(r[3], "0.700")            # GEMM alone (serial timeline)
        self.assertEqual(r[4], "0.300 (nccl)")      # comm alone
        self.assertEqual(r[5], "1.005")            # serial: median of 1000 and 1010
        self.assertIn("S=4 B collective nccl", r[6])  # best pipelined, with every knob
        self.assertEqual(r[7], "0.804 (S=4 B collective nccl)")  # best of all: the same, not serial
        self.assertEqual(r[8], "0.700")            # ideal = max(GEMM, comm)
        self.assertEqual(r[9], "87.1%")            # 700 / 804
        self.assertEqual(r[10], "150")             # 2*4096*8192*1792 FLOP in 804 us
        self.assertEqual(r[11], "0.900")           # torch fused
        self.assertEqual(r[12], "1.100")
        self.assertEqual(r[13], "1.0%")            # spread of the launches
        self.assertEqual(r[14], "")                # faster than serial: no flag
        self.assertIn("1 launches failed", text)

    def test_slower_than_serial_is_flagged_with_tunes_pick(self):
        r = row_of(report(sample(), "--section", "performance", "--machine", "h200"), "8192×8192×3584")
        self.assertEqual(r[7], "2.000 (serial: S=1 A collective nccl)")  # braid's best is serial, and says so
        self.assertIn("slower than the fastest serial one: choose serial", r[14])
        self.assertIn("tune picks serial: yes", r[14])

    def test_pipelines_and_further_knobs_are_told_apart(self):
        recs = sample()
        for launch in (1, 2):
            p2p = run("ag_matmul", SHAPE, 2, "B", launch, 760)
            p2p.update({"pipeline": "p2p", "knobs": {"streams": 2, "protocol": "B", "pipeline": "p2p", "pool": "2"}})
            recs.append(p2p)
        r = row_of(report(recs, "--section", "performance"), "4096×8192×1792")
        self.assertEqual(r[6], "0.760 (S=2 B p2p pool=2 nccl)")
        self.assertEqual(r[7], "0.760 (S=2 B p2p pool=2 nccl)")
        self.assertEqual(r[5], "1.005")  # serial: still S=1 A on the collective pipeline

    def test_recorded_cpu_run(self):
        # A real run of the driver on CPU (2 ranks, Gloo, every workload at 64x32x16, chunks 1, 2, 4
        # x protocols A, B, C, 2 launches): no timelines there, so no GEMM/comm alone nor accuracy.
        text = report(mr.load([os.path.join(HERE, "data", "cpu_run.jsonl")]))
        for w in ("ag_matmul", "matmul_rs", "matmul_ar", "row_parallel_linear", "mlp"):
            self.assertIn(f"| {w} | 64×32×16 |", text)
        self.assertIn("backend cpu", text)
        self.assertIn("No validation records", text)
        r = row_of(text, "| matmul_rs | 64×32×16 |")
        self.assertEqual(r[5], "3.387")                # serial: S=1 protocol A, median of two launches
        self.assertIn("(S=2 C collective default)", r[6])


class Accuracy(unittest.TestCase):
    def test_errors_spread_filter_and_sets(self):
        text = report(sample(), "--section", "accuracy", "--machine", "h200")
        r = row_of(text, "4096×8192×1792", "| 1 | A |")
        self.assertEqual(r[4], "collective")  # the pipeline, of a record from before pipelines were swept
        self.assertEqual(r[8], "+1.5%")  # 1020 against the median 1005
        self.assertEqual(r[11], "held out")
        s = row_of(text, "| held out | 5 |")
        self.assertEqual(s[2], "4")                # the noisy point (10% spread) is left out
        self.assertEqual(s[3], "5.0%")             # median of 1.5, 5, 5, 10
        self.assertEqual(s[4], "10.0%")            # the largest: C
        self.assertEqual(s[5], "misses the targets")
        self.assertNotIn("| fit |", text)           # a preset fits nothing

    def test_fit_set_is_reported_apart_and_calibrated_machine_needs_it(self):
        recs = sample()
        for r in recs:
            if r.get("type") == "validation":
                r["machine"] = "cal.json"
        text = report(recs, "--section", "accuracy")
        self.assertIn("needs --fit or --fit-from", text)
        text = report(recs, "--section", "accuracy", "--fit", "ag_matmul:4096:8192:1792")
        self.assertEqual(row_of(text, "| fit | 4 |")[2], "4")
        self.assertEqual(row_of(text, "| held out | 1 |")[2], "0")

    def test_validating_again_replaces_not_adds(self):
        recs = sample()
        again = [dict(r, predicted_makespan_us=r["predicted_makespan_us"] * 2) for r in recs
                 if r["type"] == "validation"]
        text = report(recs + again, "--section", "accuracy", "--machine", "h200")
        r = row_of(text, "4096×8192×1792", "| 1 | A |")
        self.assertEqual(r[8], "+103.0%")  # 2 x 1020 against 1005: the later records alone
        self.assertEqual(row_of(text, "| held out | 5 |")[2], "4")

    def test_fit_from_measurements(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "m.json")
            with open(p, "w") as f:
                json.dump({"gemm": [{"m": 8192, "n": 3584, "k": 8192}], "collective": []}, f)
            fit = mr.fit_shapes_from(p)
        self.assertTrue(mr.in_fit(("ag_matmul",) + SHAPE2, set(), fit))
        self.assertFalse(mr.in_fit(("ag_matmul",) + SHAPE, set(), fit))
        # row-parallel GEMMs are [m, k/d] @ [k/d, n]; mlp's allreduce is of [m, k]
        self.assertTrue(mr.in_fit(("matmul_rs", 8192, 16384, 3584), set(), fit))
        self.assertTrue(mr.in_fit(("mlp", 64, 32, 16), set(), ({}, {("Allreduce", 64 * 32 * 2)})))

    def test_best_choice_and_paradox_rows(self):
        text = report(sample(), "--section", "accuracy", "--machine", "h200")
        b = row_of(text, "4096×8192×1792", "nccl", "S=4 A", "S=4 B")
        self.assertEqual(b[3], "S=4 A collective")   # simulator's pick
        self.assertEqual(b[4], "S=4 B collective")   # measured best
        self.assertEqual(b[5], "no")      # 850 vs 800: 6.3% apart, more than the spread
        self.assertEqual(b[6], "6.2%")
        p = row_of(text, "4096×8192×1792", "| nccl collective | 4 |")
        self.assertEqual(p[7], "A")
        self.assertEqual(p[8], "B")


class Helpers(unittest.TestCase):
    def test_spread_and_median(self):
        self.assertIsNone(mr.spread([1.0]))
        self.assertAlmostEqual(mr.spread([100.0, 103.0, 101.0]), 0.03)
        self.assertEqual(mr.median([3, None, 1]), 2)

    def test_bad_line_is_a_located_error(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.jsonl")
            with open(p, "w") as f:
                f.write('{"type": "meta"}\n{oops\n')
            with self.assertRaises(SystemExit) as e:
                mr.load([p])
            self.assertIn("x.jsonl:2", str(e.exception))


if __name__ == "__main__":
    unittest.main()

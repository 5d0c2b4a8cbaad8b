"""bench/validate_runs.py: the run indices it samples, and a real run of the built `braid sim
--power` over a two-line --run-times file (python3 -m unittest discover -s tests/bench; BRAID
names the binary)."""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import validate_runs as vr  # noqa: E402

PROGRAM = "mlp (D=1, S=2, m=8192, k=8192, n=16384, protocol A, modulo, collective)"
SCRIPT = os.path.join(HERE, "..", "..", "bench", "validate_runs.py")
GOOD = {"program": PROGRAM, "settings": "", "graph": True, "cool_down_ms": 0.0, "warmup_runs": 1,
        "inputs": "integers", "ranks": [{"rank": 0, "wall_us": [500.0, 510.0, 520.0], "issue_us": [9.0] * 3}]}


def changed(**fields):
    """GOOD with `fields` replaced (None: removed), as one JSON line."""
    d = json.loads(json.dumps(GOOD))
    for k, v in fields.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    return json.dumps(d)


def walls(*w):
    return [{"rank": 0, "wall_us": list(w), "issue_us": [9.0] * len(w)}]


class Indices(unittest.TestCase):
    def test_dense_first_then_geometric_and_the_last(self):
        self.assertEqual(vr.indices(3, 12), [0, 1, 2])
        got = vr.indices(500, 12)
        self.assertEqual(got[:4], [0, 1, 2, 3])
        self.assertEqual(got[-1], 499)
        self.assertEqual(got, sorted(set(got)))
        self.assertLessEqual(len(got), 13)


class BadInput(unittest.TestCase):
    """A file that is not a --run-times file, a bad line or an impossible value: a message naming the
    file (and line and field), a non-zero exit, no traceback, and nothing simulated (the --braid
    given is a stand-in that fails if run)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.braid = os.path.join(self.tmp.name, "braid")
        with open(self.braid, "w") as f:
            f.write("#!/bin/sh\necho 'the stand-in braid ran' >&2\nexit 3\n")
        os.chmod(self.braid, 0o755)

    def run_script(self, *argv, braid=None):
        r = subprocess.run([sys.executable, SCRIPT, *argv, "--braid", braid or self.braid, "--machine", "h200"],
                           capture_output=True, text=True)
        self.assertNotIn("Traceback", r.stderr)
        self.assertNotIn("stand-in braid ran", r.stderr)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stderr

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path

    def test_files_that_are_not_run_times(self):
        timeline = json.dumps({"program": PROGRAM, "meta": {"backend": "nccl"}}, indent=1)
        for name, data, why in (
                ("empty.jsonl", "", "no runs in it"),
                ("blank.jsonl", "\n  \n", "no runs in it"),
                ("cut.jsonl", changed()[:60], "line 1: not valid JSON"),
                ("binary.jsonl", b"\x00\xff\xfe\n", "line 1: not UTF-8 text"),
                ("timeline.json", timeline, "line 1: not valid JSON"),
                ("array.jsonl", "[1, 2]\n", "line 1: expected a JSON object")):
            with self.subTest(name):
                path = self.write(name, data)
                err = self.run_script(path)
                self.assertIn(f"{path}: {why}", err)
        missing = os.path.join(self.tmp.name, "nope.jsonl")
        self.assertIn(f"{missing}: cannot read", self.run_script(missing))
        self.assertIn(f"{self.tmp.name}: cannot read", self.run_script(self.tmp.name))

    def test_bad_lines_name_the_line_and_the_field(self):
        for name, line, why in (
                ("nolabel", changed(program="mlp"), "program: expected braid run's label"),
                ("label_number", changed(program=5), "program: expected braid run's label"),
                ("badpart", changed(program="mlp (D=1, pigeons)"), "program: unknown part 'pigeons'"),
                ("no_warmup", changed(warmup_runs=None), "missing field 'warmup_runs'"),
                ("no_graph", changed(graph=None), "missing field 'graph'"),
                ("warmup_negative", changed(warmup_runs=-5), "warmup_runs: expected a number of runs >= 0"),
                ("cool_string", changed(cool_down_ms="0"), "cool_down_ms: expected a number of milliseconds >= 0"),
                ("cool_negative", changed(cool_down_ms=-10), "cool_down_ms: expected"),
                ("ranks_empty", changed(ranks=[]), "ranks: expected a non-empty array"),
                ("walls_empty", changed(ranks=walls()), "ranks[0].wall_us: expected a non-empty array"),
                ("wall_zero", changed(ranks=walls(500.0, 0)), "ranks[0].wall_us[1]: expected a time in microseconds > 0"),
                ("wall_negative", changed(ranks=walls(-650.0)), "ranks[0].wall_us[0]: expected a time"),
                ("wall_string", changed(ranks=walls("650")), "ranks[0].wall_us[0]: expected a time"),
                ("wall_nan", changed(ranks=walls(float("nan"))), "ranks[0].wall_us[0]: expected a time"),
                ("ranks_unequal", changed(ranks=walls(1.0, 2.0) + [{"rank": 1, "wall_us": [1.0]}]),
                 "ranks[1].wall_us: 1 runs, ranks[0] has 2")):
            with self.subTest(name):
                # A good line, a blank one, then the bad one: line 3.
                path = self.write(name + ".jsonl", changed() + "\n\n" + line + "\n")
                self.assertIn(f"validate_runs: {path}: line 3: {why}", self.run_script(path))

    def test_bad_flags(self):
        good = self.write("good.jsonl", changed() + "\n")
        for points in ("0", "-3"):
            self.assertIn("--points must be 1 or more", self.run_script(good, "--points", points))
        self.assertIn("--host-gap-us must be", self.run_script(good, "--host-gap-us", "nan"))
        missing = os.path.join(self.tmp.name, "no_braid")
        self.assertIn(f"--braid {missing}: no such file", self.run_script(good, braid=missing))
        self.assertIn(f"--braid {good}: not an executable file", self.run_script(good, braid=good))
        out = os.path.join(self.tmp.name, "no_dir", "points.jsonl")
        self.assertIn(f"--jsonl {out}: the folder", self.run_script(good, "--jsonl", out))


@unittest.skipUnless(os.environ.get("BRAID"), "BRAID names the built braid binary")
class EndToEnd(unittest.TestCase):
    def test_back_to_back_runs_slow_and_cooled_ones_do_not(self):
        # 60 runs of a 5 ms program, slowing by 12% after the 10th: the h200 preset's cap predicts
        # a slowdown back to back and none with 50 ms of cool-down between runs.
        walls = [5300.0] * 10 + [5950.0] * 50
        line = {"program": PROGRAM, "settings": "", "graph": True, "warmup_runs": 1, "inputs": "normal",
                "ranks": [{"rank": 0, "wall_us": walls, "issue_us": [9.0] * 60}]}
        with tempfile.TemporaryDirectory() as d:
            warm, cool = os.path.join(d, "warm.jsonl"), os.path.join(d, "cool.jsonl")
            with open(warm, "w") as f:
                f.write(json.dumps(dict(line, cool_down_ms=0.0)) + "\n")
            with open(cool, "w") as f:
                f.write(json.dumps(dict(line, cool_down_ms=50.0)) + "\n")
            out = io.StringIO()
            with redirect_stdout(out):
                sys.argv = ["validate_runs.py", warm, cool, "--braid", os.environ["BRAID"], "--machine", "h200",
                            "--points", "6", "--jsonl", os.path.join(d, "points.jsonl")]
                vr.main()
            points = [json.loads(x) for x in open(os.path.join(d, "points.jsonl"))]
        text = out.getvalue()
        ratios = [float(x.split("predicted ")[1]) for x in text.splitlines() if "last runs / first runs" in x]
        self.assertEqual(len(ratios), 2)
        self.assertGreater(ratios[0], 1.05)  # back to back: the cap
        self.assertAlmostEqual(ratios[1], 1.0, places=3)  # 50 ms idle before each run
        self.assertIn("measured 1.123", text)
        self.assertEqual({p["run"] for p in points if "warm" in p["file"]}, set(vr.indices(60, 6)))
        self.assertIn("points: median |error|", text)

    def test_the_idle_before_an_interpreted_run_costs_its_host_the_after_idle_delay(self):
        # A short interpreted program at cool-downs 0 and 20 ms: the table of what the idle cost
        # predicts h200's host.after_idle at 20 ms (239.1 us) less its value at the 20 us the host
        # idles between back-to-back runs (2 us, on the line from 0 to 50.4 us at 0.5 ms).
        program = "matmul_rs (D=1, S=1, m=8192, k=8192, n=2048, protocol A, modulo, collective)"
        line = {"program": program, "settings": "", "graph": False, "warmup_runs": 2, "inputs": "integers",
                "ranks": [{"rank": 0, "wall_us": [370.0] * 5, "issue_us": [45.0] * 5}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cd.jsonl")
            with open(path, "w") as f:
                f.write(json.dumps(dict(line, cool_down_ms=0.0)) + "\n")
                cooled = dict(line, cool_down_ms=20.0)
                cooled["ranks"] = [{"rank": 0, "wall_us": [600.0] * 5, "issue_us": [310.0] * 5}]
                f.write(json.dumps(cooled) + "\n")
            out = io.StringIO()
            with redirect_stdout(out):
                sys.argv = ["validate_runs.py", path, "--braid", os.environ["BRAID"], "--machine", "h200", "--points", "3"]
                vr.main()
        text = out.getvalue()
        self.assertIn("What the idle before a run costs", text)
        rows = text.split("What the idle before a run costs")[1].splitlines()
        cooled_row = [r.split() for r in rows if r.strip().startswith("20 ")]
        self.assertEqual(len(cooled_row), 1, text)
        self.assertEqual(cooled_row[0][3], "+230.0")  # measured: 600 - 370
        predicted = float(cooled_row[0][4])
        self.assertAlmostEqual(predicted, 239.1 - 50.4 * 0.02 / 0.5, delta=1)
        # The summary: |predicted - 230| of the 600 us run, and 230 / 600 for predicting no cost.
        summary = [r for r in rows if r.startswith("interpreted: the idle's cost")]
        self.assertEqual(len(summary), 1, text)
        self.assertIn(f"within {100 * abs(predicted - 230) / 600:.1f}% of the run median", summary[0])
        self.assertIn("over 1 cool-downs (predicting no cost: 38.3%", summary[0])


if __name__ == "__main__":
    unittest.main()

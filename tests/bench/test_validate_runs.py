"""bench/validate_runs.py: the run indices it samples, and a real run of the built `braid sim
--power` over a two-line --run-times file (python3 -m unittest discover -s tests/bench; BRAID
names the binary)."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import validate_runs as vr  # noqa: E402

PROGRAM = "mlp (D=1, S=2, m=8192, k=8192, n=16384, protocol A, modulo, collective)"


class Indices(unittest.TestCase):
    def test_dense_first_then_geometric_and_the_last(self):
        self.assertEqual(vr.indices(3, 12), [0, 1, 2])
        got = vr.indices(500, 12)
        self.assertEqual(got[:4], [0, 1, 2, 3])
        self.assertEqual(got[-1], 499)
        self.assertEqual(got, sorted(set(got)))
        self.assertLessEqual(len(got), 13)


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

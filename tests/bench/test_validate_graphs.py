"""bench/validate_graphs.py: run labels to `braid sim` flags, the transport of a run (a label's
`copy engines`, or `--backend-override cuda` seen in the communicators), and a real run of the
built `braid sim --graph` over a two-point log (python3 -m unittest discover -s tests/bench;
BRAID names the binary)."""
import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import validate_graphs as vg  # noqa: E402

LOG = """braid run: rank 0 timing [comm-backend=nccl] (CUDA graph replay, 20 runs, median): wall 300 us, host issue 9 us
[rank 1] braid run: rank 1 timing [comm-backend=nccl] (CUDA graph replay, 20 runs, median): wall 310 us, host issue 9 us
braid run: ag_matmul (D=2, S=2, m=256, k=128, n=64, protocol A, modulo, p2p) on 2 ranks [nccl+cuda-ipc, cuda:0 (NVIDIA H200)], numberOfStreams=2, seed 0
braid run: rank 0 timing [comm-backend=cuda] (CUDA graph replay, 20 runs, median): wall 200 us, host issue 9 us
[rank 1] braid run: rank 1 timing [comm-backend=cuda] (CUDA graph replay, 20 runs, median): wall 205 us, host issue 9 us
braid run: ag_matmul (D=2, S=2, m=256, k=128, n=64, protocol A, modulo, p2p, copy engines) on 2 ranks [nccl+cuda-ipc, cuda:0 (NVIDIA H200)], numberOfStreams=2, seed 0
"""
OVERRIDE = """braid run: rank 0 timing [streams=1] (CUDA graph replay, 20 runs, median): wall 400 us, host issue 9 us
[rank 1] braid run: rank 1 timing [streams=1] (CUDA graph replay, 20 runs, median): wall 420 us, host issue 9 us
braid run: matmul_rs (D=2, S=1, m=256, k=128, n=64, protocol A, modulo, collective) on 2 ranks [cuda-ipc, cuda:0 (NVIDIA H200)], numberOfStreams=1, seed 0
"""


class Labels(unittest.TestCase):
    def test_schedules_and_transport_become_flags(self):
        self.assertEqual(vg.parse_label("ag_matmul", "D=2, S=2, P=1, m=8, k=4, n=2, protocol B, modulo, p2p, prefetch, "
                                                     "own shard in place, copy engines"),
                         ["--devices", "2", "--streams", "2", "--pool", "1", "--m", "8", "--k", "4", "--n", "2",
                          "--protocol", "B", "--indexing", "modulo", "--pipeline", "p2p", "--prefetch",
                          "--own-shard", "in-place", "--comm-backend", "cuda"])
        with self.assertRaises(SystemExit):
            vg.parse_label("ag_matmul", "D=2, pigeons")

    def test_points_keep_their_transport(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "run_agS_p2p_1.log"), "w") as f:
                f.write(LOG)
            with open(os.path.join(d, "run_rsS_cuda_base_1.log"), "w") as f:
                f.write(OVERRIDE)
            points, flags, history = vg.read_logs([d])
        by_program = {k[1]: v for k, v in points.items()}
        nccl = "ag_matmul (D=2, S=2, m=256, k=128, n=64, protocol A, modulo, p2p)"
        cuda = "ag_matmul (D=2, S=2, m=256, k=128, n=64, protocol A, modulo, p2p, copy engines)"
        override = "matmul_rs (D=2, S=1, m=256, k=128, n=64, protocol A, modulo, collective, copy engines)"
        self.assertEqual(list(by_program[nccl].values()), [310.0])  # the slower rank
        self.assertEqual(list(by_program[cuda].values()), [205.0])
        self.assertEqual(list(by_program[override].values()), [420.0])
        self.assertNotIn("--comm-backend", flags[("agS", nccl)])
        self.assertEqual(flags[("agS", cuda)][-2:], ["--comm-backend", "cuda"])
        self.assertEqual(flags[("rsS", override)][-2:], ["--comm-backend", "cuda"])
        # No warm-up line (--warmup 0): the checked run, the graph's first replay, half the 20 timed.
        self.assertEqual(history[("agS", nccl)], 12)

    def test_a_points_power_history_counts_its_own_runs(self):
        sweep = ("braid run: warm-up: every one of the 3 configurations runs 10 times untimed first; then each, "
                 "after its checked run, 10 more untimed runs before its 50 timed ones\n")
        one = "braid run: warm-up: 5 untimed runs after the checked run, before the 20 timed ones\n"
        self.assertEqual(vg.runs_before_median(sweep.splitlines(), 50), 1 + 10 + 25)
        self.assertEqual(vg.runs_before_median(one.splitlines(), 20), 1 + 5 + 10)
        self.assertEqual(vg.runs_before_median([], 20), 1 + 1 + 10)

    def test_launch_sets_of_different_cool_downs_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "run_agS_p2p_1.log"), "w") as f:
                f.write(LOG)
            self.assertEqual(vg.cool_down([d]), 0.0)
            with open(os.path.join(d, "run_agS_p2p_2.log"), "w") as f:
                f.write("braid run: cool-down: 20 ms idle before every warm-up and timed run\n" + LOG)
            with self.assertRaises(SystemExit) as e:
                vg.cool_down([d])
            self.assertIn("different --cool-down: 0 ms (1 logs", str(e.exception))
            self.assertIn("20 ms (1 logs", str(e.exception))
            os.remove(os.path.join(d, "run_agS_p2p_1.log"))
            self.assertEqual(vg.cool_down([d]), 20.0)

    def test_launch_sets_of_different_input_values_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "run_agS_p2p_1.log"), "w") as f:
                f.write(LOG)
            self.assertEqual(vg.input_values([d]), "integers")
            with open(os.path.join(d, "run_agS_p2p_2.log"), "w") as f:
                f.write(LOG.replace("seed 0\n", "seed 0 (normal inputs)\n"))
            with self.assertRaises(SystemExit) as e:
                vg.input_values([d])
            self.assertIn("different --inputs: integers (1 logs", str(e.exception))
            self.assertIn("normal (1 logs", str(e.exception))
            os.remove(os.path.join(d, "run_agS_p2p_1.log"))
            self.assertEqual(vg.input_values([d]), "normal")

    def test_points_fall_into_classes(self):
        self.assertEqual(vg.point_class("matmul_rs (D=2, S=1, m=8, k=8, n=8, protocol A, modulo, collective)"),
                         ("NCCL", "serial"))
        self.assertEqual(vg.point_class("matmul_rs (D=2, S=4, m=8, k=8, n=8, protocol A, modulo, collective, copy engines)"),
                         ("copy engines", "chunked"))
        self.assertEqual(vg.point_class("matmul_rs (D=2, S=4, P=1, m=8, k=8, n=8, protocol A, modulo, collective, "
                                        "deferred waits, prefetch)"), ("NCCL", "scheduled"))
        self.assertEqual(vg.point_class("ag_matmul (D=2, S=1, m=8, k=8, n=8, protocol A, modulo, p2p, prefetch, "
                                        "copy engines)"), ("copy engines", "scheduled"))

    @unittest.skipUnless(os.environ.get("BRAID"), "BRAID names the built braid binary")
    def test_simulates_both_transports(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "run_agS_p2p_1.log"), "w") as f:
                f.write(LOG)
            out = io.StringIO()
            with redirect_stdout(out):
                sys.argv = ["validate_graphs.py", d, "--braid", os.environ["BRAID"], "--machine", "h200",
                            "--held-out", "agS"]
                self.assertEqual(vg.main(), 0)
        text = out.getvalue()
        self.assertIn("copy engines) | 205 |", text)
        self.assertIn("all points: n=2", text)
        self.assertIn("copy engines, chunked: n=1 signed median", text)
        self.assertNotIn("failed", text)
        self.assertIn("held-out shapes (agS), all points: n=2", text)
        self.assertIn("fit shapes (), all points: none", text)
        self.assertRegex(text, r"best choice agrees in [01] of 1 shapes; within the measured spread in [01] of 1")
        # h200's GEMMs were timed on normal operands, these runs seeded integers.
        self.assertIn("note: h200's GEMMs were calibrated on normal operands, the runs' inputs were integers", text)


class BadInput(unittest.TestCase):
    """Logs that cannot be read, are misnamed, hold an impossible time or no point at all, and runs in
    which no point could be simulated: a message naming the log (and line), a non-zero exit, no
    traceback. Without BRAID, --braid is a stand-in that fails if run (the input is refused first)."""
    SCRIPT = os.path.join(HERE, "..", "..", "bench", "validate_graphs.py")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.braid = os.path.join(self.tmp.name, "braid")
        with open(self.braid, "w") as f:
            f.write("#!/bin/sh\necho 'the stand-in braid ran' >&2\nexit 3\n")
        os.chmod(self.braid, 0o755)

    def run_script(self, *argv, braid=None):
        r = subprocess.run([sys.executable, self.SCRIPT, *argv, "--braid", braid or self.braid, "--machine", "h200"],
                           capture_output=True, text=True)
        self.assertNotIn("Traceback", r.stderr)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stderr

    def launch(self, name, logs):
        d = os.path.join(self.tmp.name, name)
        os.makedirs(d)
        for f, text in logs.items():
            with open(os.path.join(d, f), "wb" if isinstance(text, bytes) else "w") as fh:
                fh.write(text)
        return d

    def test_logs_with_no_point_validate_nothing(self):
        for name, text in (("empty", ""), ("binary", bytes(range(256))), ("timeline", '{"program": "x"}\n'),
                           ("failed", "braid run: rank 0 failed first (exit code 2): no communicator\n")):
            with self.subTest(name):
                d = self.launch(name, {"run_agS_p2p_1.log": text})
                err = self.run_script(d)
                self.assertIn(f"{os.path.join(d, 'run_agS_p2p_1.log')}: no measured point in it", err)
                self.assertIn(f"no measured point in the run_*.log of {d}: nothing to validate", err)
                self.assertNotIn("stand-in braid ran", err)

    def test_a_log_with_no_point_beside_good_ones_is_noted_and_skipped(self):
        d = self.launch("mixed", {"run_agS_p2p_1.log": LOG, "run_agS_p2p_2.log": ""})
        err = io.StringIO()
        with redirect_stderr(err):
            points, _, _ = vg.read_logs([d])
        self.assertEqual(len(points), 2)
        self.assertIn(f"{os.path.join(d, 'run_agS_p2p_2.log')}: no measured point in it", err.getvalue())

    def test_bad_logs_name_the_file_and_line(self):
        for name, files, why in (
                ("badname", {"run_x.log": LOG}, "run_x.log: cannot read the shape and launch from its name"),
                ("badwall", {"run_agS_p2p_1.log": LOG.replace("wall 310 us", "wall 3.1.0 us")},
                 "run_agS_p2p_1.log: line 2: wall time '3.1.0' is not a number of microseconds > 0"),
                ("zerowall", {"run_agS_p2p_1.log": LOG.replace("wall 200 us", "wall 0 us")},
                 "run_agS_p2p_1.log: line 4: wall time '0' is not"),
                ("badpart", {"run_agS_p2p_1.log": LOG.replace("modulo, p2p)", "modulo, pigeons)")},
                 "run_agS_p2p_1.log: line 3: unknown part 'pigeons'"),
                ("badcool", {"run_agS_p2p_1.log": "braid run: cool-down: 1.2.3 ms idle\n" + LOG},
                 "run_agS_p2p_1.log: line 1: cannot read --cool-down from '1.2.3'")):
            with self.subTest(name):
                d = self.launch(name, files)
                self.assertIn(f"validate_graphs: {d}/{why}", self.run_script(d))
        d = self.launch("folder", {})
        os.makedirs(os.path.join(d, "run_agS_p2p_1.log"))
        self.assertIn(f"{d}/run_agS_p2p_1.log: cannot read", self.run_script(d))

    def test_bad_flags(self):
        d = self.launch("good", {"run_agS_p2p_1.log": LOG})
        missing = os.path.join(self.tmp.name, "no_braid")
        self.assertIn(f"--braid {missing}: no such file", self.run_script(d, braid=missing))
        out = os.path.join(self.tmp.name, "no_dir", "points.jsonl")
        self.assertIn(f"--jsonl {out}: the folder", self.run_script(d, "--jsonl", out))

    @unittest.skipUnless(os.environ.get("BRAID"), "BRAID names the built braid binary")
    def test_no_point_simulated_is_an_error(self):
        for name, log, extra, why in (
                ("workload", LOG.replace("ag_matmul (", "no_such_workload ("), (), "'no_such_workload' is neither"),
                ("dtype", LOG, ("--dtype", "fp99"), "unknown dtype 'fp99'")):
            with self.subTest(name):
                d = self.launch(name, {"run_agS_p2p_1.log": log})
                err = self.run_script(d, *extra, braid=os.environ["BRAID"])
                self.assertIn("validate_graphs: none of the 2 points could be simulated, nothing validated", err)
                self.assertIn(f"({d}/run_agS_p2p_1.log): braid sim failed: ", err)
                self.assertIn(why, err)


if __name__ == "__main__":
    unittest.main()

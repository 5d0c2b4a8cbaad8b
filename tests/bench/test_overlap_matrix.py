"""bench/overlap_matrix.py: its parsers, the plan, and real runs of `braid` on CPU (BRAID names the
binary; default build/cli/braid). python3 -m unittest discover -s tests/bench"""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import overlap_matrix as om  # noqa: E402

BRAID = os.environ.get("BRAID", os.path.join(ROOT, "build", "cli", "braid"))
HAVE_BRAID = os.path.exists(BRAID)
# `braid run` needs its libtorch module (docs/EXEC.md, "How braid run loads the executor").
HAVE_RUN = HAVE_BRAID and os.path.exists(os.path.join(os.path.dirname(BRAID), "libbraid_exec_cli.so"))


def quiet(fn, *a):
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = fn(*a)
    return code, buf.getvalue()


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def sim_timeline(path, workload, flags):
    """A predicted timeline, standing in for a measured one where no GPU can measure it."""
    subprocess.run([BRAID, "sim", workload, "--machine", "h200", "--timeline", path] + flags, check=True,
                   stdout=subprocess.DEVNULL)


class Parsing(unittest.TestCase):
    def test_timing_lines_of_every_rank(self):
        text = ("[rank 1] braid run: rank 1 timing (interpreted, 10 runs, median): wall 1.23457e+06 us, host issue "
                "1056.69 us = 40.642 us per host instruction (26 instructions)\n"
                "braid run: rank 0 timing (CUDA graph replay, 10 runs, median): wall 86.762 us, host issue 8.6 us "
                "= 0.615 us per host instruction (14 instructions)\n")
        t = om.parse_timings(text)
        self.assertEqual(sorted(t), [0, 1])
        self.assertAlmostEqual(t[1]["wall_us"], 1234570.0)
        self.assertEqual(t[0]["mode"], "CUDA graph replay")
        self.assertEqual(t[0]["instructions"], 14)
        self.assertEqual(om.parse_timings("rank 0: NCCL error"), {})

    def test_sweep_flag_of_the_binary(self):
        self.assertIsNotNone(om.re.search(r"--sweep(?![-\w])", "  --sweep TEXT ...  run every combination"))
        self.assertIsNone(om.re.search(r"--sweep(?![-\w])", "  --sweep-streams INT  (an older braid)"))

    def test_override_transports_from_help(self):
        self.assertEqual(om.override_backends("  --backend-override TEXT:{nccl,gloo}\n  run every (--backend cuda)"),
                         ["nccl", "gloo"])
        self.assertEqual(om.override_backends("  --backend-override TEXT:{nccl,gloo,cuda}  x"), ["nccl", "gloo", "cuda"])
        self.assertEqual(om.override_backends("no such flag"), [])

    @unittest.skipUnless(HAVE_BRAID, "needs the braid binary")
    def test_override_transports_of_this_binary(self):
        text = subprocess.run([BRAID, "run", "--help"], stdout=subprocess.PIPE, text=True).stdout
        self.assertIn("nccl", om.override_backends(text))

    def test_serial_spans_of_a_measured_timeline(self):
        s = om.timeline_spans(os.path.join(ROOT, "tests", "viz", "data", "ag_matmul_2ranks_measured.json"))
        self.assertAlmostEqual(s["compute_us"], 115.54, places=2)   # two matmul chunks, max over ranks
        self.assertAlmostEqual(s["gemm_us"], 115.54, places=2)
        self.assertAlmostEqual(s["comm_us"], 84.8, places=2)
        self.assertAlmostEqual(s["makespan_us"], 160.27, places=2)
        self.assertEqual(sorted(s["per_rank"]), ["0", "1"])


class TorchRows(unittest.TestCase):
    """How the driver starts torch's reference and reads its row (the reference itself needs GPUs:
    a stand-in prints what bench/torch_reference.py prints on rank 0)."""

    def launch(self, script_text):
        with tempfile.TemporaryDirectory() as d:
            runner = os.path.join(d, "runner.py")
            with open(runner, "w") as f:
                f.write("import sys\n" + script_text)
            saved = om.TORCH_SCRIPT
            om.TORCH_SCRIPT = runner
            try:
                args = om.argparse.Namespace(torchrun=f"{sys.executable} {runner}", ranks=2, repeat=10, dtype="bf16")
                return om.torch_launch({"workload": "matmul_rs", "shape": (64, 32, 16), "size": "tiny"}, 1, args)
            finally:
                om.TORCH_SCRIPT = saved

    def test_row_is_read_from_rank_zeros_output(self):
        rec = self.launch('print("NCCL INFO noise")\nprint(\'{"workload": "matmul_rs", "fused_us": 12.5}\')\n'
                          'assert sys.argv[1:3] == ["--nproc-per-node", "2"] and "--iters" in sys.argv\n'
                          'assert sys.argv[sys.argv.index("--mkn") + 1] == "64,32,16"\n')
        self.assertEqual(rec["exit_code"], 0)
        self.assertEqual(rec["result"]["fused_us"], 12.5)
        self.assertEqual(rec["gflop_per_rank"], 2 * 64 * 32 * 16 / 2 / 1e9)

    def test_a_failed_launch_keeps_its_output(self):
        rec = self.launch('print("RuntimeError: no GPU")\nsys.exit(1)\n')
        self.assertEqual(rec["exit_code"], 1)
        self.assertIn("no GPU", rec["error"])
        self.assertNotIn("result", rec)


class BrokenTransport(unittest.TestCase):
    """A transport whose every launch fails (a stand-in braid: `run --help` as the real one
    prints it, every run exits 2) costs a bounded number of launches, not one per point."""

    def test_two_empty_launches_in_a_row_skip_the_transport(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "braid")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n"
                        "if [ \"$2\" = --help ]; then echo '  --backend-override TEXT:{nccl,gloo}'; "
                        "echo '  --timeline-run INT'; echo '  --sweep TEXT ...'; exit 0; fi\n"
                        "echo \"rank 0: NCCL: boom\"; exit 2\n")
            os.chmod(fake, 0o755)
            code, _ = quiet(om.main, ["run", "--braid", fake, "--out", os.path.join(d, "o"), "--sizes", "tiny",
                                      "--workloads", "ag_matmul,mlp", "--streams", "1,2", "--protocols", "A",
                                      "--pipelines", "collective", "--comms", "nccl", "--no-torch", "--machine",
                                      "h200"])
            self.assertEqual(code, 0)
            recs = records(os.path.join(d, "o", "matrix.jsonl"))
        end = recs[-1]
        self.assertEqual(end["launches"], 4)  # per launch of ag_matmul: the sweep, then one config alone
        runs = [r for r in recs if r["type"] == "run"]
        self.assertEqual(len(runs), 4)
        self.assertTrue(all(r["exit_code"] == 2 and "boom" in r["error"] for r in runs))
        skipped = [r for r in recs if r["type"] == "skipped"]
        self.assertEqual({r["workload"] for r in skipped}, {"mlp"})
        self.assertIn("transport nccl", skipped[0]["reason"])


class Plan(unittest.TestCase):
    def args(self, *extra):
        ap = om.argparse.ArgumentParser()
        om.matrix_flags(ap)
        return ap.parse_args(list(extra))

    def test_configs_serial_first(self):
        c = om.configs([("streams", [8, 1, 2, 4]), ("protocol", ["C", "A", "B"])])
        self.assertEqual(c[0], {"streams": 1, "protocol": "A"})
        self.assertEqual(len(c), 12)
        self.assertEqual(om.configs([("streams", [2]), ("protocol", ["B"])]), [{"streams": 2, "protocol": "B"}])
        c = om.configs(om.knob_axes(self.args("--streams", "2,1", "--protocols", "B,A")))
        self.assertEqual(c[0], {"streams": 1, "protocol": "A", "pipeline": "collective"})
        self.assertEqual(c[1], {"streams": 1, "protocol": "A", "pipeline": "p2p"})
        self.assertEqual(len(c), 8)

    def test_knobs_are_dimensions(self):
        a = self.args("--streams", "1,2", "--protocols", "B", "--pipelines", "p2p", "--knob", "pool=1,2")
        self.assertEqual(om.knob_axes(a), [("streams", [1, 2]), ("protocol", ["B"]), ("pipeline", ["p2p"]),
                                           ("pool", ["1", "2"])])
        u = om.units(a, ["nccl"])[0]
        self.assertEqual(len(u["points"]), 4)
        p = u["points"][-1]
        self.assertEqual(p.knobs, {"streams": 2, "protocol": "B", "pipeline": "p2p", "pool": "2"})
        key = p.key()
        self.assertEqual((key["pool"], key["pipeline"], key["knobs"]["pool"]), ("2", "p2p", "2"))
        self.assertIn("--pool", p.workload_flags())
        self.assertEqual(p.workload_flags()[p.workload_flags().index("--pool") + 1], "2")
        with self.assertRaises(SystemExit):
            self.args("--knob", "pool")
        with self.assertRaises(SystemExit):
            om.knob_axes(self.args("--knob", "streams=1"))

    def test_sweep_timing_lines_are_told_apart(self):
        text = ("[rank 1] braid run: rank 1 timing [streams=2 protocol=B] (interpreted, 3 runs, median): wall 10 us, "
                "host issue 5 us = 1 us per host instruction (5 instructions)\n"
                "braid run: rank 0 timing [streams=2 protocol=B] (interpreted, 3 runs, median): wall 12 us, "
                "host issue 5 us = 1 us per host instruction (5 instructions)\n"
                "braid run: rank 0 timing [streams=4 protocol=C] (interpreted, 3 runs, median): wall 9 us, "
                "host issue 5 us = 1 us per host instruction (5 instructions)\n")
        t = om.parse_sweep_timings(text)
        self.assertEqual(sorted(t[om.tag_key({"streams": 2, "protocol": "B"})]), [0, 1])
        self.assertEqual(t[om.tag_key({"streams": 4, "protocol": "C"})][0]["wall_us"], 9.0)
        self.assertEqual(om.parse_timings(text), {})
        # Any swept key tags the line, in any order; the point finds its line by its knobs.
        text = ("braid run: rank 0 timing [streams=2 protocol=B pipeline=p2p pool=3] (CUDA graph replay, 3 runs, "
                "median): wall 7 us, host issue 5 us = 1 us per host instruction (5 instructions)\n")
        p = om.Point("mlp", (1, 2, 3), "mid", {"streams": 2, "protocol": "B", "pipeline": "p2p", "pool": "3"},
                     "nccl", 2, "bf16")
        t = om.parse_sweep_timings(text)
        self.assertEqual(t[om.tag_key(p.knobs)][0]["wall_us"], 7.0)
        self.assertEqual(t[om.tag_key(p.knobs)][0]["mode"], "CUDA graph replay")
        self.assertEqual(om.timeline_file("d/mlp_L1.json", p), "d/mlp_L1.streams2.protocolB.pipelinep2p.pool3.json")

    def test_parts_cover_every_unit_once_and_balance(self):
        a = self.args("--comms", "nccl")
        all_units = om.units(a, ["nccl"])
        self.assertEqual(len(all_units), 15)
        seen = []
        loads = None
        for i in (1, 2, 3):
            a.part = (i, 3)
            part, loads = om.select_part(all_units, a)
            seen += [(u["workload"], u["shape"]) for u in part]
        self.assertEqual(sorted(seen), sorted((u["workload"], u["shape"]) for u in all_units))
        self.assertLess(max(loads) / min(loads), 1.3)

    def test_size_classes_and_bad_workload(self):
        a = self.args("--sizes", "mid", "--workloads", "ag_matmul,mlp")
        self.assertEqual([u["size"] for u in om.units(a, ["nccl"])], ["mid", "mid"])
        a = self.args("--workloads", "nope")
        with self.assertRaises(SystemExit):
            om.units(a, ["nccl"])

    def test_plan_prints_its_estimate(self):
        code, out = quiet(om.main, ["plan", "--part", "2/3", "--comms", "nccl"])
        self.assertEqual(code, 0)
        self.assertIn("part 2/3: ~", out)

    @unittest.skipUnless(HAVE_BRAID, "needs the braid binary")
    def test_gflop_formula_agrees_with_the_simulators_flops(self):
        with tempfile.TemporaryDirectory() as d:
            for w, shapes in om.SHAPES["full"].items():
                m, k, n = shapes[0]
                p = os.path.join(d, w + ".json")
                sim_timeline(p, w, ["--devices", "2", "--streams", "2", "--m", str(m), "--k", str(k), "--n", str(n),
                                    "--dtype", "bf16"])
                with open(p) as f:
                    ops = json.load(f)["ops"]
                flops = sum(o.get("flops", 0) for o in ops if o["rank"] == 0 and o["name"] in ("matmul", "linear"))
                self.assertAlmostEqual(flops / 1e9 / om.gflop_per_rank(w, m, k, n, 2), 1.0, delta=1e-3, msg=w)


@unittest.skipUnless(HAVE_RUN, "needs the braid binary built with libtorch")
class RealRuns(unittest.TestCase):
    def test_cpu_matrix_runs_launches_and_tune(self):
        with tempfile.TemporaryDirectory() as d:
            code, out = quiet(om.main, ["run", "--braid", BRAID, "--out", d, "--backend", "cpu", "--sizes", "tiny",
                                        "--ranks", "1", "--workloads", "matmul_rs", "--streams", "1,2", "--protocols",
                                        "A,B", "--pipelines", "collective", "--launches", "2", "--repeat", "2",
                                        "--warmup", "1", "--machine", "h200", "--no-torch"])
            self.assertEqual(code, 0, out)
            recs = records(os.path.join(d, "matrix.jsonl"))
        types = [r["type"] for r in recs]
        self.assertEqual(types[0], "meta")
        self.assertTrue(recs[0]["sweep"])
        self.assertEqual(types[-1], "end")
        runs = [r for r in recs if r["type"] == "run"]
        self.assertEqual(len(runs), 8)  # (S=1, 2) x (A, B) x 2 launches, one sweep launch each
        self.assertEqual([(r["streams"], r["protocol"], r["launch"]) for r in runs],
                         [(s, p, l) for l in (1, 2) for s in (1, 2) for p in "AB"])
        for r in runs:
            self.assertEqual(r["exit_code"], 0, r.get("error"))
            self.assertTrue(r["sweep"])
            self.assertGreater(r["wall_us"], 0)
            self.assertEqual(r["per_rank"]["0"]["runs"], 2)
            self.assertIn("--sweep streams=1,2 protocol=A,B pipeline=collective", r["command"])
            self.assertIn("--warmup 1", r["command"])
            self.assertEqual(r["pipeline"], "collective")
        self.assertTrue(runs[0]["serial"])
        tune = [r for r in recs if r["type"] == "tune"]
        self.assertEqual(len(tune), 1)
        self.assertEqual(len(tune[0]["predicted"]), 4)
        self.assertEqual({c["pipeline"] for c in tune[0]["predicted"]}, {"collective"})
        self.assertEqual(recs[-1]["launches"], 2)
        self.assertEqual(recs[-1]["points"], 8)

    def test_a_failing_sweep_is_run_again_one_configuration_at_a_time(self):
        saved = om.SHAPES["tiny"]["matmul_rs"]
        om.SHAPES["tiny"]["matmul_rs"] = [(66, 32, 16)]  # matmul_rs needs m divisible by S * D: 2 does, 4 not
        try:
            with tempfile.TemporaryDirectory() as d:
                code, _ = quiet(om.main, ["run", "--braid", BRAID, "--out", d, "--backend", "cpu", "--sizes", "tiny",
                                          "--ranks", "1", "--workloads", "matmul_rs", "--streams", "2,4", "--protocols",
                                          "A", "--pipelines", "collective", "--launches", "1", "--repeat", "1",
                                          "--no-torch"])
                runs = [r for r in records(os.path.join(d, "matrix.jsonl")) if r["type"] == "run"]
        finally:
            om.SHAPES["tiny"]["matmul_rs"] = saved
        self.assertEqual(code, 0)
        by = {r["streams"]: r for r in runs}
        self.assertEqual(sorted(by), [2, 4])
        # The sweep stops in its warm-up pass at S=4 (exit 2) before timing anything: each runs again
        # alone, S=2 then S=4, which fails alone too.
        self.assertEqual(by[2]["exit_code"], 0, by[2].get("error"))
        self.assertFalse(by[2]["sweep"])
        self.assertEqual(by[2]["retried_after_sweep_exit_code"], 2)
        self.assertEqual(by[4]["retried_after_sweep_exit_code"], 2)
        self.assertFalse(by[4]["sweep"])
        self.assertEqual(by[4]["exit_code"], 2)
        self.assertIn("divisible", by[4]["error"])
        self.assertNotIn("wall_us", by[4])

@unittest.skipUnless(HAVE_BRAID, "needs the braid binary")
class OfflineValidation(unittest.TestCase):
    def test_validation_of_stored_timelines(self):
        # No GPU here measures a timeline: the simulator's own prediction stands in for one, so the
        # comparison must come out exact, and the record must carry the point it belongs to.
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "timelines"))
            flags = ["--devices", "2", "--streams", "2", "--protocol", "B", "--m", "64", "--k", "32", "--n", "16",
                     "--dtype", "bf16"]
            sim_timeline(os.path.join(d, "timelines", "t.json"), "matmul_ar", flags)
            run = {"type": "run", "workload": "matmul_ar", "m": 64, "k": 32, "n": 16, "size": "tiny", "dtype": "bf16",
                   "ranks": 2, "streams": 2, "protocol": "B", "comm": "nccl", "serial": False, "launch": 1,
                   "exit_code": 0, "wall_us": 1.0, "timeline": "timelines/t.json", "timeline_run": 2}
            with open(os.path.join(d, "matrix.jsonl"), "w") as f:
                f.write(json.dumps({"type": "meta", "ranks": 2, "dtype": "bf16"}) + "\n" + json.dumps(run) + "\n")
            code, out = quiet(om.main, ["validate", "--braid", BRAID, "--results", d, "--machine", "h200",
                                        "--streams", "1,2", "--protocols", "B"])
            self.assertEqual(code, 0)
            recs = records(os.path.join(d, "validation-h200.jsonl"))
        val = [r for r in recs if r["type"] == "validation"]
        self.assertEqual(len(val), 1)
        v = val[0]
        self.assertEqual(v["exit_code"], 0, v.get("error"))
        self.assertEqual((v["workload"], v["streams"], v["protocol"], v["comm"], v["launch"]),
                         ("matmul_ar", 2, "B", "nccl", 1))
        self.assertAlmostEqual(v["makespan_error"], 0.0)
        self.assertAlmostEqual(v["measured_makespan_us"], v["predicted_makespan_us"])
        self.assertTrue(v["statements"])
        self.assertEqual(v["unmatched_measured"], 0)
        self.assertEqual(len([r for r in recs if r["type"] == "tune"]), 1)


if __name__ == "__main__":
    unittest.main()

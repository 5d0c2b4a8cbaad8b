"""bench/validate_timelines.py: the workload flags read from a timeline's program, and a real run
of the built `braid validate` over two recorded two-H100 timelines (python3 -m unittest discover
-s tests/bench; BRAID names the binary)."""
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import validate_timelines as vt  # noqa: E402

DATA = os.path.join(ROOT, "docs", "data", "h100x2-2026-11-25b")


class FlagsOf(unittest.TestCase):
    def test_reads_the_workload_and_its_flags(self):
        w, flags, info = vt.flags_of("ag_matmul (D=2, S=4, m=8192, k=8192, n=3584, protocol B, modulo, p2p)")
        self.assertEqual(w, "ag_matmul")
        self.assertEqual(flags, ["--devices", "2", "--streams", "4", "--m", "8192", "--k", "8192", "--n", "3584",
                                 "--protocol", "B", "--indexing", "modulo", "--pipeline", "p2p"])
        self.assertEqual(info, {"workload": "ag_matmul", "streams": 4, "protocol": "B", "pipeline": "p2p",
                                "shape": "8192x8192x3584"})

    def test_schedules_and_the_transport_are_read_as_braid_run_labels_them(self):
        w, flags, info = vt.flags_of("matmul_rs (D=2, S=4, P=1, m=16384, k=8192, n=4096, protocol A, modulo, "
                                     "collective, deferred waits, prefetch, copy engines)")
        self.assertEqual(w, "matmul_rs")
        self.assertEqual(flags[-6:], ["--pipeline", "collective", "--defer-waits", "--prefetch", "--comm-backend",
                                      "cuda"])
        self.assertIn("--pool", flags)
        self.assertEqual(info, {"workload": "matmul_rs", "streams": 4, "protocol": "A", "pipeline": "collective",
                                "shape": "16384x8192x4096", "schedule": "pool=1 defer-waits prefetch"})
        self.assertIsNone(vt.flags_of("matmul_rs (D=2, S=4, unheard of)"))

    def test_a_program_of_another_form_is_none(self):
        self.assertIsNone(vt.flags_of("my_file.hir"))


@unittest.skipUnless(os.environ.get("BRAID"), "BRAID (the built braid) is not set")
class RealRun(unittest.TestCase):
    def test_two_timelines_give_rows_a_summary_and_a_best_choice(self):
        with tempfile.TemporaryDirectory() as d:
            for f in ("tl_matmul_rs_coll.S1A.json", "tl_matmul_rs_coll.S2B.json"):
                shutil.copy(os.path.join(DATA, f), d)
            out = io.StringIO()
            sys.argv = ["validate_timelines.py", d, "--braid", os.environ["BRAID"], "--machine", "h100",
                        "--jsonl", os.path.join(d, "v.jsonl")]
            with redirect_stdout(out):
                vt.main()
            text = out.getvalue()
            self.assertIn("| matmul_rs_coll.S1A | 1287.0 |", text)
            self.assertIn("all: median |error|", text)
            self.assertIn("best choice agrees in", text)
            with open(os.path.join(d, "v.jsonl")) as f:
                rows = [l for l in f if l.strip()]
            self.assertEqual(len(rows), 2)


if __name__ == "__main__":
    unittest.main()

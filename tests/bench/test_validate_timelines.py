"""bench/validate_timelines.py: the workload flags read from a timeline's program, and a real run
of the built `braid validate` over two recorded two-H100 timelines (python3 -m unittest discover
-s tests/bench; BRAID names the binary)."""
import io
import json
import os
import shutil
import subprocess
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


class BadInput(unittest.TestCase):
    """Timelines that are not JSON objects or whose program or meta is of the wrong kind, a missing
    --braid, a --jsonl in a missing folder: a message naming the file (and field), a non-zero exit,
    no traceback, and no `braid validate` run (the --braid given is a stand-in that only answers
    --help)."""
    SCRIPT = os.path.join(ROOT, "bench", "validate_timelines.py")
    PROGRAM = "matmul_rs (D=2, S=1, m=16384, k=8192, n=4096, protocol A, modulo, collective)"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.braid = os.path.join(self.tmp.name, "braid")
        with open(self.braid, "w") as f:
            f.write('#!/bin/sh\n[ "$2" = --help ] && exit 0\necho "the stand-in braid ran" >&2\nexit 3\n')
        os.chmod(self.braid, 0o755)

    def run_script(self, d, *argv, braid=None):
        r = subprocess.run([sys.executable, self.SCRIPT, d, "--braid", braid or self.braid, *argv],
                           capture_output=True, text=True)
        self.assertNotIn("Traceback", r.stderr)
        self.assertNotIn("stand-in braid ran", r.stderr)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stderr

    def test_bad_timelines_name_the_file_and_field(self):
        good = {"program": self.PROGRAM, "meta": {"backend": "nccl"}, "ranks": 2}
        for name, text, why in (
                ("empty", "", "not valid JSON: Expecting value (line 1, column 1)"),
                ("cut", json.dumps(good, indent=1)[:40], "not valid JSON"),
                ("binary", b"\xff\xfe\x00", "not UTF-8 text"),
                ("array", "[1, 2]", "expected a JSON object (a braid run --timeline file), got an array"),
                ("number", "5", "expected a JSON object (a braid run --timeline file), got 5"),
                ("no_program", json.dumps({"meta": {}}), "program: missing"),
                ("program_number", json.dumps(dict(good, program=5)), "program: expected a string, got 5"),
                ("meta_string", json.dumps(dict(good, meta="x")), "meta: expected an object, got 'x'"),
                ("backend_number", json.dumps(dict(good, meta={"backend": 5})), "meta.backend: expected a string"),
                ("label", json.dumps(dict(good, program="matmul_rs [D=2]")), "cannot read the workload from program")):
            with self.subTest(name):
                d = os.path.join(self.tmp.name, name)
                os.makedirs(d)
                path = os.path.join(d, "tl_a.json")
                with open(path, "wb" if isinstance(text, bytes) else "w") as f:
                    f.write(text)
                self.assertIn(f"{path}: {why}", self.run_script(d))
        d = os.path.join(self.tmp.name, "folder")
        os.makedirs(os.path.join(d, "tl_a.json"))
        self.assertIn(f"{d}/tl_a.json: cannot read", self.run_script(d))

    def test_bad_flags(self):
        d = os.path.join(self.tmp.name, "one")
        os.makedirs(d)
        shutil.copy(os.path.join(DATA, "tl_matmul_rs_coll.S1A.json"), d)
        missing = os.path.join(self.tmp.name, "no_braid")
        self.assertIn(f"validate_timelines: --braid {missing}: no such file", self.run_script(d, braid=missing))
        out = os.path.join(self.tmp.name, "no_dir", "v.jsonl")
        self.assertIn(f"validate_timelines: --jsonl {out}: the folder", self.run_script(d, "--jsonl", out))


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

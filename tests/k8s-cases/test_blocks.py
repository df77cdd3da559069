#!/usr/bin/env python3
"""The rules of blocks.py and run_case.py's compare mode, on the recordings
themselves and on outputs made from them by hand: what is normalised agrees,
what is not differs, and an entry of the known list that no longer holds
fails the comparison.

usage: test_blocks.py CASES_DIR   (../shared/k8s-cases)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import blocks  # noqa: E402

CASES = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(HERE, "../../../shared/k8s-cases")
REC = os.path.join(CASES, "real-1.32.13")
KNOWN = os.path.join(HERE, "known-differences.txt")


def recording(name):
    with open(os.path.join(REC, name), encoding="utf-8") as f:
        return f.read()


def compare(script, text, known=KNOWN, suffix=".txt"):
    """run_case.py --compare on TEXT: exit status and output."""
    with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run([sys.executable, os.path.join(HERE, "run_case.py"), "--cases", CASES,
                            "--known", known, "--compare", f.name, script],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr
    finally:
        os.unlink(f.name)


def known_file(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
    f.write(text)
    f.close()
    return f.name


def judge(expected, got, known_text=""):
    path = known_file(known_text)
    try:
        known = blocks.read_known(path, "x.sh")
    finally:
        os.unlink(path)
    verdicts = blocks.judge(blocks.split_blocks(expected), blocks.split_blocks(got), known)
    return {v.name: v for v in verdicts}


class Normalise(unittest.TestCase):
    def test_what_varies_run_to_run_agrees(self):
        rec = recording("kubectl-probes.txt")
        varied = (rec.replace("kube-api-access-8qwsc", "kube-api-access-x7k2p")
                  .replace("dep-fcfb95cd4-djs8j   0/1     Pending   0          12s",
                           "dep-7d9c6b5f48-zq2xw   0/1     Pending   0          3m4s")
                  .replace("pod/p1                    0/1     Pending   0          28s",
                           "pod/p1                     0/1     Pending   0          2d"))
        self.assertNotEqual(rec, varied)
        v = judge(rec, varied)
        self.assertTrue(all(x.same for x in v.values()), [n for n, x in v.items() if not x.same])

    def test_times_and_uids(self):
        a = "--- b\nuid: 0b5c1f0e-8a7e-4a3f-9d0c-3f7c2e1a9b44 at 2026-12-01T10:00:00Z\n"
        b = "--- b\nuid: 9f8e7d6c-5b4a-4392-8170-fedcba987654 at 2027-01-02T03:04:05.123+09:00\n"
        self.assertTrue(judge(a, b)["b"].same)

    def test_a_real_change_differs(self):
        rec = recording("kubectl-probes.txt")
        for old, new in [("pod/p1 not labeled", "pod/p1 labeled"),
                         ("kube-api-access-8qwsc", "kube-api-access"),
                         ("   0/1     Pending   0          28s",
                          "   1/1     Running   0          28s"),
                         ("KIND:       Pod", "KIND:       Node")]:
            self.assertIn(old, rec)
            v = judge(rec, rec.replace(old, new))
            self.assertEqual(sum(not x.same for x in v.values()), 1, old)

    def test_words_are_not_name_suffixes(self):
        self.assertEqual(blocks.normalise_line("node-lifecycle ghost-pods kube-proxy"),
                         "node-lifecycle ghost-pods kube-proxy")
        self.assertEqual(blocks.normalise_line("15 s later, in 10 s: nr-1 g2"),
                         "15 s later, in 10 s: nr-1 g2")


class FailedCreate(unittest.TestCase):
    LINE = "--- d\nevents FailedCreate in 10 s: {} objects, count sum {}\n"

    def same(self, objects, count):
        return judge(self.LINE.format(1, 11), self.LINE.format(objects, count))["d"].same

    def test_one_object_whose_count_grows(self):
        for count in (2, 11, 25):
            self.assertTrue(self.same(1, count), count)

    def test_no_backoff_or_no_aggregation_differs(self):
        for objects, count in ((1, 1), (1, 26), (2, 11), (204462, 204486)):
            self.assertFalse(self.same(objects, count), (objects, count))
        self.assertFalse(judge(self.LINE.format(1, 11),
                               "--- d\nevents FailedCreate in 10 s:  objects, count sum \n")
                         ["d"].same)


class Blocks(unittest.TestCase):
    def test_names(self):
        b = blocks.split_blocks(recording("lifecycle-and-backoff.txt"))
        self.assertIn("taints of a new node once Ready", b)
        self.assertIn("events of pod short", b)
        self.assertIn("events of pod short (2)", b)
        self.assertEqual(len(b), 10)
        self.assertEqual(len(blocks.split_blocks(recording("kubectl-probes.txt"))), 21)

    def test_missing_and_extra_blocks_differ(self):
        v = judge("--- a\nx\n--- b\ny\n", "--- a\nx\n--- c\ny\n")
        self.assertTrue(v["a"].same)
        self.assertFalse(v["b"].ok)
        self.assertFalse(v["c"].ok)

    def test_output_before_the_first_block_differs(self):
        v = judge("--- a\nx\n", "error: boom\n--- a\nx\n")
        self.assertFalse(v["(before the first block)"].ok)


class KnownList(unittest.TestCase):
    def test_listed_difference_passes_and_agreement_fails(self):
        listed = "x.sh | a | fixed-by: issue 15 | because\n"
        self.assertTrue(judge("--- a\nx\n", "--- a\ny\n", listed)["a"].ok)
        v = judge("--- a\nx\n", "--- a\nx\n", listed)["a"]
        self.assertFalse(v.ok)
        self.assertIn("agrees now", v.problems[0])

    def test_setup_pattern_is_removed_and_must_match(self):
        setup = "x.sh | a | setup: \\s?Net=\\S+ | recording setup\n"
        self.assertTrue(judge("--- a\nReady=1\n", "--- a\nReady=1 Net=False/R \n", setup)["a"].ok)
        self.assertFalse(judge("--- a\nReady=1\n", "--- a\nReady=2 Net=False/R\n", setup)["a"].ok)
        stale = judge("--- a\nReady=1\n", "--- a\nReady=1\n", setup)["a"]
        self.assertFalse(stale.ok)
        self.assertIn("stale", stale.problems[0])

    def test_setup_and_fixed_by_on_one_block(self):
        both = ("x.sh | a | setup: \\s?Net=\\S+ | recording setup\n"
                "x.sh | a | fixed-by: issue 15 | no taints yet\n")
        self.assertTrue(judge("--- a\nt=u Ready=1\n", "--- a\nt= Ready=1 Net=F\n", both)["a"].ok)
        self.assertFalse(judge("--- a\nt=u Ready=1\n", "--- a\nt=u Ready=1 Net=F\n", both)["a"].ok)

    def test_bad_entries_name_their_line(self):
        for text, what in [("x.sh | a | because\n", "want `SCRIPT"),
                           ("x.sh | a | fixed soon | why\n", "KIND is"),
                           ("x.sh | a | setup: ( | why\n", "setup REGEX"),
                           ("x.sh | a | not served yet | w\nx.sh | a | fixed-by: issue 1 | w\n",
                            "listed twice")]:
            path = known_file("# comment\n\n" + text)
            try:
                with self.assertRaises(blocks.ListError) as e:
                    blocks.read_known(path, "x.sh")
                self.assertIn(f"{path}:3", str(e.exception))
                self.assertIn(what, str(e.exception))
            finally:
                os.unlink(path)

    def test_entry_for_a_block_the_recording_lacks(self):
        path = known_file("x.sh | no such block | fixed-by: issue 15 | why\n")
        try:
            known = blocks.read_known(path, "x.sh")
            with self.assertRaises(blocks.ListError) as e:
                blocks.judge({"a": ["--- a"]}, {"a": ["--- a"]}, known)
            self.assertIn(f"{path}:1", str(e.exception))
        finally:
            os.unlink(path)


class Recordings(unittest.TestCase):
    """run_case.py --compare on the recordings: every entry of the real
    list fails once its block agrees."""

    def entries(self, script):
        with open(KNOWN) as f:
            return [x for x in f if x.startswith(script + " | ")]

    def test_recording_against_itself_fails_every_entry(self):
        for script, name in (("kubectl-probes.sh", "kubectl-probes.txt"),
                             ("lifecycle-and-backoff.sh", "lifecycle-and-backoff.txt")):
            status, out = compare(script, recording(name))
            self.assertEqual(status, 1, out)
            fails = [x for x in out.splitlines() if x.startswith("FAIL ")]
            self.assertEqual(len(fails), len(self.entries(script)), out)
            self.assertTrue(all("agrees now" in x or "stale" in x for x in fails), out)

    def test_unlisted_difference_fails_with_its_diff(self):
        rec = recording("kubectl-probes.txt")
        empty = known_file("")
        self.addCleanup(os.unlink, empty)
        status, out = compare("kubectl-probes.sh",
                              rec.replace("pod/p1 not labeled", "pod/p1 labeled"), known=empty)
        self.assertEqual(status, 1)
        self.assertIn("FAIL kubectl-probes.sh: block `label no-op` differs", out)
        self.assertIn("-pod/p1 not labeled\n+pod/p1 labeled", out)

    def test_scenarios_by_compare_py(self):
        rec = recording("scenarios.jsonl")
        self.assertEqual(compare("scenarios.py", rec, suffix=".jsonl")[0], 0)
        obs = [json.loads(x) for x in rec.splitlines()]
        obs[0]["value"]["bound"] = not obs[0]["value"]["bound"]
        changed = "\n".join(json.dumps(o) for o in obs) + "\n"
        status, out = compare("scenarios.py", changed, suffix=".jsonl")
        self.assertEqual(status, 1, out)
        self.assertIn(f"FAIL scenarios.py: block `{obs[0]['case']} {obs[0]['what']}` differs", out)
        self.assertIn("25/26 identical", out)
        listed = known_file(f"scenarios.py | {obs[0]['case']} {obs[0]['what']} "
                            "| fixed-by: issue 1 | w\n")
        self.addCleanup(os.unlink, listed)
        self.assertEqual(compare("scenarios.py", changed, known=listed, suffix=".jsonl")[0], 0)
        self.assertEqual(compare("scenarios.py", rec, known=listed, suffix=".jsonl")[0], 1)


if __name__ == "__main__":
    unittest.main(verbosity=1)

#!/usr/bin/env python3
"""`gpuop containerd merge` on the config sets of tests/data/containerd/merge,
each a state where the prediction was wrong (issue 16, case 9), checked
against what the case expects and, where the installed containerd is of a
version the case names, against the real `containerd config dump`.

Every case directory holds config.toml (imports written as <dir>/...), its
drop-ins, and case.json:

  why        the state and what went wrong
  versions   per containerd line ("1.6", "2.1", ...):
               exit              gpuop's exit status
               lost, lints       [[FILE, LINE, CODE], ...], FILE relative to
                                 the case: exactly these notes (when given)
               predicted         {"CRI|a|b": value}: keys of predicted.config
               predicted_absent  ["CRI|a|b"]: keys it must not have
  real       facts of the real dump that the case is about (checked for the
             installed version only; they guard the case against a misread
             of containerd): absent keys, equal values, the runtime set, the
             files in `imports` (1.x lists the files it loaded)

For the installed version the whole prediction is also compared with the
real dump key by key, as differential_test.py does (cdcompare.compare_dump).
"CRI" stands for the version's CRI table. containerd is looked up on PATH;
without it only the predictions are checked (a SKIP line says so).

usage: fixtures_test.py GPUOP CASES_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdcompare as C  # noqa: E402


def copy_case(src, dst):
    """The case with <dir> replaced by where it now is, as measured."""
    shutil.copytree(src, dst)
    for root, _, files in os.walk(dst):
        for name in files:
            if not name.endswith(".toml"):
                continue
            path = os.path.join(root, name)
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace("<dir>", dst))


def notes(pred, kind, d):
    return sorted(
        [os.path.relpath(n["file"], d) if n.get("file") else None, n["line"], n["code"]]
        for n in pred.get(kind, [])
    )


def check_prediction(ck, pred, rc, want, version, d):
    if rc != want["exit"]:
        ck.fail("exit", f"gpuop exit {rc}, expected {want['exit']}")
    if pred.get("schema") != "gpuop.containerd.merge/v1" or pred.get("holds") is not (rc == 0):
        ck.fail("json", f"schema {pred.get('schema')!r}, holds {pred.get('holds')!r} with exit {rc}")
    for kind in ("lost", "lints"):
        if kind in want and notes(pred, kind, d) != sorted(want[kind]):
            ck.fail(kind, f"{notes(pred, kind, d)}, expected {sorted(want[kind])}")
    cfg = pred["predicted"]["config"]
    for spec, value in want.get("predicted", {}).items():
        got = C.get(cfg, C.expand_path(spec, version))
        if not C.same(got, value):
            ck.fail("predicted", f"{spec}: {C.show(got)}, expected {C.show(value)}")
    for spec in want.get("predicted_absent", []):
        got = C.get(cfg, C.expand_path(spec, version))
        if got is not C.MISSING:
            ck.fail("predicted", f"{spec}: {C.show(got)}, expected absent")


def check_real_facts(ck, real, facts, version, d):
    """The case's own reading of the real dump (not of gpuop)."""
    for spec in facts.get("absent", []):
        got = C.get(real, C.expand_path(spec, version))
        if got is not C.MISSING:
            ck.fail("data", f"real dump has {spec} = {C.show(got)}; the case says containerd drops it")
    for spec, value in facts.get("equal", {}).items():
        got = C.get(real, C.expand_path(spec, version))
        if not C.same(got, value):
            ck.fail("data", f"real dump {spec} = {C.show(got)}, the case says {C.show(value)}")
    if "runtimes" in facts:
        rts = C.get(real, C.cri_runtime_path(version) + ("containerd", "runtimes"))
        got = sorted(rts) if isinstance(rts, dict) else []
        if got != sorted(facts["runtimes"]):
            ck.fail("data", f"real runtimes {got}, the case says {sorted(facts['runtimes'])}")
    if "imports" in facts and C.is_v1(version):
        got = sorted(os.path.relpath(p, d) for p in real.get("imports", []))
        if got != sorted(facts["imports"]):
            ck.fail("data", f"real dump loaded {got}, the case says {sorted(facts['imports'])}")


def installed(containerd):
    if not containerd:
        return None
    out = subprocess.run([containerd, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"\sv?(\d+)\.(\d+)\.\d+", " " + out)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    gpuop, cases_dir = os.path.abspath(argv[1]), argv[2]
    containerd = shutil.which("containerd")
    have = installed(containerd)
    if not have:
        print("SKIP the real dumps: containerd is not on PATH (apt-get install containerd)")
    work = os.path.realpath(tempfile.mkdtemp(prefix="gpuop-cdfix-"))
    passed = failed = 0
    try:
        empty = os.path.join(work, "cwd")
        os.makedirs(empty)
        defaults = None
        if have:
            dd = os.path.join(work, "defaults")
            os.makedirs(dd)
            with open(os.path.join(dd, "config.toml"), "w") as f:
                f.write("version = 2\n")
            out, rc, err = C.run_real_dump(containerd, os.path.join(dd, "config.toml"), empty)
            if rc != 0:
                print(f"FAIL `config dump` of an empty config (exit {rc}): {C.error_line(err)}")
                return 1
            defaults = tomllib.loads(out)
            defaults.pop("imports", None)
        for name in sorted(os.listdir(cases_dir)):
            src = os.path.join(cases_dir, name)
            if not os.path.isfile(os.path.join(src, "case.json")):
                continue
            with open(os.path.join(src, "case.json")) as f:
                case = json.load(f)
            d = os.path.join(work, name)
            copy_case(src, d)
            cfg = os.path.join(d, "config.toml")
            for version, want in case["versions"].items():
                ck = C.Checker()
                pred, rc, perr, _ = C.run_gpuop(gpuop, cfg, version, empty)
                if pred is None:
                    ck.fail("run", f"no JSON from gpuop (exit {rc}): {perr.strip()[-300:]}")
                else:
                    check_prediction(ck, pred, rc, want, version, d)
                    if version == have:
                        out, drc, err = C.run_real_dump(containerd, cfg, empty)
                        if drc != 0:
                            ck.fail("run", f"real dump failed (exit {drc}): {C.error_line(err)}")
                        else:
                            real = tomllib.loads(out)
                            check_real_facts(ck, real, case.get("real", {}), version, d)
                            C.compare_dump(ck, real, pred, version, defaults, [("imports",)])
                label = f"{name} {version}{' (real dump)' if version == have else ''}"
                if ck.failures:
                    failed += 1
                    C.print_failures(label, ck.failures, lambda m: m.replace(d, "<dir>"))
                else:
                    passed += 1
                    print(f"ok {label}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

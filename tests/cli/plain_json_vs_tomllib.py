#!/usr/bin/env python3
"""`gpuop toml json` (plain) against Python's tomllib on every valid case.

The tagged form is judged by the official suite; this checks the plain form
people and jq read: every table, array and scalar must match what tomllib
decodes from the same bytes (a leading BOM decoded as utf-8-sig, as the suite
README says). Date-times print as RFC 3339 strings, inf/nan as strings.

usage: plain_json_vs_tomllib.py GPUOP TOML_TEST_DIR
"""
import datetime
import json
import math
import os
import re
import struct
import subprocess
import sys
import tomllib


def truncate_fraction(text):
    # tomllib keeps microseconds, truncating further digits; so do we here.
    return re.sub(r"\.(\d{1,6})\d*", r".\1", text)


def same(want, have, where):
    if isinstance(want, dict):
        if not isinstance(have, dict) or set(want) != set(have):
            return f"{where}: keys {sorted(want)} != {have!r}"
        for k in want:
            err = same(want[k], have[k], f"{where}.{k}")
            if err:
                return err
        return None
    if isinstance(want, list):
        if not isinstance(have, list) or len(want) != len(have):
            return f"{where}: array {want!r} != {have!r}"
        for i, (w, h) in enumerate(zip(want, have)):
            err = same(w, h, f"{where}[{i}]")
            if err:
                return err
        return None
    if isinstance(want, bool) or isinstance(want, str):
        ok = type(want) is type(have) and want == have
    elif isinstance(want, int):
        ok = type(have) is int and want == have
    elif isinstance(want, float):
        if math.isnan(want):
            ok = have == "nan"
        elif math.isinf(want):
            ok = have == ("inf" if want > 0 else "-inf")
        else:
            ok = isinstance(have, (int, float)) and struct.pack("<d", float(have)) == struct.pack("<d", want)
    elif isinstance(want, datetime.datetime):
        ok = isinstance(have, str) and datetime.datetime.fromisoformat(truncate_fraction(have)) == want
        if ok and want.tzinfo is not None:
            ok = datetime.datetime.fromisoformat(truncate_fraction(have)).utcoffset() == want.utcoffset()
        if ok and want.tzinfo is None:
            ok = datetime.datetime.fromisoformat(truncate_fraction(have)).tzinfo is None
    elif isinstance(want, datetime.date):
        ok = have == want.isoformat()
    elif isinstance(want, datetime.time):
        ok = isinstance(have, str) and datetime.time.fromisoformat(truncate_fraction(have)) == want
    else:
        ok = False
    return None if ok else f"{where}: tomllib {want!r}, gpuop {have!r}"


def main():
    gpuop, suite = sys.argv[1], sys.argv[2]
    failed = passed = 0
    for top, _, files in os.walk(os.path.join(suite, "valid")):
        for name in sorted(files):
            if not name.endswith(".toml"):
                continue
            path = os.path.join(top, name)
            raw = open(path, "rb").read()
            want = tomllib.loads(raw.decode("utf-8-sig"))
            run = subprocess.run([gpuop, "toml", "json", path], capture_output=True, timeout=20)
            err = None
            if run.returncode != 0:
                err = f"exit {run.returncode}: {run.stderr.decode(errors='replace')}"
            else:
                err = same(want, json.loads(run.stdout), "(root)")
            if err:
                failed += 1
                print(f"FAIL {os.path.relpath(path, suite)}: {err}")
            else:
                passed += 1
    if passed != 210:
        print(f"expected the 210 valid cases, found {passed + failed}")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

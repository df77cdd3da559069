#!/usr/bin/env python3
"""Benchmark harness for Python 3's tomllib, the baseline for gpuop's parser.

    tomllib_bench.py --time FILE   warm-up parse, then BENCH_RUNS (default 5)
                                   timed tomllib.loads() calls
    tomllib_bench.py --peak FILE   read, decode and parse once; peak RSS

Same interface and output as toml_bench.c. The file is read and decoded
('utf-8') once, outside the timed region; only tomllib.loads() is timed, with
CLOCK_MONOTONIC, and the result is dropped after the clock stops. As in
gen_bench.py --time, gc.collect() runs before each timed parse (outside the
clock) and the collector stays enabled during it. (gen_bench.py --time itself
is not used: it times data.decode() together with loads() and defaults to 7
runs.) A parse error exits 1, usage and I/O errors exit 2.
"""

import gc
import os
import resource
import sys
import time
import tomllib

PROG = "tomllib_bench.py"


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print("%s: %s: %s" % (PROG, path, e.strerror), file=sys.stderr)
        sys.exit(2)
    try:
        return len(data), data.decode("utf-8")
    except UnicodeDecodeError as e:
        print("%s: parse failed: %s: not UTF-8: %s" % (PROG, path, e), file=sys.stderr)
        sys.exit(1)


def bench_runs():
    s = os.environ.get("BENCH_RUNS", "")
    if not s:
        return 5
    if not s.isdigit() or not 1 <= int(s) <= 100000:
        print("%s: BENCH_RUNS must be a positive integer, got '%s'" % (PROG, s), file=sys.stderr)
        sys.exit(2)
    return int(s)


def parse_or_die(text, path):
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        print("%s: parse failed: %s: %s" % (PROG, path, e), file=sys.stderr)
        sys.exit(1)


def walk(root):
    """nodes, keybytes, strbytes, intsum -- the same fingerprint as the C harnesses."""
    nodes = keybytes = strbytes = intsum = 0
    stack = [root]
    while stack:
        v = stack.pop()
        nodes += 1
        t = type(v)
        if t is dict:
            for k, x in v.items():
                keybytes += len(k.encode("utf-8"))
                stack.append(x)
        elif t is list:
            stack.extend(v)
        elif t is str:
            strbytes += len(v.encode("utf-8"))
        elif t is int:  # bool is a subclass of int, hence `type(v) is int`
            intsum += v
    return nodes, keybytes, strbytes, intsum & ((1 << 64) - 1)


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) * 1e-9


def do_time(path):
    runs = bench_runs()
    size, text = read_text(path)
    doc = parse_or_die(text, path)  # warm-up, not timed
    nodes, keybytes, strbytes, intsum = walk(doc)
    del doc
    times = []
    for _ in range(runs):
        gc.collect()
        t0 = now()
        doc = parse_or_die(text, path)
        times.append(now() - t0)
        del doc
    times.sort()
    mid = runs // 2
    median = times[mid] if runs % 2 else (times[mid - 1] + times[mid]) / 2
    print("bytes=%d runs=%d median=%.9f min=%.9f nodes=%d keybytes=%d strbytes=%d intsum=%d"
          % (size, runs, median, times[0], nodes, keybytes, strbytes, intsum))


def do_peak(path):
    size, text = read_text(path)
    doc = parse_or_die(text, path)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print("bytes=%d maxrss_kib=%d" % (size, maxrss))
    del doc


def main(argv):
    if len(argv) == 2 and argv[0] == "--time":
        do_time(argv[1])
    elif len(argv) == 2 and argv[0] == "--peak":
        do_peak(argv[1])
    else:
        print("usage: %s --time FILE | --peak FILE   (BENCH_RUNS=N sets timed runs)" % PROG,
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

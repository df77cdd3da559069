#!/usr/bin/env python3
"""Turns the harness outputs collected by bench/run.sh into the table and JSON.

    report.py RESULTS_DIR JSON_OUT

RESULTS_DIR holds, for each parser P (gpuop, tomllib, tomlpp), mode M (time,
peak) and corpus file F, the files P.M.F.out (one key=value line), P.M.F.err
and P.M.F.rc (exit status), plus files.txt (the corpus files in order) and
runs.txt. Prints the table and one line per target on stdout, writes JSON_OUT.
Exit status: 0 when every parser parsed every file and produced the same tree
fingerprint, 1 otherwise (the table is printed either way). Targets that are
not met do not change the exit status: they are results, not errors.
"""

import datetime
import json
import os
import platform
import sys

PARSERS = (("gpuop", "gpuop"), ("tomllib", "tomllib"), ("tomlpp", "toml++"))
FINGERPRINT = ("nodes", "keybytes", "strbytes", "intsum")
MB = 1e6
SPEED_TARGET = 2.0   # gpuop throughput / toml++ throughput, on every file
MEMORY_TARGET = 3.0  # gpuop peak RSS / input size, on every file


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return default


def value(text):
    """A number as a float; other text as it is."""
    try:
        return float(text)
    except ValueError:
        return text


def words(text):
    """The KEY=VALUE words of a text (the load client's result lines)."""
    return {k: value(v) for k, v in (x.split("=", 1) for x in text.split() if "=" in x)}


def outcome(results, parser, mode, name):
    """(dict of key=value, None) on success, (None, error text) on failure."""
    base = os.path.join(results, "%s.%s.%s" % (parser, mode, name))
    rc = read(base + ".rc", "missing").strip()
    out = read(base + ".out").strip()
    err = read(base + ".err").strip()
    if rc != "0":
        why = "exit status %s" % rc if rc.isdigit() else "not run"
        if rc.isdigit() and int(rc) > 128:
            why = "killed by signal %d" % (int(rc) - 128)
        return None, "%s (%s)" % (err or "no message", why)
    try:
        kv = dict(item.split("=", 1) for item in out.split())
        return {k: (float(v) if "." in v else int(v)) for k, v in kv.items()}, None
    except ValueError:
        return None, "unreadable harness output: %r" % out[:200]


def cpu_model():
    for line in read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def other_cpu(results):
    """CPU time that processes other than our harnesses used while they ran,
    from the /proc/stat, /proc/uptime and `times` snapshots run.sh took."""
    snaps = []
    for when in ("start", "end"):
        lines = read(os.path.join(results, "cpu." + when)).splitlines()
        try:
            f = [int(x) for x in lines[0].split()[1:]]
            busy = sum(f[:3]) + sum(f[5:8])  # user nice system irq softirq steal
            wall = float(lines[1].split()[0])

            def secs(t):  # bash `times`: 1m2.345s
                m, s = t.rstrip("s").split("m")
                return 60 * float(m) + float(s)
            ours = sum(secs(t) for t in lines[3].split())  # children: user sys
        except (IndexError, ValueError):
            return None
        snaps.append((busy / os.sysconf("SC_CLK_TCK"), wall, ours))
    (b0, w0, o0), (b1, w1, o1) = snaps
    available = (w1 - w0) * (os.cpu_count() or 1)
    other = max(0.0, (b1 - b0) - (o1 - o0))
    return {"wall_s": w1 - w0, "our_cpu_s": o1 - o0, "other_cpu_s": other,
            "available_cpu_s": available, "other_share": other / available if available else 0.0}


def main(argv):
    if len(argv) != 2:
        print("usage: report.py RESULTS_DIR JSON_OUT", file=sys.stderr)
        return 2
    results, json_out = argv
    files = read(os.path.join(results, "files.txt")).split()
    runs = int(read(os.path.join(results, "runs.txt"), "0").strip() or 0)

    rows, errors, mismatches = [], [], []
    for name in files:
        row = {"file": name, "bytes": None, "parsers": {}}
        for key, label in PARSERS:
            p = {}
            t, terr = outcome(results, key, "time", name)
            m, merr = outcome(results, key, "peak", name)
            for mode, e in (("time", terr), ("peak", merr)):
                if e:
                    p.setdefault("errors", {})[mode] = e
                    errors.append("%s failed on %s (--%s): %s" % (label, name, mode, e))
            if t:
                row["bytes"] = t["bytes"]
                p.update(median_s=t["median"], min_s=t["min"], runs=t["runs"],
                         mb_per_s=t["bytes"] / MB / t["median"],
                         mb_per_s_best=t["bytes"] / MB / t["min"],
                         fingerprint={k: t[k] for k in FINGERPRINT})
                if "footprint" in t:
                    p["arena_footprint_bytes"] = t["footprint"]
            if m:
                row["bytes"] = m["bytes"]
                p.update(peak_rss_kib=m["maxrss_kib"],
                         peak_rss_mb=m["maxrss_kib"] * 1024 / MB,
                         peak_rss_over_input=m["maxrss_kib"] * 1024 / m["bytes"]
                         if m["bytes"] else None)
                if "footprint" in m:
                    p["arena_footprint_bytes"] = m["footprint"]
            row["parsers"][label] = p
        g, py, cc = (row["parsers"][k] for k in ("gpuop", "tomllib", "toml++"))
        row["gpuop_over_tomllib"] = (g["mb_per_s"] / py["mb_per_s"]
                                     if "mb_per_s" in g and "mb_per_s" in py else None)
        row["gpuop_over_tomlpp"] = (g["mb_per_s"] / cc["mb_per_s"]
                                    if "mb_per_s" in g and "mb_per_s" in cc else None)
        for other, key in (("tomllib", "gpuop_over_tomllib_best"), ("toml++", "gpuop_over_tomlpp_best")):
            o = row["parsers"][other]
            row[key] = (g["mb_per_s_best"] / o["mb_per_s_best"]
                        if "mb_per_s_best" in g and "mb_per_s_best" in o else None)
        # All three must build the same tree; tomllib and toml++ both pass the
        # whole TOML 1.0 suite, so they are the reference.
        prints = {lbl: p["fingerprint"] for lbl, p in row["parsers"].items() if "fingerprint" in p}
        ref = prints.get("tomllib") or prints.get("toml++")
        row["fingerprints_agree"] = all(fp == ref for fp in prints.values())
        row["gpuop_tree_ok"] = "gpuop" in prints and prints["gpuop"] == ref
        if not row["fingerprints_agree"]:
            for lbl, fp in prints.items():
                if fp != ref:
                    diff = ", ".join("%s %s vs %s" % (k, fp[k], ref[k])
                                     for k in FINGERPRINT if fp[k] != ref[k])
                    mismatches.append("%s built a different tree for %s than tomllib/toml++: %s"
                                      % (lbl, name, diff))
        rows.append(row)

    # ---- targets ----
    def target(values, better_is_low, limit):
        known = [(v, f) for v, f in values if v is not None]
        missing = [f for v, f in values if v is None]
        if not known:
            return {"met": False, "worst": None, "worst_file": None, "no_result": missing}
        worst, worst_file = (max if better_is_low else min)(known)
        ok = worst <= limit if better_is_low else worst >= limit
        return {"met": ok and not missing, "worst": worst, "worst_file": worst_file,
                "no_result": missing}

    # A file on which gpuop built the wrong tree has no valid speed for it.
    speed = target([(r["gpuop_over_tomlpp"] if r["gpuop_tree_ok"] else None, r["file"])
                    for r in rows], False, SPEED_TARGET)
    memory = target([(r["parsers"]["gpuop"].get("peak_rss_over_input"), r["file"]) for r in rows],
                    True, MEMORY_TARGET)

    # ---- table ----
    head = ("file", "size MB", "gpuop MB/s", "tomllib MB/s", "toml++ MB/s", "gpuop/tomllib",
            "gpuop/toml++", "gpuop peak MB", "tomllib peak MB", "toml++ peak MB", "gpuop arena MB")
    table = [head]
    for r in rows:
        def speed_cell(lbl):
            p = r["parsers"][lbl]
            return "%.1f" % p["mb_per_s"] if "mb_per_s" in p else \
                ("FAILED" if p.get("errors") else "-")

        def peak_cell(lbl):
            p = r["parsers"][lbl]
            if "peak_rss_mb" not in p:
                return "FAILED" if p.get("errors") else "-"
            return "%.1f (%.2fx)" % (p["peak_rss_mb"], p["peak_rss_over_input"])

        arena = r["parsers"]["gpuop"].get("arena_footprint_bytes")
        table.append((
            r["file"],
            "%.2f" % (r["bytes"] / MB) if r["bytes"] is not None else "-",
            speed_cell("gpuop"), speed_cell("tomllib"), speed_cell("toml++"),
            "%.2fx" % r["gpuop_over_tomllib"] if r["gpuop_over_tomllib"] is not None else "-",
            "%.2fx" % r["gpuop_over_tomlpp"] if r["gpuop_over_tomlpp"] is not None else "-",
            peak_cell("gpuop"), peak_cell("tomllib"), peak_cell("toml++"),
            "%.1f" % (arena / MB) if arena is not None else "-",
        ))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        print("  ".join(cells).rstrip())
    print()
    print("MB = 10^6 bytes. MB/s from the median of %d timed in-process parses after one warm-up"
          % runs)
    print("(best run in toml.json). Peak = ru_maxrss of a process that reads the file and parses it"
          " once,")
    print("(Nx) = peak / input size. Arena = toml_doc_footprint().")
    busy = other_cpu(results)
    if busy:
        print("Other processes used %.1f CPU-s of %.1f available (%.0f%%) during the run%s" % (
            busy["other_cpu_s"], busy["available_cpu_s"], 100 * busy["other_share"],
            ": timings are noisy, compare on an idle machine" if busy["other_share"] > 0.05
            else "."))
    print()

    def verdict(t, what):
        if t["worst"] is None:
            return "NOT met (no result)"
        s = "%s (worst %s %.2fx on %s" % ("met" if t["met"] else "NOT met", what, t["worst"],
                                         t["worst_file"])
        if t["no_result"]:
            s += "; no result for %s" % ", ".join(t["no_result"])
        return s + ")"

    print("target gpuop >= 2x toml++ on every file: %s" % verdict(speed, "ratio"))
    print("target peak memory <= 3x input: %s" % verdict(memory, "peak/input"))

    if mismatches or errors:
        print()
        print("PARSER FAILURES (the numbers above are incomplete):")
        for line in mismatches + errors:
            print("  " + line)

    doc = {
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpu": cpu_model(), "cpus": os.cpu_count(), "kernel": platform.release(),
                    "python": platform.python_version()},
        "runs": runs,
        "machine_load": busy,
        "units": {"mb": "10^6 bytes", "mb_per_s": "bytes / 10^6 / median seconds",
                  "mb_per_s_best": "bytes / 10^6 / min seconds",
                  "peak_rss_kib": "getrusage(RUSAGE_SELF).ru_maxrss of a separate process "
                                  "that reads the file and parses it once"},
        "files": rows,
        "targets": {
            "gpuop_vs_tomlpp_speed": dict(speed, description="gpuop >= 2x toml++ on every file",
                                          limit=SPEED_TARGET),
            "gpuop_peak_memory": dict(memory, description="gpuop peak RSS <= 3x input on every file",
                                      limit=MEMORY_TARGET),
        },
        "errors": errors,
        "fingerprint_mismatches": mismatches,
    }
    with open(json_out + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(json_out + ".tmp", json_out)
    return 1 if errors or mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

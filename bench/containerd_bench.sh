#!/usr/bin/env bash
# containerd merge benchmark: `gpuop containerd merge` against the real
# `containerd --config X config dump`, whole processes.
#
#   bench/containerd_bench.sh [BUILD]      (bench/run.sh calls it; BUILD defaults to build)
#
# Two config sets:
#   lab      the incident's files (examples/incident/etc/containerd), copied to a
#            temporary directory with the import rewritten to that copy
#   50-dropins  a generated main config plus 50 drop-ins (runtimes, options,
#            CNI, top-level scalars)
# For each set and each tool: 1 warm-up run, then CONTAINERD_BENCH_RUNS (default
# 20) timed runs (wall clock around fork+exec+wait, output to /dev/null), median
# and min, and the peak RSS over those runs (wait4's ru_maxrss of each process).
# The runs are started by a tiny C runner compiled here (BUILD/bench/cdrun): a
# child's ru_maxrss includes the RSS its parent had when it forked, so a Python
# launcher would add ~10 MiB to every process measured. gpuop
# runs `containerd merge --config X --containerd 1.6` (text output); containerd
# must be installed (`scripts/setup-deps.sh bench`). Prints a table with the
# ratio containerd/gpuop and whether the targets (>= 10x faster, peak <= 4 MiB)
# are met; the same numbers go to BUILD/bench/containerd.json.
#
# Exit status: 0 on success (whether or not the targets are met), 1 when a tool
# failed on a set, 2 on setup errors.
set -euo pipefail

BENCH_NAME="containerd-bench"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup "$@"
gpuop=$build/gpuop
[ -x "$gpuop" ] || die "$gpuop not found; build the project first ('make build')"
python=${PYTHON:-python3}
command -v "$python" >/dev/null || die "'$python' not found; run 'scripts/setup-deps.sh bench'"
containerd=$(command -v containerd) ||
    die "containerd not found; run 'scripts/setup-deps.sh bench' (Debian package containerd)"
cc=${CC:-cc}
command -v "$cc" >/dev/null || die "C compiler '$cc' not found; run 'scripts/setup-deps.sh build'"
runs=${CONTAINERD_BENCH_RUNS:-20}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "CONTAINERD_BENCH_RUNS must be a positive integer, got '$runs'"

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuop-cdbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
work=$(cd "$work" && pwd -P)

# ---- (a) the lab files, import rewritten to the copy ----
lab=$work/lab
mkdir -p "$lab"
cp -R "$root/examples/incident/etc/containerd/." "$lab/"
sed -i "s|\"/etc/containerd/conf.d/\*.toml\"|\"$lab/conf.d/*.toml\"|" "$lab/config.toml"
grep -q "$lab/conf.d/\*.toml" "$lab/config.toml" ||
    die "could not rewrite the import of $lab/config.toml"

# ---- (b) a main config plus 50 drop-ins ----
gen=$work/50-dropins
mkdir -p "$gen/conf.d"
cri='plugins."io.containerd.grpc.v1.cri"'
{
    echo 'version = 2'
    echo "imports = [\"$gen/conf.d/*.toml\"]"
    echo 'root = "/var/lib/containerd"'
    echo 'oom_score = -999'
    echo "[$cri]"
    echo '  max_container_log_line_size = 16384'
    echo "[$cri.containerd]"
    echo '  default_runtime_name = "runc"'
    echo "[$cri.containerd.runtimes.runc]"
    echo '  runtime_type = "io.containerd.runc.v2"'
    echo "  [$cri.containerd.runtimes.runc.options]"
    echo '    SystemdCgroup = true'
    echo "[$cri.cni]"
    echo '  bin_dir = "/opt/cni/bin"'
    echo '  conf_dir = "/etc/cni/net.d"'
} >"$gen/config.toml"
for i in $(seq -w 1 50); do
    {
        [ $((10#$i % 3)) -eq 0 ] && echo 'version = 2'
        [ $((10#$i % 7)) -eq 0 ] && echo "oom_score = $((10#$i))"
        [ $((10#$i % 11)) -eq 0 ] && echo "disabled_plugins = [\"io.containerd.snapshotter.v1.zfs$i\"]"
        echo "[$cri.containerd.runtimes.rt-$i]"
        echo '  runtime_type = "io.containerd.runc.v2"'
        echo '  pod_annotations = ["example.com/*"]'
        echo "  [$cri.containerd.runtimes.rt-$i.options]"
        echo "    BinaryName = \"/opt/rt-$i/bin/runtime\""
        echo "    SystemdCgroup = $([ $((10#$i % 2)) -eq 0 ] && echo true || echo false)"
        if [ $((10#$i % 5)) -eq 0 ]; then
            echo "[$cri.cni]"
            echo "  conf_dir = \"/etc/cni/net-$i.d\""
        fi
    } >"$gen/conf.d/$i-dropin.toml"
done

# ---- the runner: RUNS CMD... -> "EXIT MEDIAN_NS MIN_NS PEAK_KIB" ----
mkdir -p "$build/bench"
cdrun=$build/bench/cdrun
cat >"$work/cdrun.c" <<'C'
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: cdrun RUNS CMD [ARG...]\n", stderr);
        return 2;
    }
    int runs = atoi(argv[1]);
    long long *t = calloc(runs > 0 ? (size_t)runs : 1, sizeof *t);
    int devnull = open("/dev/null", O_RDWR);
    if (runs < 1 || !t || devnull < 0) return 2;
    long peak = 0;
    int first = -1;
    for (int i = -1; i < runs; i++) { /* i = -1: warm-up */
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            dup2(devnull, 0), dup2(devnull, 1), dup2(devnull, 2);
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int st;
        struct rusage ru;
        if (wait4(pid, &st, 0, &ru) < 0) return 2;
        clock_gettime(CLOCK_MONOTONIC, &b);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (first < 0) first = rc;
        if (rc != first) first = 255; /* not the same every time */
        if (i < 0) continue;
        t[i] = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
        if (ru.ru_maxrss > peak) peak = ru.ru_maxrss;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    long long median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    printf("%d %lld %lld %ld\n", first, median, t[0], peak);
    return 0;
}
C
"$cc" -O2 -std=c11 -Wall -Wextra -o "$cdrun" "$work/cdrun.c" || die "could not build $cdrun"

echo "containerd-bench: $("$containerd" --version); $runs runs each" >&2
status=0
"$python" - "$cdrun" "$gpuop" "$containerd" "$runs" "$build/bench/containerd.json" "$work" "$lab" "$gen" <<'PY' || status=$?
import json, os, subprocess, sys

cdrun, gpuop, containerd, runs, out_json, work = sys.argv[1:7]
sets = [("lab", sys.argv[7]), ("50-dropins", sys.argv[8])]
cwd = os.path.join(work, "cwd")
os.makedirs(cwd, exist_ok=True)
env = dict(os.environ, LC_ALL="C.UTF-8")
env.pop("LANGUAGE", None)


def measure(cmd, ok):
    """1 warm-up + RUNS runs through cdrun: median/min wall time, peak RSS."""
    p = subprocess.run([cdrun, runs] + cmd, cwd=cwd, env=env, capture_output=True, text=True)
    try:
        rc, median, low, peak = (int(x) for x in p.stdout.split())
    except ValueError:
        return {"error": f"cdrun failed (exit {p.returncode}): {p.stderr.strip()}"}
    if rc not in ok:
        how = "varies between runs" if rc == 255 else "every run"
        return {"error": f"exit {rc} ({how}): {' '.join(cmd)}"}
    return {"median_ms": median / 1e6, "min_ms": low / 1e6, "peak_kib": peak}


results = []
failed = False
for name, d in sets:
    config = os.path.join(d, "config.toml")
    nfiles = 1 + len([f for f in os.listdir(os.path.join(d, "conf.d")) if f.endswith(".toml")])
    # merge: 0 the config loads, 1 it does not (the lab's CRI is refused on 1.6); 2 = cannot tell
    g = measure([gpuop, "containerd", "merge", "--config", config, "--containerd", "1.6"], (0, 1))
    c = measure([containerd, "--config", config, "config", "dump"], (0,))
    for tool, r in (("gpuop", g), ("containerd", c)):
        if "error" in r:
            print(f"containerd-bench: {tool} failed on {name}: {r['error']}", file=sys.stderr)
            failed = True
    results.append({"set": name, "files": nfiles, "gpuop": g, "containerd": c})


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


print(f"containerd merge vs `containerd config dump` ({runs} runs each; median wall time, "
      "whole process; peak RSS)")
hdr = (f"{'set':<12} {'files':>5} {'gpuop':>10} {'containerd':>11} {'ratio':>7} {'gpuop RSS':>10} "
       f"{'containerd RSS':>15}")
print(hdr)
print("-" * len(hdr))
speed_ok = mem_ok = True
for r in results:
    g, c = r["gpuop"], r["containerd"]
    if "error" in g or "error" in c:
        print(f"{r['set']:<12} {r['files']:>5}  FAILED")
        speed_ok = mem_ok = False
        continue
    ratio = c["median_ms"] / g["median_ms"] if g["median_ms"] > 0 else float("inf")
    r["ratio"] = ratio
    speed_ok &= ratio >= 10
    mem_ok &= g["peak_kib"] <= 4 * 1024
    print(f"{r['set']:<12} {r['files']:>5} {g['median_ms']:>7.2f} ms {c['median_ms']:>8.2f} ms {ratio:>6.1f}x "
          f"{mib(g['peak_kib']):>10} {mib(c['peak_kib']):>15}")
print(f"target >= 10x faster: {'met' if speed_ok else 'NOT met'}")
print(f"target peak <= 4 MiB: {'met' if mem_ok else 'NOT met'}")
with open(out_json, "w") as f:
    json.dump({"runs": int(runs), "results": results, "speed_target_met": speed_ok,
               "memory_target_met": mem_ok}, f, indent=2)
sys.exit(1 if failed else 0)
PY
echo "containerd-bench: results in $build/bench/containerd.json" >&2
exit "$status"

#!/usr/bin/env bash
# containerd merge and start-up benchmark: gpuop's commands against the real
# `containerd --config X config dump`, whole processes, in paired rounds.
#
#   bench/containerd_bench.sh [BUILD]      (bench/run.sh calls it; BUILD defaults to build)
#
# Two config sets:
#   lab      the incident's files (examples/incident/etc/containerd), copied to a
#            temporary directory with the import rewritten to that copy
#   50-dropins  a generated main config plus 50 drop-ins (runtimes, options,
#            CNI, top-level scalars)
# On the lab set, the start-up of gpuop's commands that talk to no cluster:
#   gpuop --version
#   gpuop toml check config.toml
#   gpuop containerd merge --config config.toml --containerd 1.6   (the target)
#   gpuop containerd merge --config config.toml    (rules of the containerd on
#                      PATH: one `containerd --version` run, a Go start-up)
#   /bin/true          (what any process costs here)
# each against `containerd config dump` of the same files; on 50-dropins,
# merge --containerd 1.6 against it.
# Paired rounds: 1 warm-up round, then CONTAINERD_BENCH_RUNS (default 30)
# rounds, each running the reference and every command of its set once, in
# an order that rotates from round to round (so that a slow spell of the
# machine falls on all of them); wall clock around fork+exec+wait, output to
# /dev/null. For each command: the median and min wall time, the median of
# the per-round ratios containerd/command and their spread (25th to 75th
# percentile), and the peak RSS (wait4's ru_maxrss of each process). The runs
# are started by a tiny C runner compiled here (BUILD/bench/cdrun): a child's
# ru_maxrss includes the RSS its parent had when it forked, so a Python
# launcher would add ~10 MiB to every process measured. containerd must be
# installed (`scripts/setup-deps.sh bench`). Prints a table and whether the
# targets (merge of the lab set --containerd 1.6 >= 10x faster, merge peak
# <= 4 MiB) are met; the same numbers go to BUILD/bench/containerd.json.
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
runs=${CONTAINERD_BENCH_RUNS:-30}
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

# ---- the runner: RUNS CMD... [:: CMD...]... -> per command "EXIT PEAK_KIB NS..." ----
mkdir -p "$build/bench"
cdrun=$build/bench/cdrun
cat >"$work/cdrun.c" <<'C'
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One command line of the set: its argv (NULL-terminated in place). */
typedef struct cmd {
    char **argv;
    int exit; /* -1 before the first run; 255 when not the same every run */
    long peak;
    long long *ns;
} cmd;

/* Runs c once; returns its wall time, or -1. */
static long long run_once(cmd *c, int devnull)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(devnull, 0), dup2(devnull, 1), dup2(devnull, 2);
        execvp(c->argv[0], c->argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) return -1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (c->exit < 0) c->exit = rc;
    if (rc != c->exit) c->exit = 255;
    if (ru.ru_maxrss > c->peak) c->peak = ru.ru_maxrss;
    return (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: cdrun RUNS CMD [ARG...] [:: CMD [ARG...]]...\n", stderr);
        return 2;
    }
    int runs = atoi(argv[1]);
    cmd cmds[16];
    int n = 0;
    for (int i = 2; i < argc && n < 16; n++) {
        cmds[n] = (cmd){.argv = &argv[i], .exit = -1};
        while (i < argc && strcmp(argv[i], "::") != 0) i++;
        if (i < argc) argv[i++] = NULL; /* argv[argc] is NULL already */
    }
    int devnull = open("/dev/null", O_RDWR);
    if (runs < 1 || devnull < 0) return 2;
    for (int k = 0; k < n; k++)
        if (!(cmds[k].ns = calloc((size_t)runs, sizeof(long long)))) return 2;
    for (int r = -1; r < runs; r++) { /* r = -1: warm-up */
        for (int j = 0; j < n; j++) {
            int k = (j + (r < 0 ? 0 : r)) % n; /* rotate the order */
            long long t = run_once(&cmds[k], devnull);
            if (t < 0) return 2;
            if (r >= 0) cmds[k].ns[r] = t;
        }
    }
    for (int k = 0; k < n; k++) {
        printf("%d %ld", cmds[k].exit, cmds[k].peak);
        for (int r = 0; r < runs; r++)
            printf(" %lld", cmds[k].ns[r]);
        putchar('\n');
    }
    return 0;
}
C
"$cc" -O2 -std=c11 -Wall -Wextra -o "$cdrun" "$work/cdrun.c" || die "could not build $cdrun"

echo "containerd-bench: $("$containerd" --version); $runs paired rounds" >&2
status=0
"$python" - "$cdrun" "$gpuop" "$containerd" "$runs" "$build/bench/containerd.json" "$work" "$lab" "$gen" <<'PY' || status=$?
import json, os, statistics, subprocess, sys

cdrun, gpuop, containerd, runs, out_json, work, lab, gen = sys.argv[1:9]
cwd = os.path.join(work, "cwd")
os.makedirs(cwd, exist_ok=True)
env = dict(os.environ, LC_ALL="C.UTF-8")
env.pop("LANGUAGE", None)


def config(d):
    return os.path.join(d, "config.toml")


def merge(d, *more):
    return [gpuop, "containerd", "merge", "--config", config(d)] + list(more)


# name, files, [(label, argv, accepted exit codes)]; the first is the reference.
# merge: 0 the config loads, 1 it does not (the lab's CRI is refused on 1.6).
sets = [
    ("lab", lab, [
        ("containerd config dump", [containerd, "--config", config(lab), "config", "dump"], (0,)),
        ("gpuop containerd merge --containerd 1.6", merge(lab, "--containerd", "1.6"), (0, 1)),
        ("gpuop containerd merge (installed version)", merge(lab), (0, 1)),
        ("gpuop toml check", [gpuop, "toml", "check", config(lab)], (0,)),
        ("gpuop --version", [gpuop, "--version"], (0,)),
        ("/bin/true", ["/bin/true"], (0,)),
    ]),
    ("50-dropins", gen, [
        ("containerd config dump", [containerd, "--config", config(gen), "config", "dump"], (0,)),
        ("gpuop containerd merge --containerd 1.6", merge(gen, "--containerd", "1.6"), (0, 1)),
    ]),
]


def quartiles(xs):
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def measure(cmds):
    """Paired rounds through cdrun: per command its exit, peak RSS and times."""
    argv = [cdrun, runs]
    for i, (_, cmd, _) in enumerate(cmds):
        argv += (["::"] if i else []) + cmd
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    lines = p.stdout.splitlines()
    if p.returncode != 0 or len(lines) != len(cmds):
        return None, f"cdrun failed (exit {p.returncode}): {p.stderr.strip()}"
    out = []
    for (label, cmd, ok), line in zip(cmds, lines):
        rc, peak, *ns = (int(x) for x in line.split())
        if rc not in ok:
            how = "varies between runs" if rc == 255 else "every run"
            return None, f"exit {rc} ({how}): {' '.join(cmd)}"
        out.append({"command": label, "argv": cmd, "exit": rc, "peak_kib": peak,
                    "median_ms": statistics.median(ns) / 1e6, "min_ms": min(ns) / 1e6,
                    "times_ms": [t / 1e6 for t in ns]})
    ref = out[0]
    for r in out[1:]:
        ratios = [a / b for a, b in zip(ref["times_ms"], r["times_ms"]) if b > 0]
        r["ratio"] = statistics.median(ratios)
        r["ratio_p25"], r["ratio_p75"] = quartiles(ratios)
    return out, None


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


results = []
failed = False
for name, d, cmds in sets:
    nfiles = 1 + len([f for f in os.listdir(os.path.join(d, "conf.d")) if f.endswith(".toml")])
    rows, error = measure(cmds)
    if error:
        print(f"containerd-bench: {name}: {error}", file=sys.stderr)
        failed = True
    results.append({"set": name, "files": nfiles, "rows": rows, "error": error})

print(f"gpuop against `containerd config dump` ({runs} paired rounds; median wall time, "
      "whole process; ratio: median of the rounds' containerd/command, 25th-75th percentile; "
      "peak RSS)")
hdr = (f"{'set':<10} {'files':>5} {'command':<43} {'median':>9} {'min':>9} {'ratio':>7} "
       f"{'spread':>13} {'peak RSS':>9}")
print(hdr)
print("-" * len(hdr))
speed_ok = mem_ok = True
for s in results:
    if s["error"]:
        print(f"{s['set']:<10} {s['files']:>5}  FAILED: {s['error']}")
        speed_ok = mem_ok = False
        continue
    for r in s["rows"]:
        ratio = spread = ""
        if "ratio" in r:
            ratio = f"{r['ratio']:.1f}x"
            spread = f"{r['ratio_p25']:.1f}-{r['ratio_p75']:.1f}x"
        print(f"{s['set']:<10} {s['files']:>5} {r['command']:<43} {r['median_ms']:>6.2f} ms "
              f"{r['min_ms']:>6.2f} ms {ratio:>7} {spread:>13} {mib(r['peak_kib']):>9}")
        if r["command"].startswith("gpuop containerd merge --containerd"):
            mem_ok &= r["peak_kib"] <= 4 * 1024
            if s["set"] == "lab":
                speed_ok &= r["ratio"] >= 10
print(f"target merge (lab, --containerd 1.6) >= 10x faster: {'met' if speed_ok else 'NOT met'}")
print(f"target merge peak <= 4 MiB: {'met' if mem_ok else 'NOT met'}")
with open(out_json, "w") as f:
    json.dump({"runs": int(runs), "results": results, "speed_target_met": speed_ok,
               "memory_target_met": mem_ok}, f, indent=2)
sys.exit(1 if failed else 0)
PY
echo "containerd-bench: results in $build/bench/containerd.json" >&2
exit "$status"

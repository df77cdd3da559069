#!/usr/bin/env bash
# Event storm benchmark: a DaemonSet whose pods the API server refuses (they
# name a RuntimeClass that does not exist), left to its controller.
#
#   bench/events_bench.sh [BUILD]    (bench/run.sh calls it; BUILD defaults to build)
#
# One server on a fresh data directory in a temporary directory on
# 127.0.0.1, started with `--nodes NODES` (fake nodes the fake kubelet makes
# Ready); the DaemonSet is applied with the real kubectl and left SECONDS.
# The controller retries with the workqueue's backoff (5 ms doubling: 14
# tries in 60 s) and its events go through client-go's correlator, so what
# it writes stays bounded however long it fails. Measured at the end:
#   events     Event objects stored (a LIST of all namespaces), and the sum
#              of the FailedCreate events' counts: the creates the
#              controller tried;
#   disk       the data directory's size (du), the SQLite store and its WAL;
#   memory     the server's VmRSS and VmHWM (/proc/PID/status);
#   cpu        the server's CPU over the storm, in cores busy on average;
#   kubectl    `kubectl get events -A` (wall time, median of KUBECTL_RUNS,
#              a warm discovery cache).
# The reference is the recording of a real Kubernetes 1.32.13 control plane
# (../shared/k8s-cases/real-1.32.13/lifecycle-and-backoff.txt): one
# FailedCreate event, count 11 after 10 s. Prints a table; the same numbers
# go to BUILD/bench/events.json.
#
# Environment: EVENTS_BENCH_SECONDS (60), EVENTS_BENCH_NODES (10),
# EVENTS_BENCH_KUBECTL_RUNS (5), CC, PYTHON.
# Exit status: 0 on success (whether or not the checks hold), 1 when the
# server died or a request failed, 2 on setup errors.
set -euo pipefail
export LC_NUMERIC=C

BENCH_NAME="events-bench"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup "$@"
server=$build/gpuop-apiserver
[ -x "$server" ] || die "$server not found; build the project first ('make build')"
bench_tools
kubectl=$(command -v kubectl) || die "kubectl not found; the storm is applied with the real kubectl 1.32"

seconds=$(positive EVENTS_BENCH_SECONDS 60)
nodes=$(positive EVENTS_BENCH_NODES 10)
kubectl_runs=$(positive EVENTS_BENCH_KUBECTL_RUNS 5)

bench_workdir events

bench_apiload

data=$work/data
mkdir -p "$data"
now
since="${now_us:0:-6}.${now_us: -6}"
"$server" --data "$data" --port "$port" --nodes "$nodes" >>"$work/server.log" 2>&1 &
server_pid=$!
"$apiload" ready "$url" "$data" "$since" 120 >"$results/ready.out" 2>"$results/ready.err" ||
    die "the server did not get ready: $(tail -n 1 "$results/ready.err")"
"$apiload" nodes-ready "$url" "$data" --count "$nodes" --since "$since" --timeout 120 \
    >"$results/nodes.out" 2>"$results/nodes.err" ||
    problem "nodes: apiload: $(tail -n 1 "$results/nodes.err")"

k() {
    "$kubectl" --kubeconfig "$data/kubeconfig" --cache-dir "$work/cache" --request-timeout=120s "$@"
}
k create namespace storm >/dev/null
echo "events-bench: a DaemonSet whose RuntimeClass is missing, on $nodes nodes, for $seconds s" >&2
server_cpu
c0=$cpu_ticks
now
t0=$now_us
k apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: storm, namespace: storm}
spec:
  selector: {matchLabels: {app: storm}}
  template:
    metadata: {labels: {app: storm}}
    spec:
      runtimeClassName: missing
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
EOF
sleep "$seconds"
server_alive storm || true
server_cpu
now
echo "server_cpu_ticks=$((cpu_ticks - c0)) clk_tck=$(getconf CLK_TCK) wall_us=$((now_us - t0)) $(memory)" \
    >"$results/storm.out"
du -sb "$data" | cut -f1 >"$results/data-bytes"
for f in store.db store.db-wal; do
    echo "$f $(stat -c %s "$data/$f" 2>/dev/null || echo 0)"
done >"$results/files"
if server_alive events; then
    k get --raw /api/v1/events >"$results/events.json" ||
        problem "LIST of the events failed"
    k get events -A >/dev/null # discovery cached, as a learner's second try
    for i in $(seq 1 "$kubectl_runs"); do
        now
        s=$now_us
        k get events -A >"$results/kubectl-$i.out" 2>"$results/kubectl-$i.err" ||
            problem "kubectl get events -A failed: $(head -n 2 "$results/kubectl-$i.err")"
        now
        echo $((now_us - s)) >>"$results/kubectl-us"
    done
fi
stop_server events

status=0
"$python" - "$results" "$out/events.json" "$root/bench" "$seconds" "$nodes" <<'PY' || status=$?
import datetime, json, os, platform, sys

results, json_out, bench_dir = sys.argv[1:4]
seconds, nodes = int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, bench_dir)
from report import words  # noqa: E402
from report import read as read_path  # noqa: E402
MB = 1e6


def read(name, default=""):
    return read_path(os.path.join(results, name), default)


def backoff_tries(seconds):
    """The workqueue's default per-item backoff: tries at 0, 5, 15, 35 ms
    ... (5 ms doubling) within `seconds`."""
    t, delay, n = 0, 5, 0
    while t <= seconds * 1000:
        n, t, delay = n + 1, t + delay, delay * 2
    return n


problems = read("problems.txt").splitlines()
storm = words(read("storm.out"))
events = []
try:
    events = json.loads(read("events.json", "{}")).get("items", [])
except ValueError:
    problems.append("the LIST of events is not JSON")
failed = [e for e in events if e.get("reason") == "FailedCreate"]
tries = sum(e.get("count", 1) for e in failed)
by_reason = {}
for e in events:
    by_reason[e.get("reason", "")] = by_reason.get(e.get("reason", ""), 0) + 1
data_bytes = int(read("data-bytes", "0").strip() or 0)
files = dict(line.split() for line in read("files").splitlines() if line.strip())
kubectl_us = sorted(int(x) for x in read("kubectl-us").split())
kubectl_ms = kubectl_us[len(kubectl_us) // 2] / 1000 if kubectl_us else None
cores = None
if storm.get("wall_us") and storm.get("clk_tck"):
    cores = storm["server_cpu_ticks"] / storm["clk_tck"] / (storm["wall_us"] / 1e6)
expected = backoff_tries(seconds)


def fmt(v, unit="", digits=1):
    return "-" if v is None else "%.*f%s" % (digits, v, unit)


print("gpuop event storm: a DaemonSet whose RuntimeClass is missing, %d nodes, %d s "
      "(%d CPUs)" % (nodes, seconds, os.cpu_count() or 0))
print("MB = 10^6 bytes.")
print()
print("  %-62s %14s" % ("Event objects stored (all namespaces)", len(events)))
print("  %-62s %14s" % ("  FailedCreate objects / the sum of their counts",
                        "%d / %d" % (len(failed), tries)))
print("  %-62s %14s" % ("  creates the backoff allows in %d s (5 ms doubling)" % seconds, expected))
print("  %-62s %14s" % ("data directory (du)", fmt(data_bytes / MB, " MB", 2)))
print("  %-62s %14s" % ("  store.db / store.db-wal", "%s / %s" % (
    fmt(int(files.get("store.db", 0)) / MB, " MB", 2),
    fmt(int(files.get("store.db-wal", 0)) / MB, " MB", 2))))
print("  %-62s %14s" % ("server VmRSS / VmHWM", "%s / %s" % (
    fmt(storm.get("rss_kib", 0) * 1024 / MB, " MB"), fmt(storm.get("hwm_kib", 0) * 1024 / MB, " MB"))))
print("  %-62s %14s" % ("server CPU over the storm (cores busy on average)", fmt(cores, "", 3)))
print("  %-62s %14s" % ("`kubectl get events -A`, median of %d" % len(kubectl_us),
                        fmt(kubectl_ms, " ms", 0)))
print()
print("reference, Kubernetes 1.32.13 (../shared/k8s-cases, lifecycle-and-backoff.txt):")
print("  one FailedCreate event, count 11 after 10 s")
bounded = len(failed) == 1 and tries <= expected + 2
print()
print("check: one FailedCreate event, its count the tries, at most the backoff's %d + 2: %s"
      % (expected, "holds" if bounded else "DOES NOT HOLD"))
if problems:
    print()
    print("PROBLEMS (the numbers above are incomplete or wrong):")
    for line in problems:
        print("  " + line)
doc = {
    "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
    "parameters": {"seconds": seconds, "nodes": nodes},
    "events": {"objects": len(events), "by_reason": by_reason,
               "failed_create_objects": len(failed), "failed_create_tries": tries,
               "backoff_tries": expected},
    "data_bytes": data_bytes, "files": files,
    "server": storm, "server_cores": cores,
    "kubectl_get_events_ms": kubectl_ms, "kubectl_runs_us": kubectl_us,
    "bounded": bounded, "problems": problems,
}
with open(json_out + ".tmp", "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(json_out + ".tmp", json_out)
sys.exit(1 if problems else 0)
PY
echo "events-bench: results in $out/events.json" >&2
[ "$failed" -eq 0 ] || [ "$status" -ne 0 ] || status=1
exit "$status"

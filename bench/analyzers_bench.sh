#!/usr/bin/env bash
# Analyzer benchmark: `gpuop nodes`, `why-pending`, `rollout` and `slots`
# against a cluster of 5,000 nodes and 150,000 pods, with the real kubectl's
# lists of the same snapshot as the reference.
#
#   bench/analyzers_bench.sh [BUILD]    (bench/run.sh calls it; BUILD defaults to build)
#
# The cluster is `gpuop cluster up --no-controllers --nodes NODES` in a
# temporary directory (the API server alone: nothing changes the snapshot
# while it is read), stopped on exit. bench/anload.c (built into BUILD/bench)
# loads what bench/analyzers_bench.py generates:
#   - every GPU_EVERY-th node advertises nvidia.com/gpu: 8 (status patch) with
#     GPU Feature Discovery labels; kwok-node-1 advertises 4 GPUs
#     time-sliced into 20;
#   - NODES * PODS_PER_NODE pods, bound (spec.nodeName), Running and Ready
#     (status patches): a DaemonSet pod on every node, the rest over TEAMS
#     namespaces, 4 on each GPU node asking nvidia.com/gpu: 1;
#   - the DaemonSet gpu-operator/nvidia-container-toolkit stalled as in lab
#     step 8, at scale: two ControllerRevisions, desired NODES, its new pod
#     on kwok-node-0 Pending (PodScheduled False, Insufficient memory, with
#     its FailedScheduling event);
#   - ml/train-0 asking 8 GPUs, Pending with its FailedScheduling event; the
#     RuntimeClass nvidia; the ConfigMap gpu-operator/time-slicing-config.
# Creates and status patches are timed (requests/s). Then every command runs
# RUNS times in a row (bench/anload.c's runner: wall clock fork to reap,
# wait4's ru_maxrss, the client's and the server's CPU): the first run's
# stdout (-o json) goes to a file whose answer is checked, the others' to
# /dev/null. Medians of the wall times; the peak is the largest ru_maxrss.
# Reference, same server and snapshot: `kubectl get pods -A -o json` and
# `kubectl get nodes -o json` (default 500-item chunks, as gpuop's pages;
# output to /dev/null). Prints a table with the targets of the issue (each
# command <= 2 s and <= 500 MB) and the ratios to kubectl; the same numbers
# go to BUILD/bench/analyzers.json. A missed target is reported, not an error.
#
# Environment (positive integers): ANALYZERS_BENCH_NODES (5000),
# ANALYZERS_BENCH_PODS_PER_NODE (30), ANALYZERS_BENCH_GPU_EVERY (10),
# ANALYZERS_BENCH_TEAMS (50), ANALYZERS_BENCH_THREADS (load clients, 4),
# ANALYZERS_BENCH_RUNS (3), ANALYZERS_BENCH_KUBECTL_RUNS (runs of `kubectl
# get pods -A`, 1: about 2 minutes each at full scale on 2 CPUs);
# ANALYZERS_BENCH_POD_STATUS (1; 0 leaves the workload pods without a status,
# Pending: half the load time, smaller list bodies), CC, PYTHON.
# Exit status: 0 on success (whether or not the targets are met), 1 when a
# command failed or answered wrong, a load request failed or the server
# died, 2 on setup errors.
set -euo pipefail
export LC_NUMERIC=C

BENCH_NAME="analyzers-bench"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup "$@"
gpuop=$build/gpuop
[ -x "$gpuop" ] || die "$gpuop not found; build the project first ('make build')"
[ -x "$build/gpuop-apiserver" ] ||
    die "$build/gpuop-apiserver not found; build the project first ('make build')"
bench_tools
kubectl=$(command -v kubectl) || die "kubectl not found; the reference needs the real kubectl 1.32"

nodes=$(positive ANALYZERS_BENCH_NODES 5000)
per_node=$(positive ANALYZERS_BENCH_PODS_PER_NODE 30)
gpu_every=$(positive ANALYZERS_BENCH_GPU_EVERY 10)
teams=$(positive ANALYZERS_BENCH_TEAMS 50)
threads=$(positive ANALYZERS_BENCH_THREADS 4)
runs=$(positive ANALYZERS_BENCH_RUNS 3)
kubectl_runs=$(positive ANALYZERS_BENCH_KUBECTL_RUNS 1)
pod_status=${ANALYZERS_BENCH_POD_STATUS:-1}
[[ $pod_status =~ ^[01]$ ]] || die "ANALYZERS_BENCH_POD_STATUS must be 0 or 1, got '$pod_status'"
[ "$nodes" -ge 2 ] || die "ANALYZERS_BENCH_NODES must be at least 2 (kwok-node-1 is the slots node)"
[ "$per_node" -gt 4 ] || die "ANALYZERS_BENCH_PODS_PER_NODE must be at least 5 (4 GPU pods + the DaemonSet's)"

bench_workdir analyzers
anload=$out/anload
cluster=$work/cluster
kc=$cluster/kubeconfig
failed=0
# the server of `cluster up` is not our child: its pid file says
# shellcheck disable=SC2317 # called by bench_cleanup
bench_cleanup_more() {
    [ ! -f "$cluster/apiserver.pid" ] ||
        "$gpuop" cluster down --no-kubeconfig-merge --data "$cluster" >/dev/null 2>&1
}

echo "analyzers-bench: compiling anload" >&2
"$cc" -O2 -g -std=c11 -Wall -Wextra -pthread -o "$anload" "$root/bench/anload.c" -lcurl -lpthread ||
    die "could not build $anload; the libcurl headers come with 'scripts/setup-deps.sh build'"

now
bench_start_us=$now_us
# CPU of the machine and of our children (report.py's other_cpu reads these):
# on a busy machine the timings are noisy.
snapshot() {
    { head -n 1 /proc/stat && cat /proc/uptime && times; } >"$results/cpu.$1" 2>/dev/null || true
}
snapshot start

# NAME: the wall time since the last mark, appended to steps.txt.
mark_us=$bench_start_us
mark() {
    now
    echo "step=$1 wall_us=$((now_us - mark_us))" >>"$results/steps.txt"
    mark_us=$now_us
}

# ---- the cluster and its snapshot ----
echo "analyzers-bench: cluster up, $nodes nodes, no controllers" >&2
"$gpuop" cluster up --data "$cluster" --no-controllers --no-kubeconfig-merge --nodes "$nodes" \
    >"$results/cluster-up.log" 2>&1 || die "gpuop cluster up failed: $(tail -n 3 "$results/cluster-up.log")"
url=https://127.0.0.1:$(cat "$cluster/port")
server_pid=$(cat "$cluster/apiserver.pid")
mark cluster-up

# NAME FILE THREADS: sends the requests of FILE; false (noted) on errors.
load() {
    local name=$1 file=$2 n=$3
    "$anload" load "$url" "$cluster" "$n" <"$work/$file" >"$results/load-$name.out" \
        2>"$results/load-$name.err" && return 0
    problem "load $name: $(tail -n 1 "$results/load-$name.out") $(head -n 3 "$results/load-$name.err" | tr '\n' ' ')"
    return 1
}

"$python" "$root/bench/analyzers_bench.py" setup "$work" "$teams" || die "analyzers_bench.py setup failed"
for f in setup setup2 setup3; do
    load "$f" "$f.tsv" 1 || die "could not create the namespaces, DaemonSet, ConfigMap and RuntimeClass"
done
uid=$("$kubectl" --kubeconfig "$kc" get daemonset -n gpu-operator nvidia-container-toolkit \
    -o jsonpath='{.metadata.uid}') || uid=
[ -n "$uid" ] || die "no uid for the DaemonSet"
mark setup
echo "analyzers-bench: generating the snapshot's requests" >&2
"$python" "$root/bench/analyzers_bench.py" snapshot "$work" "$nodes" "$per_node" "$gpu_every" \
    "$teams" "$uid" || die "analyzers_bench.py snapshot failed"
cp "$work/snapshot.txt" "$results/"
mark generate
echo "analyzers-bench: loading $(wc -l <"$work/creates.tsv") creates, $threads clients" >&2
load creates creates.tsv "$threads" || true
mark creates
load status-key status-key.tsv "$threads" || true
if [ "$pod_status" -eq 1 ]; then
    echo "analyzers-bench: loading $(wc -l <"$work/status.tsv") pod statuses" >&2
    load status status.tsv "$threads" || true
fi
mark statuses
echo "point=loaded $(memory)" >>"$results/memory.txt"
rm -f "$work"/*.tsv

# A page of each list as the commands get it: the bytes a pod and a node.
for kind in pods nodes; do
    bytes=$("$kubectl" --kubeconfig "$kc" get --raw "/api/v1/$kind?limit=500" | wc -c) || bytes=0
    echo "kind=$kind page_items=500 page_bytes=$bytes" >>"$results/pages.txt"
done

# ---- the runs ----
# NAME RUNS OUT COMMAND...: COMMAND RUNS times (anload run), the first
# run's stdout into OUT.
measure() {
    local name=$1 n=$2 first=$3
    shift 3
    echo "analyzers-bench: $name ($n runs)" >&2
    "$anload" run "$first" "$n" "$server_pid" "$@" >"$results/$name.runs" \
        2>"$results/$name.err" ||
        problem "$name: a run exited with status 2 or more: $(tail -n 2 "$results/$name.err" | tr '\n' ' ')"
}
cache=$work/kubectl-cache
measure kubectl-nodes "$runs" /dev/null "$kubectl" --kubeconfig "$kc" --cache-dir "$cache" \
    get nodes -o json
measure nodes "$runs" "$results/nodes.json" "$gpuop" nodes --kubeconfig "$kc" -o json
measure why-pending "$runs" "$results/why-pending.json" "$gpuop" why-pending ml/train-0 \
    --kubeconfig "$kc" -o json
measure rollout "$runs" "$results/rollout.json" "$gpuop" rollout \
    gpu-operator/nvidia-container-toolkit --kubeconfig "$kc" -o json
measure slots "$runs" "$results/slots.json" "$gpuop" slots \
    --configmap gpu-operator/time-slicing-config --node kwok-node-1 --gpus 4 \
    --gpu-model A100-40GB --kubeconfig "$kc" -o json
measure kubectl-pods "$kubectl_runs" /dev/null "$kubectl" --kubeconfig "$kc" --cache-dir "$cache" \
    get pods -A -o json
echo "point=after-runs $(memory)" >>"$results/memory.txt"
[ -r "/proc/$server_pid/status" ] || problem "the server (pid $server_pid) died during the runs"
mark runs
snapshot end

status=0
"$python" - "$results" "$out/analyzers.json" "$root/bench" "$nodes" "$per_node" "$runs" \
    "$kubectl_runs" "$pod_status" "$threads" \
    "$("$kubectl" version --client 2>/dev/null | head -n 1)" <<'PY' || status=$?
import datetime, json, os, platform, statistics, sys

results, json_out, bench_dir = sys.argv[1:4]
nodes, per_node, runs, kubectl_runs, pod_status, threads = (int(x) for x in sys.argv[4:10])
kubectl_version = sys.argv[10]
sys.path.insert(0, bench_dir)
from report import other_cpu, words  # noqa: E402  (shared with the TOML report)
from report import read as read_path  # noqa: E402
MB = 1e6
WALL_TARGET_MS = 2000.0
RSS_TARGET_MB = 500.0


def read(name, default=""):
    return read_path(os.path.join(results, name), default)


problems = read("problems.txt").splitlines()
snap = words(read("snapshot.txt"))
steps = {w["step"]: w["wall_us"] / 1e6 for w in map(words, read("steps.txt").splitlines())}
loads = {n: words(read("load-%s.out" % n)) for n in ("creates", "status-key", "status")}
pages = {w["kind"]: w for w in map(words, read("pages.txt").splitlines())}
memory = {}
for line in read("memory.txt").splitlines():
    w = words(line)
    memory[w.pop("point")] = w

# what each command must answer on this snapshot, from the generator's facts
# (analyzers_bench.py): the counts it loaded and the state it staged
EXPECTED_RC = {"nodes": 0, "why-pending": 1, "rollout": 1, "slots": 0,
               "kubectl-nodes": 0, "kubectl-pods": 0}


def check(name, doc):
    """The first wrong thing in a command's -o json answer, or None."""
    if name == "nodes":
        s = doc["summary"]
        if s["nodes"] != nodes or s["advertising"] != snap["gpu_nodes"]:
            return "summary %s: want %d nodes, %d advertising" % (s, nodes, snap["gpu_nodes"])
        gpu_pods = sum(n["pods"] for n in doc["nodes"])
        if gpu_pods != snap["bound_gpu_pods"]:
            return "%d GPU pods on nodes, want %d" % (gpu_pods, snap["bound_gpu_pods"])
    elif name == "why-pending":
        if doc["layer"] != "scheduler" or len(doc["nodes"]) != nodes or \
                doc["advertising"] != snap["gpu_nodes"]:
            return "layer %s, %d nodes, %s advertising; want scheduler, %d, %d" % (
                doc["layer"], len(doc["nodes"]), doc["advertising"], nodes, snap["gpu_nodes"])
    elif name == "rollout":
        st = doc["status"]
        if st["desired"] != nodes or doc["verdict"]["state"] != "stalled" or \
                doc["blocker"] != "insufficient-memory" or doc["old_pods"] != nodes - 1:
            return "desired %s, %s, blocker %s, %s old pods; want %d, stalled, " \
                "insufficient-memory, %d" % (st["desired"], doc["verdict"]["state"],
                                             doc["blocker"], doc["old_pods"], nodes, nodes - 1)
    elif name == "slots":
        if doc["replicas"] != 5 or doc["advertised_computed"] != 20 or \
                doc["advertised_agrees"] is not True:
            return "replicas %s, advertised %s (agrees %s); want 5, 20, true" % (
                doc["replicas"], doc["advertised_computed"], doc["advertised_agrees"])
    return None


def command(name):
    rows = [words(x) for x in read(name + ".runs").splitlines()]
    rows = [r for r in rows if "wall_ms" in r]
    if not rows:
        return {"error": read(name + ".err").strip()[-300:] or "no result"}
    d = {"runs": len(rows),
         "wall_ms_median": statistics.median(r["wall_ms"] for r in rows),
         "wall_ms_min": min(r["wall_ms"] for r in rows),
         "peak_rss_kib": max(r["maxrss_kib"] for r in rows),
         "client_cpu_s_median": statistics.median(r["user_s"] + r["sys_s"] for r in rows),
         "server_cpu_s_median": statistics.median(r["server_ticks"] / r["clk_tck"]
                                                  for r in rows),
         "exit_codes": sorted({int(r["rc"]) for r in rows})}
    if d["exit_codes"] != [EXPECTED_RC[name]]:
        problems.append("%s exited %s, want %d on this snapshot"
                        % (name, d["exit_codes"], EXPECTED_RC[name]))
    if not name.startswith("kubectl"):
        try:
            wrong = check(name, json.loads(read(name + ".json")))
        except (ValueError, KeyError, TypeError) as e:
            wrong = "unreadable answer: %s" % e
        if wrong:
            problems.append("%s answered wrong: %s" % (name, wrong))
            d["wrong"] = wrong
    return d


names = ["nodes", "why-pending", "rollout", "slots", "kubectl-pods", "kubectl-nodes"]
cmds = {n: command(n) for n in names}
ref = cmds["kubectl-pods"]

pod_bytes = pages.get("pods", {}).get("page_bytes", 0) / 500
node_bytes = pages.get("nodes", {}).get("page_bytes", 0) / 500
list_mb = (pod_bytes * snap.get("pods", 0) + node_bytes * nodes) / MB


def ratio(a, b):
    return None if a is None or not b else a / b


def times(r):
    return "<0.001x" if r < 0.001 else "%.2gx" % r


def rate(load):
    return "-" if not load.get("rps") else "%d in %.1f s (%.0f/s)" % (
        load["requests"], load["seconds"], load["rps"])


busy = other_cpu(results)
print("gpuop analyzers on %d nodes (%d advertise nvidia.com/gpu) and %d pods (%s), %d CPUs; %s"
      % (nodes, snap.get("gpu_nodes", 0), snap.get("pods", 0),
         "Running" if pod_status else "workload pods without status", os.cpu_count() or 0,
         kubectl_version))
print("MB = 10^6 bytes. Client and server share the CPUs; the server is the API server alone.")
if busy:
    print("Other processes used %.1f CPU-s of %.1f available (%.0f%%) during the run%s" % (
        busy["other_cpu_s"], busy["available_cpu_s"], 100 * busy["other_share"],
        ": timings are noisy, compare on an idle machine" if busy["other_share"] > 0.05 else "."))
print()
print("load (%d clients): creates %s; statuses %s + %s" % (
    threads, rate(loads["creates"]), rate(loads["status-key"]),
    rate(loads["status"]) if pod_status else "0 (ANALYZERS_BENCH_POD_STATUS=0)"))
print("  cluster up %.1f s, generating the requests %.1f s, creates %.1f s, statuses %.1f s;"
      " server RSS after %.0f MB" % (steps.get("cluster-up", 0), steps.get("generate", 0),
                                      steps.get("creates", 0), steps.get("statuses", 0),
                                      memory.get("loaded", {}).get("rss_kib", 0) * 1024 / MB))
print("  a page of 500 pods %.0f KB (%.0f B a pod): all pods and nodes ~%.0f MB of JSON a command"
      % (pod_bytes * 500 / 1e3, pod_bytes, list_mb))
print()
hdr = "%-28s %6s %10s %9s %10s %10s   %-18s %s"
print(hdr % ("command (-o json)", "runs", "wall", "peak RSS", "client CPU", "server CPU",
             "vs kubectl pods", "target <= 2 s, <= 500 MB"))
labels = {"nodes": "gpuop nodes", "why-pending": "gpuop why-pending",
          "rollout": "gpuop rollout", "slots": "gpuop slots",
          "kubectl-pods": "kubectl get pods -A", "kubectl-nodes": "kubectl get nodes"}
wall_ok = rss_ok = True
for n in names:
    d = cmds[n]
    if "error" in d:
        print("  %-26s FAILED: %s" % (labels[n], d["error"]))
        if not n.startswith("kubectl"):
            wall_ok = rss_ok = False
        continue
    mb = d["peak_rss_kib"] * 1024 / MB
    rt = ratio(d["wall_ms_median"], ref.get("wall_ms_median"))
    rm = ratio(d["peak_rss_kib"], ref.get("peak_rss_kib"))
    vs = "-" if n == "kubectl-pods" or rt is None else "%s, %s" % (times(rt), times(rm))
    target = ""
    if not n.startswith("kubectl"):
        w_ok, m_ok = d["wall_ms_median"] <= WALL_TARGET_MS, mb <= RSS_TARGET_MB
        wall_ok &= w_ok
        rss_ok &= m_ok
        d["targets"] = {"wall_le_2s": w_ok, "rss_le_500MB": m_ok}
        target = "%s, %s" % ("met" if w_ok else "NOT met", "met" if m_ok else "NOT met")
    d["vs_kubectl_get_pods"] = {"wall": rt, "rss": rm}
    print("  %-26s %6d %8.2f s %6.1f MB %8.2f s %8.2f s   %-18s %s" % (
        labels[n], d["runs"], d["wall_ms_median"] / 1e3, mb, d["client_cpu_s_median"],
        d["server_cpu_s_median"], vs, target))
print("  (wall: median; peak RSS: the largest of the runs; CPU: medians; vs kubectl: time, RSS)")
print()
# Held whole, the lists' JSON text alone would take list_mb, their jansson
# trees several times more: a command that streams them grows by a few pages
# over one that lists nothing (slots). Below 50 MB of JSON, pages and the
# program's own size are of the same order: no verdict.
base_kib = cmds["slots"].get("peak_rss_kib")
growth = [(cmds[n].get("peak_rss_kib", 1e12) - base_kib) * 1024 / MB
          for n in ("nodes", "why-pending", "rollout")] if base_kib else []
streamed = None if list_mb < 50 or not growth else max(growth) < list_mb / 4
print("the lists streamed, not held: %s (largest growth over gpuop slots %s, ~%.0f MB of JSON"
      " listed)" % ("-" if streamed is None else "yes" if streamed else "NO",
                    "%.1f MB" % max(growth) if growth else "-", list_mb))
print("target wall <= 2 s for each command: %s" % ("met" if wall_ok else "NOT met"))
print("target peak RSS <= 500 MB for each command: %s" % ("met" if rss_ok else "NOT met"))
print("the bench took %.0f s (load %.0f s, runs %.0f s)" % (
    sum(steps.values()), steps.get("creates", 0) + steps.get("statuses", 0),
    steps.get("runs", 0)))
if problems:
    print()
    print("PROBLEMS (the numbers above are incomplete or wrong):")
    for line in problems:
        print("  " + line)

doc = {
    "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"cpus": os.cpu_count(), "kernel": platform.release(), "kubectl": kubectl_version},
    "machine_load": busy,
    "parameters": {"nodes": nodes, "pods_per_node": per_node, "runs": runs,
                   "kubectl_runs": kubectl_runs, "pod_status": pod_status, "threads": threads},
    "snapshot": snap, "steps_s": steps, "load": loads, "pages": pages, "memory": memory,
    "list_json_mb_estimate": list_mb,
    "units": {"wall_ms": "milliseconds, fork to reap", "peak_rss_kib": "wait4 ru_maxrss, KiB",
              "MB": "10^6 bytes"},
    "commands": cmds,
    "targets": {"wall_le_2s": wall_ok, "rss_le_500MB": rss_ok, "lists_streamed": streamed},
    "problems": problems,
}
with open(json_out + ".tmp", "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(json_out + ".tmp", json_out)
sys.exit(1 if problems else 0)
PY
echo "analyzers-bench: results in $out/analyzers.json" >&2
[ "$failed" -eq 0 ] || [ "$status" -ne 0 ] || status=1
exit "$status"

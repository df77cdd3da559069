#!/usr/bin/env bash
# Control plane benchmark: the controllers that run inside gpuop-apiserver
# (scheduler, DaemonSet controller, kwok-style fake kubelet, garbage
# collector) under load from the C client bench/apiload.c.
#
#   bench/controllers_bench.sh [BUILD]    (bench/run.sh calls it; BUILD defaults to build)
#
# Every scenario runs on a fresh server in a temporary directory on
# 127.0.0.1, started with `--nodes N` (fake nodes the fake kubelet makes
# Ready), and every server is stopped on exit. Measured:
#   nodes      exec -> all N nodes Ready and free of the not-ready taint
#              (apiload nodes-ready, LIST every 0.1 s).
#   pods       PODS pods (cpu 100m, memory 64Mi requests, no nodeName) POSTed
#              by THREADS clients at once on NODES nodes while a watch notes
#              when each pod is first seen, bound and Running (apiload
#              pods-running): the create rate, and the scheduled and Running
#              rates from the first POST to the last pod bound / Running
#              (end to end); then the server's own count with
#              fieldSelector=status.phase=Running must be PODS. The server's
#              CPU over the phase, and its CPU when idle afterwards (10 s).
#              Run PODS_RUNS times, each on a fresh server: a 2-CPU machine's
#              speed varies from run to run by a fifth, so the report takes
#              the run with the median Running rate and lists every run's.
#   agents     the pods scenario again on a server with --node-agents (a
#              simulated containerd, kubelet runtime state and driver on
#              every node, src/agents/), AGENTS_RUNS times: nodes Ready, and
#              the Running rate as a ratio to the median run above.
#   daemonset  a DaemonSet on NODES nodes rolled out, until its status says
#              desired == current == ready == available == updated == NODES
#              and its pods agree (one a node, Running, Ready); then its
#              image changed (RollingUpdate, maxUnavailable MAX_UNAVAILABLE)
#              until updatedNumberScheduled == numberAvailable == NODES again
#              with every pod on the new image. A status that says done and
#              takes it back is a wrong answer (apiload daemonset).
#   scale      BIG_NODES nodes, then pods in steps of BIG_STEP, each step
#              waited until Running, until BIG_PODS pods or until BIG_BUDGET
#              seconds are spent (the next step is started only when the last
#              one's time fits in what is left). After each step: the server's
#              VmRSS/VmHWM and a LIST of all pods (apiload list). The RSS at
#              BIG_PODS is extrapolated from the steps (least squares line)
#              when they did not get there, and labelled so. As a reference,
#              the API server alone (--no-controllers) with BIG_NODES nodes and
#              BIG_PODS pods (Pending, with a nodeName): RSS and LIST of all
#              (5 in a row, once the server is quiet: the median, and the
#              slowest, the first, which sorts the keys after the creates and
#              grows the client's buffer).
# Prints a table with the targets of the issue (>= 2,000 pods/s Running at
# 1,000 nodes; RSS <= 1.5 GB at 5,000 nodes and 150,000 pods; LIST of all pods
# <= 1 s) and kwok's published figures (quoted, not measured here); the same
# numbers go to BUILD/bench/controllers.json.
#
# Reproduce one scenario by hand (apiload is built into BUILD/bench):
#   BUILD/gpuop-apiserver --data /tmp/d --port 7443 --nodes 1000 &
#   BUILD/bench/apiload namespace https://127.0.0.1:7443 /tmp/d --ns load
#   BUILD/bench/apiload pods-running https://127.0.0.1:7443 /tmp/d --ns load --count 5000
#
# Environment (sizes are positive integers): CONTROLLERS_BENCH_NODES (1000),
# CONTROLLERS_BENCH_PODS (5000), CONTROLLERS_BENCH_THREADS (8),
# CONTROLLERS_BENCH_PODS_RUNS (3), CONTROLLERS_BENCH_AGENTS_RUNS (1),
# CONTROLLERS_BENCH_TIMEOUT (seconds a wait may take, 150),
# CONTROLLERS_BENCH_MAX_UNAVAILABLE (10%), CONTROLLERS_BENCH_BIG_NODES (5000),
# CONTROLLERS_BENCH_BIG_PODS (150000), CONTROLLERS_BENCH_BIG_STEP (1000),
# CONTROLLERS_BENCH_BIG_BUDGET (seconds for the scale steps, 120),
# CONTROLLERS_BENCH_REFERENCE (1: the --no-controllers reference; 0 skips it),
# CC, PYTHON.
# Exit status: 0 on success (whether or not the targets are met), 1 when the
# server gave a wrong answer, failed a request or died, 2 on setup errors.
set -euo pipefail
export LC_NUMERIC=C

BENCH_NAME="controllers-bench"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup "$@"
server=$build/gpuop-apiserver
[ -x "$server" ] || die "$server not found; build the project first ('make build')"
bench_tools

nodes=$(positive CONTROLLERS_BENCH_NODES 1000)
pods=$(positive CONTROLLERS_BENCH_PODS 5000)
threads=$(positive CONTROLLERS_BENCH_THREADS 8)
pods_runs=$(positive CONTROLLERS_BENCH_PODS_RUNS 3)
agents_runs=$(positive CONTROLLERS_BENCH_AGENTS_RUNS 1)
timeout=$(positive CONTROLLERS_BENCH_TIMEOUT 150)
big_nodes=$(positive CONTROLLERS_BENCH_BIG_NODES 5000)
big_pods=$(positive CONTROLLERS_BENCH_BIG_PODS 150000)
big_step=$(positive CONTROLLERS_BENCH_BIG_STEP 1000)
big_budget=$(positive CONTROLLERS_BENCH_BIG_BUDGET 120)
max_unavailable=${CONTROLLERS_BENCH_MAX_UNAVAILABLE:-10%}
[[ $max_unavailable =~ ^[0-9]+%?$ ]] ||
    die "CONTROLLERS_BENCH_MAX_UNAVAILABLE must be N or N%, got '$max_unavailable'"
reference=${CONTROLLERS_BENCH_REFERENCE:-1}
[[ $reference =~ ^[01]$ ]] || die "CONTROLLERS_BENCH_REFERENCE must be 0 or 1, got '$reference'"

bench_workdir controllers

bench_apiload

# NAME DIR ARGS...: starts the server on DIR with ARGS (the cluster's shape)
# and waits until it answers; sets server_pid, since (exec time, seconds
# since the epoch) and datadir. False (noted) when it does not answer.
start_server() {
    local name=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    datadir=$dir
    now
    since="${now_us:0:-6}.${now_us: -6}"
    "$server" --data "$dir" --port "$port" "$@" >>"$work/server-$name.log" 2>&1 &
    server_pid=$!
    "$apiload" ready "$url" "$dir" "$since" 120 >"$results/$name-ready.out" 2>"$results/$name-ready.err" &&
        return 0
    problem "$name: the server did not get ready: $(tail -n 1 "$results/$name-ready.err")"
    return 1
}

# NAME OP ARGS...: one apiload run against the current server, its output
# plus the server's CPU and wall time and its memory afterwards in NAME.out.
phase() {
    local name=$1 op=$2 rc=0 c0 t0
    shift 2
    server_alive "$name" || {
        echo "skipped (no server)" >"$results/$name.err"
        return 0
    }
    echo "controllers-bench: $name" >&2
    server_cpu
    c0=$cpu_ticks
    now
    t0=$now_us
    "$apiload" "$op" "$url" "$datadir" "$@" >"$results/$name.out" 2>"$results/$name.err" || rc=$?
    now
    server_alive "$name" && server_cpu
    printf ' server_cpu_ticks=%d clk_tck=%d wall_us=%d %s\n' "$((cpu_ticks - c0))" \
        "$(getconf CLK_TCK)" "$((now_us - t0))" "$(memory)" >>"$results/$name.out"
    [ "$rc" -eq 0 ] || problem "$name: apiload exit $rc: $(grep -v 'pods-running t=' "$results/$name.err" | head -n 3 | tr '\n' ' ')"
}

# NAME: the server's CPU over 10 s of no client requests.
idle_cpu() {
    server_alive "$1" || return 0
    local c0
    server_cpu
    c0=$cpu_ticks
    sleep 10
    server_alive "$1" || return 0
    server_cpu
    echo "server_cpu_ticks=$((cpu_ticks - c0)) clk_tck=$(getconf CLK_TCK) wall_us=10000000" \
        >"$results/$1.out"
}

echo "controllers-bench: $nodes nodes, $pods pods, $threads clients; scale $big_nodes nodes," \
    "$big_pods pods in steps of $big_step for at most $big_budget s; port $port" >&2
# CPU of the machine and of our children (report.py's other_cpu reads these):
# on a busy machine the rates are noisy.
snapshot() {
    { head -n 1 /proc/stat && cat /proc/uptime && times; } >"$results/cpu.$1" 2>/dev/null || true
}
snapshot start

# ---- pods: created, scheduled, Running; PODS_RUNS times, each on a fresh
# server (the machine's speed varies from run to run; the report takes the
# median and shows each) ----
for run in $(seq 1 "$pods_runs"); do
    name=pods
    [ "$run" -eq 1 ] || name=pods-run$run
    if start_server "$name" "$work/$name" --nodes "$nodes"; then
        phase "$name-nodes" nodes-ready --count "$nodes" --since "$since" --timeout "$timeout"
        phase "$name-namespace" namespace --ns load
        phase "$name" pods-running --ns load --count "$pods" --threads "$threads" \
            --timeout "$timeout"
        if [ "$run" -eq 1 ]; then
            idle_cpu pods-idle
            echo "point=pods $(memory)" >>"$results/memory.txt"
        fi
    fi
    stop_server "$name"
done

# ---- the same pods on simulated nodes (--node-agents: each node's
# containerd, kubelet runtime state, driver; src/agents/), AGENTS_RUNS times,
# reported against the median run above ----
for run in $(seq 1 "$agents_runs"); do
    name=agents
    [ "$run" -eq 1 ] || name=agents-run$run
    if start_server "$name" "$work/$name" --nodes "$nodes" --node-agents; then
        phase "$name-nodes" nodes-ready --count "$nodes" --since "$since" --timeout "$timeout"
        phase "$name-namespace" namespace --ns load
        phase "$name" pods-running --ns load --count "$pods" --threads "$threads" \
            --timeout "$timeout"
    fi
    stop_server "$name"
done

# ---- DaemonSet: rollout and rolling update ----
if start_server ds "$work/ds" --nodes "$nodes"; then
    phase ds-nodes nodes-ready --count "$nodes" --since "$since" --timeout "$timeout"
    phase ds-namespace namespace --ns ds
    phase daemonset daemonset --ns ds --nodes "$nodes" --max-unavailable "$max_unavailable" \
        --timeout "$timeout"
    echo "point=daemonset $(memory)" >>"$results/memory.txt"
fi
stop_server daemonset

# ---- scale: pods in steps on BIG_NODES nodes, within the budget ----
if start_server big "$work/big" --nodes "$big_nodes"; then
    phase big-nodes nodes-ready --count "$big_nodes" --since "$since" --timeout "$timeout"
    echo "point=big-nodes $(memory)" >>"$results/memory.txt"
    phase big-namespace namespace --ns big
    now
    budget_end=$((now_us + big_budget * 1000000))
    done_pods=0 step=0 last_us=0
    while [ "$done_pods" -lt "$big_pods" ] && server_alive "scale step $step"; do
        now
        left_us=$((budget_end - now_us))
        # a step takes at least as long as the one before it (more pods)
        [ "$left_us" -gt "$last_us" ] || break
        count=$((big_pods - done_pods < big_step ? big_pods - done_pods : big_step))
        step=$((step + 1))
        wait_s=$((left_us / 1000000 > 0 ? left_us / 1000000 : 1))
        t0=$now_us
        phase "big-step-$step" pods-running --ns big --first "$done_pods" --count "$count" \
            --threads "$threads" --timeout "$wait_s"
        now
        last_us=$((now_us - t0))
        grep -q 'finished=1' "$results/big-step-$step.out" || break
        done_pods=$((done_pods + count))
        phase "big-list-$step" list --ns big --objects "$done_pods" --count 1 --threads 1
        echo "step=$step pods=$done_pods $(memory)" >>"$results/big-steps.txt"
    done
    echo "$step" >"$results/big-step-count.txt"
fi
stop_server scale

# ---- reference: the API server alone with the full scale ----
if [ "$reference" -eq 1 ] &&
    start_server ref "$work/ref" --nodes "$big_nodes" --no-controllers; then
    phase ref-namespace namespace --ns big
    phase ref-create create-pods --ns big --count "$big_pods" --nodes "$big_nodes" \
        --threads "$threads"
    echo "point=reference $(memory)" >>"$results/memory.txt"
    settle 60
    phase ref-list list --ns big --objects "$big_pods" --count 5 --threads 1
    echo "point=reference-after-lists $(memory)" >>"$results/memory.txt"
fi
stop_server reference
snapshot end

status=0
"$python" - "$results" "$out/controllers.json" "$root/bench" "$nodes" "$pods" "$threads" \
    "$timeout" "$max_unavailable" "$big_nodes" "$big_pods" "$big_step" "$big_budget" \
    "$reference" "$pods_runs" "$agents_runs" <<'PY' || status=$?
import datetime, json, math, os, platform, sys

results, json_out, bench_dir = sys.argv[1:4]
nodes, pods, threads, timeout = (int(x) for x in sys.argv[4:8])
max_unavailable = sys.argv[8]
big_nodes, big_pods, big_step, big_budget, reference, pods_runs, agents_runs = (
    int(x) for x in sys.argv[9:16])
sys.path.insert(0, bench_dir)
from report import other_cpu, words  # noqa: E402  (shared with the TOML report)
from report import read as read_path  # noqa: E402
MB = 1e6
RUNNING_TARGET = 2000.0
RSS_TARGET_MB = 1500.0
LIST_TARGET_MS = 1000.0


def read(name, default=""):
    return read_path(os.path.join(results, name), default)


def phase(name):
    """The KEY=VALUE words of NAME.out (every line), or {"error": ...}."""
    d = words(read(name + ".out"))
    err = "\n".join(x for x in read(name + ".err").splitlines() if " t=" not in x).strip()
    if not d or ("op" not in d and "finished" not in d and "nodes" not in d
                 and "server_cpu_ticks" not in d):
        return {"error": err[:300] or "no result"}
    if d.get("clk_tck") and d.get("wall_us"):
        d["server_cpu_s"] = d["server_cpu_ticks"] / d["clk_tck"]
        d["server_cores"] = d["server_cpu_s"] / (d["wall_us"] / 1e6)
    if err:
        d["stderr"] = err[:1000]
    progress = [words(x.split(": pods-running ", 1)[1])
                for x in read(name + ".err").splitlines() if ": pods-running t=" in x]
    if progress:
        d["progress"] = progress
    return d


def mb(kib):
    return None if kib is None else kib * 1024 / MB


def fmt(v, unit="", digits=1):
    return "-" if v is None or v < 0 else ("%.*f%s" % (digits, v, unit))


def verdict(ok, note=""):
    return "-" if ok is None else ("met" if ok else "NOT met") + note


problems = read("problems.txt").splitlines()
memory = {}
for line in read("memory.txt").splitlines():
    w = words(line)
    memory[w.pop("point")] = w

# ---- pods: the median of the runs is reported (a run that did not finish
# counts as the slowest) ----
run_names = ["pods"] + ["pods-run%d" % r for r in range(2, pods_runs + 1)]
runs = [phase(n) for n in run_names]


def run_rate(d):
    return d.get("running_rate", 0.0) if d.get("finished") == 1.0 else -1.0


by_rate = sorted(range(len(runs)), key=lambda i: run_rate(runs[i]))
median_at = by_rate[len(by_rate) // 2]
p_nodes, p = phase(run_names[median_at] + "-nodes"), runs[median_at]
idle = phase("pods-idle")
finished = p.get("finished") == 1.0
running_rate = p.get("running_rate") if finished else None
pods_ok = None if "error" in p else bool(finished and running_rate >= RUNNING_TARGET)

# ---- the same with node agents: the median of its runs ----
agent_names = ["agents"] + ["agents-run%d" % r for r in range(2, agents_runs + 1)]
agent_runs = [phase(n) for n in agent_names]
agents_at = sorted(range(len(agent_runs)), key=lambda i: run_rate(agent_runs[i]))[
    len(agent_runs) // 2]
a_nodes, a = phase(agent_names[agents_at] + "-nodes"), agent_runs[agents_at]

# ---- daemonset ----
d_nodes, ds = phase("ds-nodes"), phase("daemonset")

# ---- scale ----
steps = []
for line in read("big-steps.txt").splitlines():
    w = words(line)
    s = phase("big-step-%d" % w["step"])
    lst = phase("big-list-%d" % w["step"])
    steps.append({"step": int(w["step"]), "pods": int(w["pods"]), "rss_kib": w.get("rss_kib"),
                  "hwm_kib": w.get("hwm_kib"), "running_seconds": s.get("running_seconds"),
                  "running_rate": s.get("running_rate"), "create_rps": s.get("rps"),
                  "server_cores": s.get("server_cores"), "list_ms": lst.get("p50_ms"),
                  "list_errors": lst.get("errors")})
count = int(read("big-step-count.txt", "0").strip() or 0)
unfinished = None
if count > len(steps):
    u = phase("big-step-%d" % count)
    unfinished = {"step": count, "first": len(steps) and steps[-1]["pods"],
                  "running": u.get("running"), "added": u.get("added"),
                  "timeout_s": u.get("timeout_s"), "rss_kib": u.get("rss_kib")}
big_n = phase("big-nodes")
reached = steps[-1]["pods"] if steps else 0


def fit(xs, ys):
    """Least squares line y = a + b x, or None with fewer than 2 points."""
    if len(xs) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


rss_at_big = None
rss_label = "measured"
if reached >= big_pods:
    rss_at_big = mb(steps[-1]["rss_kib"])
else:
    # the nodes alone (0 pods) are a point of the line too
    points = [(0, memory.get("big-nodes", {}).get("rss_kib"))] + \
        [(s["pods"], s["rss_kib"]) for s in steps]
    points = [(x, mb(y)) for x, y in points if y]
    line = fit([x for x, _ in points], [y for _, y in points])
    if line:
        rss_at_big = line[0] + line[1] * big_pods
        rss_label = "extrapolated (line over %d points)" % len(points)
# The time each step took grows with the pods already there: a line over the
# steps' seconds gives the time for all of BIG_PODS (a sum over the steps).
time_to_big = None
if steps and reached < big_pods:
    line = fit([s["pods"] - big_step for s in steps], [s["running_seconds"] for s in steps])
    if line:
        time_to_big = sum(max(0.0, line[0] + line[1] * k)
                          for k in range(0, big_pods, big_step))
list_big_ms = steps[-1]["list_ms"] if steps else None
ref_create, ref_list = phase("ref-create"), phase("ref-list")
ref_mem = memory.get("reference", {})
rss_ok = None if rss_at_big is None else rss_at_big <= RSS_TARGET_MB
list_ok = None
if ref_list.get("p50_ms") is not None:
    list_ok = ref_list["p50_ms"] <= LIST_TARGET_MS and not ref_list.get("errors")

# ---- report ----
print("gpuop control plane (controllers in gpuop-apiserver) on %d CPUs; client: apiload, %d"
      " threads" % (os.cpu_count() or 0, threads))
print("MB = 10^6 bytes. Client and server share the CPUs. Rates count from the first POST.")
busy = other_cpu(results)
if busy:
    print("Other processes used %.1f CPU-s of %.1f available (%.0f%%) during the run%s" % (
        busy["other_cpu_s"], busy["available_cpu_s"], 100 * busy["other_share"],
        ": rates are noisy, compare on an idle machine" if busy["other_share"] > 0.05 else "."))
print()


def nodes_line(label, n, d):
    if "error" in d:
        print("  %-60s FAILED: %s" % (label, d["error"]))
        return
    t = d.get("ready_seconds")
    print("  %-60s %9s %12s" % (label, fmt(t, " s", 2),
                                 "-" if not t or t < 0 else "%.0f nodes/s" % (n / t)))


print("%-62s %9s %12s   %s" % ("pods: %d pods on %d nodes, median of %d runs" % (
    pods, nodes, len(runs)), "time", "rate", "target"))
nodes_line("%d nodes: server exec -> all Ready" % nodes, nodes, p_nodes)
if "error" in p:
    print("  FAILED: %s" % p["error"])
else:
    cores = p.get("server_cores")
    print("  %-60s %9s %10s/s" % ("created (POST, %d clients)" % threads,
                                  fmt(p.get("seconds"), " s", 2), fmt(p.get("rps"), "", 0)))
    print("  %-60s %9s %10s/s" % ("scheduled (all bound, as the watch saw)",
                                  fmt(p.get("scheduled_seconds"), " s", 2),
                                  fmt(p.get("scheduled_rate"), "", 0)))
    print("  %-60s %9s %10s/s   >= %.0f/s %s" % (
        "Running, end to end" + ("" if finished else " (NOT all within %d s: %d of %d)"
                                 % (timeout, p.get("running", 0), pods)),
        fmt(p.get("running_seconds"), " s", 2), fmt(p.get("running_rate"), "", 0),
        RUNNING_TARGET, verdict(pods_ok)))
    if len(runs) > 1:
        print("  %-60s %22s" % ("Running/s of each run, in order (the median's figures shown)",
                                ", ".join(fmt(run_rate(r), "", 0) for r in runs)))
    print("  %-60s %9s / %s" % ("per pod: created -> bound, p50 / p99",
                                fmt(p.get("bind_p50_ms"), " ms", 0),
                                fmt(p.get("bind_p99_ms"), " ms", 0)))
    print("  %-60s %9s / %s" % ("per pod: created -> Running, p50 / p99",
                                fmt(p.get("e2e_p50_ms"), " ms", 0),
                                fmt(p.get("e2e_p99_ms"), " ms", 0)))
    print("  %-60s %9s" % ("server CPU over the phase (cores busy on average)",
                           fmt(cores, " cores", 2)))
    print("  %-60s %9s" % ("server CPU when idle afterwards (10 s, no requests)",
                           fmt(idle.get("server_cpu_s"), " CPU-s", 1)))
    print("  %-60s %9s" % ("server RSS with the %d pods Running" % pods,
                           fmt(mb(memory.get("pods", {}).get("rss_kib")), " MB")))
print()
print("%-62s %9s %12s   %s" % ("the same with node agents (--node-agents), median of %d runs" % (
    len(agent_runs)), "time", "rate", "vs agents off"))
nodes_line("%d nodes: server exec -> all Ready" % nodes, nodes, a_nodes)
if "error" in a:
    print("  FAILED: %s" % a["error"])
else:
    a_rate, off_rate = run_rate(a), run_rate(p)
    vs = "%.2fx" % (a_rate / off_rate) if a_rate > 0 and off_rate > 0 else "-"
    print("  %-60s %9s %10s/s   %s" % (
        "Running, end to end" + ("" if a.get("finished") == 1.0 else " (NOT all within %d s)"
                                 % timeout),
        fmt(a.get("running_seconds"), " s", 2), fmt(a.get("running_rate"), "", 0), vs))
    if len(agent_runs) > 1:
        print("  %-60s %22s" % ("Running/s of each run, in order",
                                ", ".join(fmt(run_rate(r), "", 0) for r in agent_runs)))
    print("  %-60s %9s / %s" % ("per pod: created -> Running, p50 / p99",
                                fmt(a.get("e2e_p50_ms"), " ms", 0),
                                fmt(a.get("e2e_p99_ms"), " ms", 0)))
print()
print("%-62s %9s %12s   %s" % ("DaemonSet on %d nodes, maxUnavailable %s" % (nodes, max_unavailable),
                               "time", "rate", "check"))
nodes_line("%d nodes: server exec -> all Ready" % nodes, nodes, d_nodes)
if "error" in ds:
    print("  FAILED: %s" % ds["error"])
else:
    for key, label in (("rollout", "create -> desired == available == updated == %d" % nodes),
                       ("update", "image change -> updated == available == %d" % nodes)):
        secs = ds.get(key + "_seconds")
        rate_note = "-" if not secs or secs < 0 else "%.0f nodes/s" % (nodes / secs)
        print("  %-60s %9s %12s" % (label if secs and secs > 0 else
                                    label + " (NOT within %d s)" % timeout,
                                    fmt(secs, " s", 2), rate_note))
        claimed = ds.get(key + "_claimed_ms")
        if claimed is not None and claimed >= 0:
            print("    the status said done at %.0f ms while the pods were not (WRONG)" % claimed)
    allowed = ds.get("max_unavailable_allowed")
    most = ds.get("update_max_unavailable")
    print("  %-60s %9s %12s   <= %s %s" % (
        "update: most nodes unavailable at once (desired - available)", fmt(most, "", 0), "",
        fmt(allowed, "", 0),
        verdict(None if most is None or allowed is None else most <= allowed)))
    print("  %-60s %9s" % ("update: distinct updatedNumberScheduled values seen (batches)",
                           fmt(ds.get("update_steps"), "", 0)))
    print("  %-60s %9s" % ("server CPU over the phase (cores busy on average)",
                           fmt(ds.get("server_cores"), " cores", 2)))
print()
print("scale: %d nodes, pods in steps of %d, at most %d s (%d pods wanted)"
      % (big_nodes, big_step, big_budget, big_pods))
nodes_line("%d nodes: server exec -> all Ready" % big_nodes, big_nodes, big_n)
print("  %-8s %10s %10s %10s %10s %10s %12s" % ("pods", "step s", "Running/s", "server", "VmRSS",
                                                 "VmHWM", "LIST all"))
for s in steps:
    print("  %-8d %10s %10s %10s %10s %10s %12s" % (
        s["pods"], fmt(s["running_seconds"], "", 2), fmt(s["running_rate"], "", 0),
        fmt(s["server_cores"], " cores", 2), fmt(mb(s["rss_kib"]), " MB"),
        fmt(mb(s["hwm_kib"]), " MB"), fmt(s["list_ms"], " ms", 0)))
if unfinished:
    print("  step %d (pods %d..): NOT all Running within the %s s left: %s of %s" % (
        unfinished["step"], unfinished["first"], fmt(unfinished["timeout_s"], "", 0),
        fmt(unfinished["running"], "", 0), fmt(unfinished["added"], "", 0)))
print("  %-60s %9s   <= %.0f MB %s" % (
    "RSS at %d nodes, %d pods: %s" % (big_nodes, big_pods, rss_label), fmt(rss_at_big, " MB"),
    RSS_TARGET_MB, verdict(rss_ok, "" if rss_label == "measured" else " (extrapolated)")))
if time_to_big is not None:
    print("  %-60s %9s" % ("time to get %d pods Running: extrapolated (line over the steps)"
                           % big_pods, fmt(time_to_big / 60, " min", 0)))
if reference:
    print("  reference, the API server alone (--no-controllers), %d nodes + %d Pending pods:"
          % (big_nodes, big_pods))
    if "error" in ref_create:
        print("    FAILED: %s" % ref_create["error"])
    else:
        print("  %-60s %9s" % ("  created (POST, %d clients)" % threads,
                               fmt(ref_create.get("rps"), "/s", 0)))
        print("  %-60s %9s" % ("  VmRSS", fmt(mb(ref_mem.get("rss_kib")), " MB")))
        print("  %-60s %9s   <= %.0f ms %s" % ("  LIST of all %d pods (median of 5)" % big_pods,
                                               fmt(ref_list.get("p50_ms"), " ms", 0),
                                               LIST_TARGET_MS, verdict(list_ok)))
        # the first LIST after the creates sorts the keys once, and the
        # client's buffer grows to the answer's size: the slowest of the 5
        print("  %-60s %9s" % ("  LIST of all, the slowest of the 5 (the first)",
                               fmt(ref_list.get("max_ms"), " ms", 0)))
print()
published = [
    {"what": "kwok: creation rate", "value": "20 nodes or pods per second", "rate": 20.0,
     "source": "https://github.com/kubernetes-sigs/kwok/blob/main/README.md"},
    {"what": "kwok: CI benchmark budget, kwokctl_benchmark_test.sh",
     "value": "1,000 pods Running and 1,000 nodes Ready, each within 120 s",
     "source": "https://github.com/kubernetes-sigs/kwok/blob/main/test/kwokctl/kwokctl_benchmark_test.sh"},
]
print("published figures (quoted from their sources, NOT measured here)")
for pub in published:
    print("  %s: %s" % (pub["what"], pub["value"]))
    print("      %s" % pub["source"])
    if "rate" in pub and p.get("running_rate"):
        pub["compared"] = "our pods Running %.0f/s (%.0fx)" % (
            p["running_rate"], p["running_rate"] / pub["rate"])
        print("      here: " + pub["compared"])
print()
print("target >= %.0f pods/s Running at %d nodes: %s" % (RUNNING_TARGET, nodes, verdict(pods_ok)))
print("target RSS <= %.0f MB at %d nodes and %d pods: %s%s" % (
    RSS_TARGET_MB, big_nodes, big_pods, verdict(rss_ok),
    "" if rss_label == "measured" or rss_ok is None else " (extrapolated from %d pods)" % reached))
print("target LIST of all %d pods <= 1 s: %s%s" % (
    big_pods, verdict(list_ok), " (API server alone)" if list_ok is not None else ""))
if problems:
    print()
    print("SERVER PROBLEMS (the numbers above are incomplete or wrong):")
    for line in problems:
        print("  " + line)

doc = {
    "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
    "machine_load": busy,
    "parameters": {"nodes": nodes, "pods": pods, "threads": threads, "timeout_s": timeout,
                   "max_unavailable": max_unavailable, "big_nodes": big_nodes,
                   "big_pods": big_pods, "big_step": big_step, "big_budget_s": big_budget,
                   "reference": bool(reference)},
    "units": {"seconds": "wall clock from the first POST (pods) or the write (daemonset)",
              "rate": "per second", "kib": "KiB from /proc/PID/status", "MB": "10^6 bytes"},
    "pods": {"nodes_ready": p_nodes, "run": p, "runs": runs, "median_run": median_at + 1,
             "idle": idle, "memory": memory.get("pods")},
    "agents": {"nodes_ready": a_nodes, "run": a, "runs": agent_runs,
               "median_run": agents_at + 1},
    "daemonset": {"nodes_ready": d_nodes, "run": ds, "memory": memory.get("daemonset")},
    "scale": {"nodes_ready": big_n, "steps": steps, "unfinished_step": unfinished,
              "reached_pods": reached, "rss_at_big_pods_mb": rss_at_big,
              "rss_at_big_pods_is": rss_label, "minutes_to_big_pods_extrapolated":
              None if time_to_big is None else time_to_big / 60,
              "reference_no_controllers": {"create": ref_create, "list": ref_list,
                                           "memory": ref_mem,
                                           "memory_after_lists":
                                           memory.get("reference-after-lists")}},
    "published_not_measured": published,
    "targets": {"running_ge_2000_per_s": pods_ok, "rss_le_1500MB": rss_ok,
                "rss_is": rss_label, "list_all_le_1s": list_ok},
    "problems": problems,
}
with open(json_out + ".tmp", "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(json_out + ".tmp", json_out)
sys.exit(1 if problems else 0)
PY
echo "controllers-bench: results in $out/controllers.json" >&2
[ "$failed" -eq 0 ] || [ "$status" -ne 0 ] || status=1
exit "$status"

#!/usr/bin/env bats
# `gpuop lab incident`: each scenario replayed from a healthy cluster to its
# broken state, then repaired through kubectl, the node's files and `gpuop
# node` alone, as a learner would, and graded on the live state. These test
# the wiring (the agents use gpuop's own predictions; their agreement with
# the real containerd is the containerd tests'). The chain's messages are
# the real ones:
# - Ready False "container runtime is down": kubernetes/kubernetes
#   pkg/kubelet/runtime.go runtimeErrors (reason KubeletNotReady,
#   pkg/kubelet/nodestatus/setters.go ReadyCondition).
# - "invalid plugin config: no corresponding runtime configured in
#   `containerd.runtimes` for `containerd` `default_runtime_name = \"runc\""
#   containerd 1.6 pkg/cri/config/config.go ValidatePluginConfig.
# - FailedCreatePodSandBox "Failed to create pod sandbox: %v"
#   pkg/kubelet/kuberuntime/kuberuntime_manager.go; "failed to get sandbox
#   runtime: no runtime for %q is configured" containerd 1.6
#   pkg/cri/server/sandbox_run.go.
# - "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." the
#   scheduler's fit plugin (pkg/scheduler/framework/plugins/noderesources/
#   fit.go) and its diagnosis (schedule_one.go).
# HOME and KUBECONFIG in a temporary directory; one workspace for the file.

bats_require_minimum_version 1.5.0

load until_output

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    export LTMP="$BATS_FILE_TMPDIR"
    export HOME=$LTMP/home
    export KUBECONFIG=$LTMP/kubeconfig
    export WS=$LTMP/ws
    export DATA=$LTMP/incident
    mkdir -p "$HOME"
}

teardown_file() {
    "$GPUOP" cluster down --data "$DATA" >/dev/null 2>&1 || true
}

k() {
    kubectl --cache-dir "$LTMP/cache" --request-timeout=10s "$@"
}

replay() {
    "$GPUOP" lab incident --root "$WS" --data "$DATA" --scenario "$1" >"$LTMP/replay.log" 2>&1
}

check_json() {
    "$GPUOP" lab incident check --root "$WS" -o json
}

# The codes of the conditions that fail, one a line.
failing() {
    check_json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for c in doc["steps"][0]["conditions"]:
    if not c["passed"]:
        print(c["code"])'
}

answer() {
    printf '%s\n' "$@" >"$WS/out/incident.txt"
}

node_dir() {
    echo "$DATA/nodes/$1"
}

@test "usage: an unknown scenario, another cluster, no incident yet" {
    run "$GPUOP" lab incident --root "$WS" --scenario kernel-upgrade
    [ "$status" -eq 2 ]
    [[ "$output" == *"there is no scenario 'kernel-upgrade'"* ]]
    run "$GPUOP" lab incident --root "$WS" --kubeconfig "$LTMP/none"
    [ "$status" -eq 2 ]
    [[ "$output" == *"embedded cluster"* ]]
    "$GPUOP" lab init --root "$WS" >/dev/null
    run "$GPUOP" lab incident check --root "$WS"
    [ "$status" -eq 2 ]
    [[ "$output" == *"no incident in"* ]]
    # --data naming someone else's directory: refused, nothing moved
    mkdir -p "$LTMP/other" && echo keep >"$LTMP/other/notes.txt"
    run "$GPUOP" lab incident --root "$WS" --data "$LTMP/other"
    [ "$status" -eq 2 ]
    [[ "$output" == *"is not a gpuop cluster's data directory, and not empty"* ]]
    [ "$(cat "$LTMP/other/notes.txt")" = keep ]
    ! ls -d "$LTMP/other".backup-* 2>/dev/null
    run "$GPUOP" lab incident steps 3 --root "$WS"
    [ "$status" -eq 2 ]
    [[ "$output" == *"takes no step number"* ]]
}

@test "containerd-1.6: the bare drop-in signalled in; every node NotReady, the jobs Pending" {
    replay containerd-1.6
    grep -q 'CRI failed: invalid plugin config: no corresponding runtime configured in `containerd.runtimes` for `containerd` `default_runtime_name = "runc"' "$LTMP/replay.log"
    for n in 0 1 2; do
        run k get node lab-node-$n -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.reason} {.message}{end}'
        [ "$output" = "False KubeletNotReady container runtime is down" ]
    done
    run k get pod -n gpu-lab cuda-job-0 -o jsonpath='{.status.phase}'
    [ "$output" = "Pending" ]
    run "$GPUOP" lab incident check --root "$WS"
    [ "$status" -eq 1 ]
    [[ "$output" == *"incident.lab-node-0.loaded"* ]]
    run "$GPUOP" lab status --root "$WS"
    [[ "$output" == *"Incident:  containerd-1.6, data in "* ]]
}

@test "containerd-1.6: the field tools name the layer on the simulated nodes" {
    run "$GPUOP" why-pending gpu-lab/cuda-job-0
    [ "$status" -eq 1 ]
    [[ "$output" == *"the chain breaks at container-runtime: 3 node(s) NotReady: container runtime is down"* ]]
    [[ "$output" == *"a restart alone reloads the same files"* ]]
    run "$GPUOP" node status lab-node-0
    [ "$status" -eq 1 ]
    [[ "$output" == *"the files make the CRI plugin fail"* ]]
    # --node finds the simulated node's daemon, not this machine's socket
    run "$GPUOP" containerd check nvidia --node lab-node-0
    [ "$status" -eq 1 ]
    [[ "$output" == *"node lab-node-0 is simulated: asking its containerd at $(node_dir lab-node-0)/run/containerd/containerd.sock"* ]]
    [[ "$output" == *"nvidia: NOT loaded"* ]]
}

@test "containerd-1.6: repaired files and a restart bring the nodes back; the toolkit still breaks it" {
    answer LAYER=containerd-config NODES=lab-node-0,lab-node-1,lab-node-2
    for n in 0 1 2; do
        # every runtime the node needs in the drop-in: 1.6 replaces the
        # main file's runtimes with it
        cat >"$(node_dir lab-node-$n)/etc/containerd/conf.d/99-nvidia.toml" <<'EOF'
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes]
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    options = { SystemdCgroup = true }
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
    runtime_type = "io.containerd.runc.v2"
    options = { BinaryName = "/usr/bin/nvidia-container-runtime", SystemdCgroup = true }
EOF
        "$GPUOP" node restart-containerd lab-node-$n
    done
    SECS=60 until_output "Running Running Running" get pods -n gpu-lab \
        -o jsonpath='{.items[*].status.phase}'
    run failing
    [ "$output" = "incident.toolkit.durable" ]
}

@test "containerd-1.6: the toolkit set right, the incident is repaired" {
    k set env daemonset/nvidia-container-toolkit-daemonset -n gpu-operator GPUOP_TOOLKIT_VARIANT-
    # the new pods clean up and write the toolkit's own drop-in, restarting containerd
    for _ in $(seq 1 150); do
        run "$GPUOP" lab incident check --root "$WS"
        [ "$status" -eq 0 ] && break
        sleep 1
    done
    [ "$status" -eq 0 ]
    [[ "$output" == *"PASS (21/21)"* ]]
}

@test "containerd-1.6: wrong answers fail, right ones written differently pass" {
    local wrong=(
        "LAYER=kubelet|NODES=lab-node-0,lab-node-1,lab-node-2|incident.answer.layer"
        "LAYER=containerd-not-restarted|NODES=lab-node-0,lab-node-1,lab-node-2|incident.answer.layer"
        "LAYER=device-plugin|NODES=lab-node-0,lab-node-1,lab-node-2|incident.answer.layer"
        "LAYER=containerd-config|NODES=lab-node-0|incident.answer.nodes"
        "LAYER=containerd-config|NODES=lab-node-0,lab-node-1,lab-node-2,lab-node-3|incident.answer.nodes"
        "LAYER=containerd-config|NODE=lab-node-0,lab-node-1,lab-node-2|incident.answer.nodes"
    )
    for w in "${wrong[@]}"; do
        IFS='|' read -r layer nodes code <<<"$w"
        answer "$layer" "$nodes"
        run failing
        [ "$output" = "$code" ] || { echo "$w: $output"; return 1; }
    done
    local right=(
        "LAYER = containerd-config|NODES = lab-node-2, lab-node-0 , lab-node-1"
        "# the drop-in replaced runc|LAYER=Containerd-Config|NODES=lab-node-1,lab-node-0,lab-node-2"
    )
    for r in "${right[@]}"; do
        IFS='|' read -ra lines <<<"$r"
        answer "${lines[@]}"
        run "$GPUOP" lab incident check --root "$WS"
        [ "$status" -eq 0 ] || { echo "$r: $output"; return 1; }
    done
}

@test "not-restarted: the files say nvidia, the daemon does not; restarts repair it" {
    replay not-restarted
    local msg='Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured'
    until_output "$msg" get events -n gpu-operator --field-selector reason=FailedCreatePodSandBox \
        -o jsonpath='{.items[0].message}'
    run k get node lab-node-0 -o jsonpath='{.status.capacity.nvidia\.com/gpu}'
    [ "$output" = "" ]
    grep -q 'runtimes.nvidia' "$(node_dir lab-node-0)/etc/containerd/conf.d/99-nvidia.toml"
    # the answer of the last scenario went aside with it
    [ ! -e "$WS/out/incident.txt" ]
    answer LAYER=containerd-config NODES=lab-node-0,lab-node-1,lab-node-2
    run failing
    [[ "$output" == *"incident.answer.layer"* ]]
    [[ "$output" == *"incident.lab-node-2.loaded"* ]]
    [[ "$output" != *"incident.lab-node-2.restart"* ]]
    # numbers patched into node status are not an advertisement: no plugin registered them
    k patch node lab-node-0 --subresource=status --type=merge \
        -p '{"status":{"capacity":{"nvidia.com/gpu":"4"},"allocatable":{"nvidia.com/gpu":"4"}}}'
    run check_json
    [[ "$output" == *"4 in node status, but no device plugin registered them"* ]]
    for n in 0 1 2; do "$GPUOP" node restart-containerd lab-node-$n; done
    SECS=60 until_output "Running Running Running" get pods -n gpu-lab \
        -o jsonpath='{.items[*].status.phase}'
    answer LAYER=containerd-not-restarted NODES=lab-node-0,lab-node-1,lab-node-2
    run "$GPUOP" lab incident check --root "$WS"
    [ "$status" -eq 0 ]
}

@test "kernel-update: Ready without GPUs; the module rebuilt and a reboot repair it" {
    replay kernel-update
    run k get node lab-node-1 -o jsonpath='{.status.nodeInfo.kernelVersion} {.status.allocatable.nvidia\.com/gpu}'
    [ "$output" = "6.1.0-19-amd64 0" ]
    run k get node lab-node-1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
    [ "$output" = "True" ]
    local pending
    pending=$(k get pods -n gpu-lab --field-selector status.phase=Pending -o name)
    [ -n "$pending" ]
    run k get "$pending" -n gpu-lab -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
    [[ "$output" == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."* ]]
    # the scheduler counts right: the capacity went with lab-node-1's plugin
    # (once its plugin has crashed: it starts, then NVML fails)
    for _ in $(seq 1 60); do
        run "$GPUOP" why-pending "gpu-lab/${pending#pod/}"
        [[ "$output" == *"the chain breaks at device-plugin"* ]] && break
        sleep 0.5
    done
    [[ "$output" == *"the chain breaks at device-plugin: too few nvidia.com/gpu: lab-node-1 lost them"* ]]
    # the next step it names, the plugin's log, shows why (internal/plugin/factory.go's words)
    local plugin
    plugin=$(k get pods -n gpu-operator --field-selector spec.nodeName=lab-node-1 -o name | grep device-plugin)
    # (its start after the reboot: until then the log is the boot before's)
    SECS=30 until_output $'Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\nnvml init failed: ERROR_LIBRARY_NOT_FOUND' \
        logs -n gpu-operator "$plugin"
    # a container no agent runs still gets kwok's answer (a job that runs:
    # the one submitted again is Pending, and an unbound pod's log is empty)
    local running
    running=$(k get pods -n gpu-lab --field-selector status.phase=Running -o name | head -1)
    run k logs -n gpu-lab "$running"
    [[ "$output" == *"no logs found for container \"cuda\" in pod \"gpu-lab/${running#pod/}\""* ]]
    answer LAYER=nvidia-driver NODES=lab-node-1
    run failing
    [[ "$output" == *"incident.lab-node-1.driver"* ]]
    [[ "$output" != *"incident.lab-node-0."* ]]
    # what DKMS does: the module built for the kernel that boots
    sed -i 's/^kernel = "6.1.0-18-amd64"$/kernel = "6.1.0-19-amd64"/' "$(node_dir lab-node-1)/node.toml"
    "$GPUOP" node reboot lab-node-1
    SECS=60 until_output "Running Running Running" get pods -n gpu-lab \
        -o jsonpath='{.items[*].status.phase}'
    run "$GPUOP" lab incident check --root "$WS"
    [ "$status" -eq 0 ]
}

@test "solve: the reference repair diagnoses the node and passes the grader" {
    replay kernel-update
    run "$GPUOP" lab incident check --root "$WS"
    [ "$status" -eq 1 ]
    run "$GPUOP" lab incident solve --root "$WS"
    [ "$status" -eq 0 ]
    grep -qx 'LAYER=nvidia-driver' "$WS/out/incident.txt"
    grep -qx 'NODES=lab-node-1' "$WS/out/incident.txt"
    run "$GPUOP" lab incident check --root "$WS" -o junit
    [ "$status" -eq 0 ]
    [[ "$output" == *'<testsuite name="incident: '* ]]
    # the node's old node.toml is gpuop's, the previous data directory kept
    ls -d "$DATA".backup-* >/dev/null
}

@test "the eight steps on simulated nodes: step 6 is the device plugin's, a patch is not" {
    local ws=$LTMP/ws8 data=$LTMP/data8
    "$GPUOP" lab up --root "$ws" --data "$data" --node-agents >/dev/null 2>&1
    run "$GPUOP" lab steps 6 --root "$ws"
    [[ "$output" == *"nvcr.io/nvidia/k8s-device-plugin:v0.17.0"* ]]
    "$GPUOP" lab solve 5 --root "$ws" >/dev/null 2>&1
    # the hand patch of the default mode: numbers in status, no registration
    k patch node lab-node-0 --subresource=status --type=merge \
        -p '{"status":{"capacity":{"nvidia.com/gpu":"4"},"allocatable":{"nvidia.com/gpu":"4"}}}'
    run "$GPUOP" lab check 6 --root "$ws" -o json
    [ "$status" -eq 1 ]
    [[ "$output" == *'"code": "cluster.node0.plugin"'*'"passed": false'* ]]
    run "$GPUOP" lab solve --root "$ws"
    [ "$status" -eq 0 ]
    run "$GPUOP" lab check --root "$ws"
    "$GPUOP" lab down --root "$ws" >/dev/null 2>&1
    [ "$status" -eq 0 ]
    [[ "$output" == *"Result: 8/8 steps passed"* ]]
    [ -f "$ws/k8s/device-plugin.yaml" ]
}

@test "incident down gives kubectl back to the eight steps' cluster" {
    local ws=$LTMP/ws9
    "$GPUOP" lab up --root "$ws" --data "$LTMP/data9" >/dev/null 2>&1
    local lab_server
    lab_server=$(kubectl config view --kubeconfig "$LTMP/data9/kubeconfig" --minify \
        -o jsonpath='{.clusters[0].cluster.server}')
    "$GPUOP" lab incident --root "$ws" --data "$LTMP/inc9" --scenario not-restarted >/dev/null 2>&1
    run kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'
    [ "$output" != "$lab_server" ]
    "$GPUOP" lab incident down --root "$ws" >/dev/null 2>&1
    run kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'
    "$GPUOP" lab down --root "$ws" >/dev/null 2>&1
    [ "$output" = "$lab_server" ]
}

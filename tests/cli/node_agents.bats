#!/usr/bin/env bats
# Simulated nodes (`gpuop cluster up --node-agents`) driven through the
# real kubectl and `gpuop node` alone: the incident's chain, files written
# -> daemon not restarted -> handler not loaded -> device-plugin pods cannot
# start -> no nvidia.com/gpu, and its repair. These test the wiring: the
# agents use gpuop's own predictions, whose agreement with the real
# containerd is the containerd tests'. The messages are the real ones:
# - FailedCreatePodSandBox "Failed to create pod sandbox: %v" is
#   kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go;
#   "failed to get sandbox runtime: no runtime for %q is configured" is
#   containerd 1.6/1.7 pkg/cri/server/sandbox_run.go (getSandboxRuntime,
#   helpers.go), the gRPC wrapping "rpc error: code = Unknown desc = ".
# - Ready False "container runtime is down" is pkg/kubelet/runtime.go
#   runtimeErrors (30 s after the last Status that worked, kubelet.go
#   maxWaitForContainerRuntime), reason KubeletNotReady
#   pkg/kubelet/nodestatus/setters.go ReadyCondition.
# - the kubelet's start against a containerd without CRI: "validate CRI v1
#   runtime API for endpoint %q: %w" staging/src/k8s.io/cri-client/pkg/
#   remote_runtime.go, "failed to run Kubelet: %w" cmd/kubelet/app/
#   server.go; the node then posts nothing and the node lifecycle controller
#   writes Unknown "Kubelet stopped posting node status."
#   (pkg/controller/nodelifecycle/node_lifecycle_controller.go).
# - "invalid plugin config: no corresponding runtime configured in
#   `containerd.runtimes` for `containerd` `default_runtime_name = \"runc\""
#   containerd 1.6 pkg/cri/config/config.go ValidatePluginConfig.
# One cluster for the file; HOME and KUBECONFIG in a temporary directory.

bats_require_minimum_version 1.5.0

load until_output

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    export LTMP="$BATS_FILE_TMPDIR"
    export HOME=$LTMP/home
    export KUBECONFIG=$LTMP/kubeconfig
    mkdir -p "$HOME"
    "$GPUOP" cluster up --data "$LTMP/data" --lab --node-agents \
        --node-monitor-grace-period 5s >"$LTMP/up.log" 2>&1
}

teardown_file() {
    "$GPUOP" cluster down --data "$LTMP/data" >/dev/null 2>&1 || true
}

k() {
    kubectl --cache-dir "$LTMP/cache" --request-timeout=10s "$@"
}

ready_of() {
    k get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
}

node_dir() {
    echo "$LTMP/data/nodes/$1"
}

@test "every fake node gets a simulated containerd under the data directory" {
    until_output "True" get node lab-node-0 -o \
        jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
    [ -f "$(node_dir lab-node-0)/etc/containerd/config.toml" ]
    [ -f "$(node_dir lab-node-0)/node.toml" ]
    [ -S "$(node_dir lab-node-0)/run/containerd/containerd.sock" ]
    run k get node lab-node-0 -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}'
    [ "$output" = "containerd://1.6.20~ds1" ]
    run "$GPUOP" node files lab-node-0
    [ "$status" -eq 0 ]
    [[ "$output" == *"$(node_dir lab-node-0)/etc/containerd/conf.d/"* ]]
}

@test "toolkit with restart mode none: the files say nvidia, the daemon does not, no GPU" {
    k apply -f - <<'EOF'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: nvidia}
handler: nvidia
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-container-toolkit-daemonset, namespace: gpu-operator}
spec:
  selector: {matchLabels: {app: toolkit}}
  template:
    metadata: {labels: {app: toolkit}}
    spec:
      nodeSelector: {kubernetes.io/hostname: lab-node-1}
      containers:
      - name: nvidia-container-toolkit-ctr
        image: nvcr.io/nvidia/k8s/container-toolkit:v1.18.1-ubuntu20.04
        env:
        - {name: RUNTIME, value: containerd}
        - {name: RUNTIME_RESTART_MODE, value: none}
EOF
    until_output "Running" get pods -n gpu-operator -l app=toolkit \
        -o jsonpath='{.items[0].status.phase}'
    # v1.18 writes the drop-in with a copy of the CRI table (runc kept)
    grep -q 'runtimes.nvidia' "$(node_dir lab-node-1)/etc/containerd/conf.d/99-nvidia.toml"
    grep -q 'SystemdCgroup = true' "$(node_dir lab-node-1)/etc/containerd/conf.d/99-nvidia.toml"
    run "$GPUOP" node status lab-node-1
    [ "$status" -eq 1 ]
    [[ "$output" == *"99-nvidia.toml changed after containerd started"* ]]
    [[ "$output" == *"CRI: up  handlers: runc"* ]]

    k apply -f - <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin-daemonset, namespace: gpu-operator}
spec:
  selector: {matchLabels: {app: plugin}}
  template:
    metadata: {labels: {app: plugin}}
    spec:
      nodeSelector: {kubernetes.io/hostname: lab-node-1}
      runtimeClassName: nvidia
      containers:
      - name: nvidia-device-plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
EOF
    local msg='Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured'
    until_output "$msg" get events -n gpu-operator --field-selector reason=FailedCreatePodSandBox \
        -o jsonpath='{.items[0].message}'
    run k get pods -n gpu-operator -l app=plugin -o jsonpath='{.items[0].status.phase}'
    [ "$output" = "Pending" ]
    run k get node lab-node-1 -o jsonpath='{.status.capacity.nvidia\.com/gpu}'
    [ "$output" = "" ]
}

@test "restart-containerd loads the handler: the plugin runs and nvidia.com/gpu is advertised" {
    run "$GPUOP" node restart-containerd lab-node-1
    [ "$status" -eq 0 ]
    until_output "Running" get pods -n gpu-operator -l app=plugin \
        -o jsonpath='{.items[0].status.phase}'
    until_output "4 4" get node lab-node-1 \
        -o jsonpath='{.status.capacity.nvidia\.com/gpu} {.status.allocatable.nvidia\.com/gpu}'
    run "$GPUOP" node status lab-node-1
    [ "$status" -eq 0 ]
    [[ "$output" == *"the running containerd loaded what the files declare"* ]]
    # the field tool reads the simulated daemon as it reads a real one
    run "$GPUOP" containerd check nvidia --source daemon \
        --address "$(node_dir lab-node-1)/run/containerd/containerd.sock"
    [ "$status" -eq 0 ]
    [[ "$output" == "nvidia: loaded"* ]]
}

@test "a reboot into a new kernel leaves the node Ready without GPUs" {
    run "$GPUOP" node reboot lab-node-1 --kernel-update
    [ "$status" -eq 0 ]
    until_output "6.1.0-19-amd64" get node lab-node-1 -o jsonpath='{.status.nodeInfo.kernelVersion}'
    until_output "CrashLoopBackOff" get pods -n gpu-operator -l app=plugin \
        -o jsonpath='{.items[0].status.containerStatuses[0].state.waiting.reason}'
    until_output "0 0" get node lab-node-1 \
        -o jsonpath='{.status.capacity.nvidia\.com/gpu} {.status.allocatable.nvidia\.com/gpu}'
    [ "$(ready_of lab-node-1)" = "True" ]
    run k get node lab-node-1 -o jsonpath='{.metadata.labels.nvidia\.com/cuda\.driver-version\.full}'
    [ "$output" = "" ]
    run "$GPUOP" node status lab-node-1
    [[ "$output" == *"booted kernel 6.1.0-19-amd64: not loaded"* ]]
}

@test "the fix for the kernel update: the module rebuilt for the new kernel, a reboot, GPUs back" {
    # what DKMS does: the driver's module built for the kernel that boots
    sed -i 's/^kernel = "6.1.0-18-amd64"$/kernel = "6.1.0-19-amd64"/' "$(node_dir lab-node-1)/node.toml"
    grep -q '^kernel = "6.1.0-19-amd64"$' "$(node_dir lab-node-1)/node.toml"
    run "$GPUOP" node reboot lab-node-1
    [ "$status" -eq 0 ]
    until_output "Running" get pods -n gpu-operator -l app=plugin \
        -o jsonpath='{.items[0].status.phase}'
    until_output "4 4" get node lab-node-1 \
        -o jsonpath='{.status.capacity.nvidia\.com/gpu} {.status.allocatable.nvidia\.com/gpu}'
    run k get node lab-node-1 -o jsonpath='{.metadata.labels.nvidia\.com/cuda\.driver-version\.full}'
    [ "$output" = "550.54.15" ]
}

@test "a restarted API server reboots its simulated nodes: the plugin registers again" {
    "$GPUOP" cluster down --data "$LTMP/data" >/dev/null 2>&1
    "$GPUOP" cluster up --data "$LTMP/data" --lab --node-agents \
        --node-monitor-grace-period 5s >>"$LTMP/up.log" 2>&1
    # the node's files stayed (the drop-in), so the new containerd loads nvidia
    for _ in $(seq 1 100); do
        run "$GPUOP" node status lab-node-1 -o json
        [[ "$output" == *'"allocatable": 4'* ]] && break
        sleep 0.2
    done
    [[ "$output" == *'"name": "nvidia.com/gpu"'* ]]
    [[ "$output" == *'"allocatable": 4'* ]]
    run "$GPUOP" node status lab-node-1
    [ "$status" -eq 0 ]
}

@test "SIGHUP: containerd exits, systemd starts it again 5 s later" {
    run "$GPUOP" node signal lab-node-0 HUP
    [ "$status" -eq 0 ]
    run "$GPUOP" node status lab-node-0
    [[ "$output" == *"containerd is not running (restarting): Main process exited, code=killed, status=1/HUP"* ]]
    sleep 6
    run "$GPUOP" node status lab-node-0
    [ "$status" -eq 0 ]
    [[ "$output" == *"CRI: up"* ]]
}

@test "a bare drop-in signalled in: CRI fails, NotReady; a kubelet restart leaves it Unknown" {
    k apply -f - <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: bare-toolkit, namespace: gpu-operator}
spec:
  selector: {matchLabels: {app: bare}}
  template:
    metadata: {labels: {app: bare}}
    spec:
      nodeSelector: {kubernetes.io/hostname: lab-node-2}
      containers:
      - name: toolkit
        image: nvcr.io/nvidia/k8s/container-toolkit:v1.18.1
        env:
        - {name: RUNTIME_RESTART_MODE, value: signal}
        - {name: GPUOP_TOOLKIT_VARIANT, value: bare-dropin}
EOF
    SECS=60 until_output "False KubeletNotReady container runtime is down" get node lab-node-2 \
        -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.reason} {.message}{end}'
    run "$GPUOP" node status lab-node-2
    [ "$status" -eq 1 ]
    [[ "$output" == *'CRI error: invalid plugin config: no corresponding runtime configured in `containerd.runtimes` for `containerd` `default_runtime_name = "runc"'* ]]
    run "$GPUOP" node reboot lab-node-2
    [ "$status" -eq 0 ]
    SECS=30 until_output "Unknown Kubelet stopped posting node status." get node lab-node-2 \
        -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.message}{end}'
    run "$GPUOP" node status lab-node-2 -o json
    [[ "$output" == *'failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint'*'unknown service runtime.v1.RuntimeService'* ]]
}

@test "gpuop node refuses a cluster without node agents, and names bad arguments" {
    run "$GPUOP" node status lab-node-9
    [ "$status" -eq 2 ]
    [[ "$output" == *"node lab-node-9 has no agent"* ]]
    run "$GPUOP" node signal lab-node-0
    [ "$status" -eq 2 ]
    run "$GPUOP" node frobnicate lab-node-0
    [ "$status" -eq 2 ]
    "$GPUOP" cluster up --data "$LTMP/plain" --kubeconfig "$LTMP/plain.kc" --nodes 1 >/dev/null 2>&1
    run "$GPUOP" node status kwok-node-0 --kubeconfig "$LTMP/plain.kc"
    "$GPUOP" cluster down --data "$LTMP/plain" --kubeconfig "$LTMP/plain.kc" >/dev/null 2>&1
    [ "$status" -eq 2 ]
    [[ "$output" == *"has no simulated nodes"* ]]
    # agents off: nothing of them is made
    [ ! -e "$LTMP/plain/nodes" ]
}

#!/usr/bin/env bats
# The field tools (nodes, why-pending, rollout, slots) on the broken states
# operators meet: each snapshot of tests/data/analyze is put back into an
# embedded API server without controllers by the real kubectl
# (load_fixture.py), and the tools read it as they read any cluster.

setup_file() {
    export FT_TMP
    FT_TMP=$(mktemp -d)
    export HOME="$FT_TMP/home" KUBECONFIG="$FT_TMP/kubeconfig"
    mkdir -p "$HOME"
}

teardown_file() {
    rm -rf "$FT_TMP"
}

teardown() {
    [ -f "$FT_TMP/data/apiserver.pid" ] && "$GPUOP" cluster down --data "$FT_TMP/data" >/dev/null 2>&1
    rm -rf "$FT_TMP/data"
}

# NAME: an empty API server holding the snapshot NAME.json.
load_snapshot() {
    "$GPUOP" cluster up --no-controllers --data "$FT_TMP/data" >/dev/null
    python3 "$GPUOP_SRC/tests/cli/load_fixture.py" "$GPUOP_SRC/tests/data/analyze/$1.json"
}

# A JSON field of a report on stdin: "a.b.0.c".
field() { python3 -c 'import json,sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v if not isinstance(v, (dict, list)) else json.dumps(v))' "$1"; }

# The codes of a node's flags, "code:severity" per line.
node_flags() { python3 -c 'import json,sys
r = json.load(sys.stdin)
for n in r["nodes"]:
    if n["name"] == sys.argv[1]:
        for f in n["flags"]:
            print(f["code"] + ":" + f["severity"])' "$1"; }

@test "nodes: a renamed time-slicing resource is a warning, an error only for the Pending plain pods" {
    load_snapshot field-renamed
    run "$GPUOP" nodes -o json
    [ "$status" -eq 1 ]
    flags=$(echo "$output" | node_flags lab-node-0)
    [[ "$flags" == *"renamed:warning"* ]]
    [[ "$flags" == *"plain-requests-pending:error"* ]]
    [[ "$flags" != *"gpus-lost"* ]]
    [ "$(echo "$output" | field schema)" = gpuop/nodes/1 ]
    # what kubectl shows of the node's resources
    shared=$(kubectl get node lab-node-0 -o jsonpath='{.status.allocatable.nvidia\.com/gpu\.shared}')
    got=$(echo "$output" | python3 -c 'import json,sys
print(json.load(sys.stdin)["nodes"][0]["other_resources"]["nvidia.com/gpu.shared"]["allocatable"])')
    [ "$got" = "$shared" ]
    # once the plain pod is gone, only the warning is left: exit 0
    kubectl delete pod -n gpu-lab cuda-probe --wait=false >/dev/null
    run "$GPUOP" nodes
    [ "$status" -eq 0 ]
    [[ "$output" == *"renamed (warning)"* ]]
    [[ "$output" == *"gpu.shared=$shared"* ]]
}

@test "nodes: a NotReady GPU node exits 1; a cordoned node's GPUs are not free" {
    load_snapshot field-nodes-down
    run "$GPUOP" nodes
    [ "$status" -eq 1 ]
    [[ "$output" == *"1 requested, 3 free"* ]]
    [[ "$output" == *"lab-node-2: not-ready (error)"* ]]
    [[ "$output" == *"lab-node-1: cordoned (warning)"* ]]
    # the STATUS column is kubectl's
    for n in lab-node-1 lab-node-2; do
        want=$(kubectl get node "$n" --no-headers | awk '{print $2}')
        line=$(echo "$output" | grep "^$n ")
        [ "$(echo "$line" | awk '{print $2}')" = "$want" ]
    done
}

@test "nodes: GPU Operator gates, MIG and driver upgrade states, device plugin pods" {
    load_snapshot field-operator-gates
    run "$GPUOP" nodes -o json
    [ "$status" -eq 1 ]
    [[ "$(echo "$output" | node_flags lab-node-1)" == *"gate-paused:error"* ]]
    [[ "$(echo "$output" | node_flags lab-node-1)" == *"mig-config-failed:error"* ]]
    [[ "$(echo "$output" | node_flags lab-node-2)" == *"gate-off:warning"* ]]
    [ "$(echo "$output" | field nodes.1.operator.mig_config_state)" = failed ]
    pod=$(kubectl get pods -n gpu-operator --field-selector spec.nodeName=lab-node-0 -o jsonpath='{.items[0].metadata.name}')
    [ "$(echo "$output" | field nodes.0.operator.device_plugin.pod)" = "gpu-operator/$pod" ]
    [ "$(echo "$output" | field nodes.1.operator.device_plugin)" = None ]
}

@test "why-pending: a renamed resource is named, not taken for a lost plugin" {
    load_snapshot field-renamed
    run "$GPUOP" why-pending gpu-lab/cuda-probe -o json
    [ "$status" -eq 1 ]
    [ "$(echo "$output" | field layer)" = resource-name ]
    [ "$(echo "$output" | field next.0.code)" = resource-renamed ]
    [[ "$output" != *gpus-lost* ]]
    [ "$(echo "$output" | field schema)" = gpuop/why-pending/1 ]
}

@test "why-pending: the plugin pods' sandbox events, kubectl's own command forms" {
    load_snapshot incident-runtime-missing
    run "$GPUOP" why-pending gpu-lab/cuda-probe
    [ "$status" -eq 1 ]
    # each plugin pod's FailedCreatePodSandBox, as kubectl shows the events
    for pod in $(kubectl get pods -n gpu-operator -o jsonpath='{.items[*].metadata.name}'); do
        msg=$(kubectl get events -n gpu-operator --field-selector "involvedObject.name=$pod,reason=FailedCreatePodSandBox" -o jsonpath='{.items[0].message}')
        [ -n "$msg" ]
        [[ "$(echo "$output" | grep "gpu-operator/$pod ")" == *"$msg"* ]]
    done
    [[ "$output" != *"kubectl logs gpu-operator/"* ]]
    # the step is a command kubectl takes as it is printed
    cmd=$(echo "$output" | sed -n 's/^  \(kubectl describe pod -n [^:]*\):.*/\1/p' | head -1)
    [ -n "$cmd" ]
    $cmd >/dev/null
}

@test "why-pending: the handler the sandbox misses is the one to check" {
    load_snapshot field-cdi-handler-missing
    run "$GPUOP" why-pending gpu-lab/cuda-probe
    [ "$status" -eq 1 ]
    [[ "$output" == *"gpuop containerd check nvidia-cdi "* ]]
    [[ "$output" != *"gpuop containerd check nvidia "* ]]
}

@test "why-pending --all groups every Pending GPU pod by cause" {
    load_snapshot field-renamed
    # a second pod like cuda-probe, Pending for the same reason
    kubectl get pod -n gpu-lab cuda-probe -o json | python3 -c 'import json,sys
p = json.load(sys.stdin); m = p["metadata"]
for k in ("uid", "resourceVersion", "creationTimestamp", "managedFields"): m.pop(k, None)
m["name"] = "cuda-probe-2"
print(json.dumps(p))' >"$FT_TMP/second.json"
    kubectl create -f "$FT_TMP/second.json" >/dev/null
    kubectl get pod -n gpu-lab cuda-probe-2 -o json | python3 -c 'import json,sys
p = json.load(sys.stdin); p["status"] = json.load(open(sys.argv[1]))["status"]
print(json.dumps(p))' "$FT_TMP/second.json" | kubectl replace --subresource=status -f - >/dev/null
    run "$GPUOP" why-pending --all -o json
    [ "$status" -eq 1 ]
    [ "$(echo "$output" | field schema)" = gpuop/why-pending-all/1 ]
    [ "$(echo "$output" | field pods)" = 2 ]
    [ "$(echo "$output" | field groups.0.layer)" = resource-name ]
    [ "$(echo "$output" | field groups.0.count)" = 2 ]
    run "$GPUOP" why-pending --all -o lab
    [ "$output" = "LAYER=resource-name BLOCKER=insufficient-nvidia.com/gpu PODS=2" ]
}

@test "why-pending -w waits until the verdict changes" {
    load_snapshot field-renamed
    timeout 60 "$GPUOP" why-pending gpu-lab/cuda-probe -w -o lab >"$FT_TMP/watch.out" 2>&1 &
    pid=$!
    for _ in $(seq 50); do [ -s "$FT_TMP/watch.out" ] && break; sleep 0.1; done
    [ "$(head -1 "$FT_TMP/watch.out")" = LAYER=resource-name ]
    kill -0 "$pid" # still watching
    # the node advertises plain GPUs again; the pod changes too
    kubectl patch node lab-node-0 --subresource=status --type=merge \
        -p '{"status":{"capacity":{"nvidia.com/gpu":"4"},"allocatable":{"nvidia.com/gpu":"4"}}}' >/dev/null
    kubectl annotate pod -n gpu-lab cuda-probe gpuop.test/touched=1 >/dev/null
    rc=0
    wait "$pid" || rc=$?
    [ "$rc" -eq 1 ]
    [ "$(sed -n 3p "$FT_TMP/watch.out")" = LAYER=scheduler ]
}

@test "rollout: device plugin pods that cannot start name their blocker" {
    load_snapshot incident-runtime-missing
    run "$GPUOP" rollout gpu-operator/nvidia-device-plugin-daemonset -o lab
    [ "$status" -eq 1 ]
    [ "$(echo "$output" | sed -n 6p)" = BLOCKER=runtime-handler-missing ]
    run "$GPUOP" rollout gpu-operator/nvidia-device-plugin-daemonset -o json
    [ "$(echo "$output" | field schema)" = gpuop/rollout/1 ]
    [[ "$(echo "$output" | field stuck.0.message)" == *'no runtime for "nvidia" is configured'* ]]
}

@test "rollout: a DaemonSet whose pods cannot be created reads the controller's FailedCreate" {
    load_snapshot field-ds-runtimeclass-missing
    run "$GPUOP" rollout gpu-operator/nvidia-device-plugin-daemonset
    [ "$status" -eq 1 ]
    msg=$(kubectl get events -n gpu-operator --field-selector reason=FailedCreate -o jsonpath='{.items[0].message}')
    [[ "$output" == *"cannot create pods for 3 nodes: $msg"* ]]
    run "$GPUOP" rollout gpu-operator/nvidia-device-plugin-daemonset -o lab
    [ "$(echo "$output" | sed -n 6p)" = BLOCKER=runtimeclass-missing ]
}

@test "slots: every shared resource, MIG counts from the node's layout" {
    load_snapshot field-mig
    run "$GPUOP" slots --configmap gpu-operator/time-slicing-config --node lab-node-0 \
        --mig-configmap gpu-operator/default-mig-parted-config -o json
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | field schema)" = gpuop/slots/1 ]
    [ "$(echo "$output" | field resources.1.resource)" = nvidia.com/mig-3g.20gb ]
    count=$(kubectl get node lab-node-0 -o jsonpath='{.metadata.labels.nvidia\.com/mig-3g\.20gb\.count}')
    cap=$(kubectl get node lab-node-0 -o jsonpath='{.status.capacity.nvidia\.com/mig-3g\.20gb}')
    [ "$(echo "$output" | field resources.1.devices)" = "$count" ]
    [ "$(echo "$output" | field resources.1.advertised_computed)" = "$cap" ]
    [ "$(echo "$output" | field mig.layout.name)" = "$(kubectl get node lab-node-0 -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config}')" ]
    run "$GPUOP" slots --configmap gpu-operator/time-slicing-config --node lab-node-0
    [[ "$output" != *"MIG instead"* ]]
    [[ "$output" != *"all of the GPU's memory"* ]]
}

@test "slots: migStrategy Mixed is refused with the plugin's own words" {
    printf 'version: v1\nflags:\n  migStrategy: Mixed\n' >"$FT_TMP/mixed.yaml"
    run "$GPUOP" slots --config "$FT_TMP/mixed.yaml" --gpus 4 --gpu-model A100-40GB
    [ "$status" -eq 1 ]
    [[ "$output" == *"mixed.yaml:3:16: unknown MIG strategy: Mixed"* ]]
    [[ "$output" == *"the plugin logs: error starting plugins: unable to validate flags: unknown MIG strategy: Mixed"* ]]
}

@test "every report's -o json: an error object on stdout when it cannot tell" {
    for cmd in "nodes" "why-pending gpu-lab/x" "rollout gpu-operator/x" "slots --node x"; do
        run $GPUOP $cmd -o json --context no-such-context
        [ "$status" -eq 2 ]
        [ "$(echo "$output" | sed -n '/^{/,/^}/p' | field error.code)" = unreachable ]
        [[ "$(echo "$output" | sed -n '/^{/,/^}/p' | field schema)" == gpuop/* ]]
    done
    run "$GPUOP" nodes -o json --no-such-option
    [ "$status" -eq 2 ]
    [ "$(echo "$output" | sed -n '/^{/,/^}/p' | field error.code)" = usage ]
}

#!/usr/bin/env bats
# `gpuop lab up --kubeconfig F` on a cluster the lab does not own: here an
# embedded cluster started separately with two nodes of its own. The lab
# adds its three kwok nodes, never touches the others, and `lab down`
# removes only what it added.

setup_file() {
    export EXT_TMP
    EXT_TMP=$(mktemp -d)
    export HOME="$EXT_TMP/home" KUBECONFIG="$EXT_TMP/user-kubeconfig"
    mkdir -p "$HOME"
    "$GPUOP" cluster up --data "$EXT_TMP/data" --no-kubeconfig-merge --nodes 2 \
        --node-prefix worker- >/dev/null
    export KC="$EXT_TMP/data/kubeconfig"
}

teardown_file() {
    "$GPUOP" cluster down --data "$EXT_TMP/data" --no-kubeconfig-merge >/dev/null 2>&1 || true
    rm -rf "$EXT_TMP"
}

@test "lab up adds three kwok nodes and leaves the cluster's own nodes alone" {
    before=$(kubectl --kubeconfig "$KC" get nodes worker-0 worker-1 -o jsonpath='{.items[*].metadata.resourceVersion}')
    run "$GPUOP" lab up --root "$EXT_TMP/gpuop" --kubeconfig "$KC"
    [ "$status" -eq 0 ]
    [ ! -e "$KUBECONFIG" ]   # the user's kubeconfig is not touched on another cluster
    run kubectl --kubeconfig "$KC" get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.annotations.kwok\.x-k8s\.io/node}{" "}{end}'
    [ "$output" = "lab-node-0=fake lab-node-1=fake lab-node-2=fake worker-0=fake worker-1=fake " ]
    kubectl --kubeconfig "$KC" wait --for=condition=Ready node/lab-node-0 --timeout=30s
    [ -z "$(kubectl --kubeconfig "$KC" get node lab-node-0 -o jsonpath='{.spec.taints}')" ]
    [ "$(kubectl --kubeconfig "$KC" get nodes worker-0 worker-1 -o jsonpath='{.items[*].metadata.resourceVersion}')" = "$before" ]
}

@test "the lab is solved and graded there like on its own cluster" {
    run "$GPUOP" lab solve --root "$EXT_TMP/gpuop"
    [ "$status" -eq 0 ]
    # The other nodes are candidates too: the scheduler's message counts 5.
    [[ "$(sed -n 2p "$EXT_TMP/gpuop/out/unscheduled.txt")" == "0/5 nodes are available: 5 Insufficient nvidia.com/gpu."* ]]
    run "$GPUOP" lab check --root "$EXT_TMP/gpuop"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "a node of the lab's name that the lab did not create is never taken over" {
    kubectl --kubeconfig "$KC" annotate node lab-node-2 gpuop.io/lab-node- >/dev/null
    run "$GPUOP" lab up --root "$EXT_TMP/other" --kubeconfig "$KC"
    [ "$status" -eq 2 ]
    [[ "$output" == *"lab-node-2 exists and was not created by the lab"* ]]
    kubectl --kubeconfig "$KC" annotate node lab-node-2 gpuop.io/lab-node=true >/dev/null
}

@test "lab down removes the lab's nodes and objects, nothing else" {
    run "$GPUOP" lab down --root "$EXT_TMP/gpuop"
    [ "$status" -eq 0 ]
    [ "$(kubectl --kubeconfig "$KC" get nodes -o jsonpath='{.items[*].metadata.name}')" = "worker-0 worker-1" ]
    run kubectl --kubeconfig "$KC" get ns gpu-lab
    [ "$status" -ne 0 ]
    run kubectl --kubeconfig "$KC" get runtimeclass nvidia
    [ "$status" -ne 0 ]
    # The server still runs: down on another cluster never stops it.
    kubectl --kubeconfig "$KC" get ns default
}

@test "a cluster that already has a step's object (the GPU Operator's RuntimeClass) is refused, untouched" {
    kubectl --kubeconfig "$KC" apply -f - >/dev/null <<'YAML'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
YAML
    rv=$(kubectl --kubeconfig "$KC" get runtimeclass nvidia -o jsonpath='{.metadata.resourceVersion}')
    run "$GPUOP" lab up --root "$EXT_TMP/taken" --kubeconfig "$KC"
    [ "$status" -eq 2 ]
    [[ "$output" == *"runtimeclasses/nvidia exists and was not made by the lab"* ]]
    [ ! -e "$EXT_TMP/taken/.gpuop-lab-cluster.json" ]
    # reset and down find no marker and delete nothing either
    run "$GPUOP" lab reset --root "$EXT_TMP/taken" --kubeconfig "$KC"
    [ "$status" -eq 2 ]
    [ "$(kubectl --kubeconfig "$KC" get runtimeclass nvidia -o jsonpath='{.metadata.resourceVersion}')" = "$rv" ]
    kubectl --kubeconfig "$KC" delete runtimeclass nvidia >/dev/null
}

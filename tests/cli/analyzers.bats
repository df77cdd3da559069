#!/usr/bin/env bats
# The field tools (nodes, why-pending, slots, rollout) against the embedded
# cluster in the lab's states 5-8, compared with what the real kubectl shows
# of the same objects.

setup_file() {
    export AN_TMP
    AN_TMP=$(mktemp -d)
    export HOME="$AN_TMP/home" KUBECONFIG="$AN_TMP/kubeconfig" ROOT="$AN_TMP/gpuop"
    mkdir -p "$HOME"
    "$GPUOP" lab init --root "$ROOT" >/dev/null
    "$GPUOP" lab up --root "$ROOT" --data "$AN_TMP/data" >/dev/null
}

teardown_file() {
    "$GPUOP" lab down --root "$ROOT" >/dev/null 2>&1 || true
    rm -rf "$AN_TMP"
}

# A JSON field of a report: jq-like with python.
field() { python3 -c 'import json,sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v if not isinstance(v, (dict, list)) else json.dumps(v))' "$1"; }

kubectl_gpu_table() {
    kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu
}

@test "step 5: why-pending names node advertisement; the verdict is the scheduler's" {
    "$GPUOP" lab solve 5 --root "$ROOT" >/dev/null
    run "$GPUOP" why-pending gpu-lab/cuda-probe -o json
    [ "$status" -eq 1 ]
    report=$output
    [ "$(echo "$report" | field layer)" = node-advertisement ]
    [ "$(echo "$report" | field advertising)" = 0 ]
    want=$(kubectl get pod -n gpu-lab cuda-probe -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
    [ "$(echo "$report" | field scheduler.condition.message)" = "$want" ]
    [ "$(echo "$report" | field scheduler.blocker)" = "insufficient-nvidia.com/gpu" ]
    run "$GPUOP" why-pending gpu-lab/cuda-probe
    [ "$status" -eq 1 ]
    [[ "$output" == *"3 Insufficient nvidia.com/gpu"* ]]
    # Nothing advertised yet: the lab table says so exactly as kubectl does.
    [ "$("$GPUOP" nodes -o lab)" = "$(kubectl_gpu_table)" ]
}

@test "step 6: the pod is placed; nodes -o lab is kubectl's custom-columns table" {
    "$GPUOP" lab solve 6 --root "$ROOT" >/dev/null
    run "$GPUOP" why-pending gpu-lab/cuda-probe -o json
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | field layer)" = none ]
    [ "$(echo "$output" | field node)" = "$(kubectl get pod -n gpu-lab cuda-probe -o jsonpath='{.spec.nodeName}')" ]
    [ "$("$GPUOP" nodes -o lab)" = "$(kubectl_gpu_table)" ]
    run "$GPUOP" nodes -o json
    [ "$(echo "$output" | field nodes.0.allocatable)" = "$(kubectl get node lab-node-0 -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" ]
    [ "$(echo "$output" | field nodes.0.requested)" = 1 ]
    [ "$(echo "$output" | field nodes.1.advertisement)" = absent ]
}

@test "step 7: slots reads the ConfigMap and the node, and the numbers agree" {
    "$GPUOP" lab solve 7 --root "$ROOT" >/dev/null
    run "$GPUOP" slots --configmap gpu-operator/time-slicing-config --node lab-node-1 --gpus 4 --gpu-model A100-40GB -o lab
    [ "$status" -eq 0 ]
    lines_out=$output
    advertised=$(kubectl get node lab-node-1 -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
    replicas=$(kubectl get cm -n gpu-operator time-slicing-config -o jsonpath='{.data.any}' | sed -n 's/^ *replicas: *//p')
    [ "$(echo "$lines_out" | sed -n 2p)" = "REPLICAS=$replicas" ]
    [ "$(echo "$lines_out" | sed -n 3p)" = "ADVERTISED=$advertised" ]
    [ "$advertised" -eq $((4 * replicas)) ]
    [ "$(echo "$lines_out" | sed -n 5p)" = "VRAM_GUARANTEED_PER_SLOT_GIB=0" ]
    # A node that advertises another count than the config gives is flagged.
    kubectl patch node lab-node-1 --subresource=status --type=merge -p '{"status":{"capacity":{"nvidia.com/gpu":"16"},"allocatable":{"nvidia.com/gpu":"16"}}}' >/dev/null
    run "$GPUOP" slots --configmap gpu-operator/time-slicing-config --node lab-node-1 --gpus 4 --gpu-model A100-40GB -o json
    [ "$status" -eq 1 ]
    [ "$(echo "$output" | field advertised_agrees)" = False ]
    kubectl patch node lab-node-1 --subresource=status --type=merge -p "{\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"$advertised\"},\"allocatable\":{\"nvidia.com/gpu\":\"$advertised\"}}}" >/dev/null
}

@test "step 8: rollout reports the DaemonSet's own numbers and the memory blocker" {
    "$GPUOP" lab solve 8 --root "$ROOT" >/dev/null
    run "$GPUOP" rollout gpu-operator/nvidia-container-toolkit -o json
    [ "$status" -eq 1 ]
    report=$output
    for pair in desired:desiredNumberScheduled updated:updatedNumberScheduled ready:numberReady available:numberAvailable; do
        want=$(kubectl get ds -n gpu-operator nvidia-container-toolkit -o jsonpath="{.status.${pair#*:}}")
        [ "$(echo "$report" | field "status.${pair%%:*}")" = "$want" ]
    done
    [ "$(echo "$report" | field verdict.state)" = stalled ]
    [ "$(echo "$report" | field blocker)" = insufficient-memory ]
    # The stuck pod is the one kubectl shows Pending, with the scheduler's words.
    pending=$(kubectl get pods -n gpu-operator --field-selector=status.phase=Pending -o jsonpath='{.items[0].metadata.name}')
    [ "$(echo "$report" | field stuck.0.pod)" = "gpu-operator/$pending" ] || [ "$(echo "$report" | field stuck.0.pod)" = "$pending" ]
    old=$(kubectl get pods -n gpu-operator -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | grep -c v1.16.2)
    run "$GPUOP" rollout gpu-operator/nvidia-container-toolkit -o lab
    [ "$(echo "$output" | sed -n 4p)" = "OLD_IMAGE_PODS=$old" ]
    [ "$(echo "$output" | sed -n 6p)" = "BLOCKER=insufficient-memory" ]
    run "$GPUOP" rollout gpu-operator/nvidia-container-toolkit
    [[ "$output" == *"Insufficient memory"* ]]
}

@test "rollout counts minReadySeconds on the clock, as the controller counts numberAvailable" {
    kubectl create namespace clock >/dev/null
    kubectl apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: slow, namespace: clock}
spec:
  minReadySeconds: 3600
  selector: {matchLabels: {app: slow}}
  template:
    metadata: {labels: {app: slow}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
EOF
    # every pod Ready, none available for an hour
    ready=0 desired=-1
    for _ in $(seq 150); do
        ready=$(kubectl get ds -n clock slow -o jsonpath='{.status.numberReady}')
        desired=$(kubectl get ds -n clock slow -o jsonpath='{.status.desiredNumberScheduled}')
        [ "${ready:-0}" -gt 0 ] && [ "$ready" = "$desired" ] && break
        sleep 0.2
    done
    [ "${ready:-0}" -gt 0 ] && [ "$ready" = "$desired" ]
    [ "$(kubectl get ds -n clock slow -o jsonpath='{.status.numberAvailable}')" = "" ]
    run "$GPUOP" rollout clock/slow -o json
    [ "$(echo "$output" | field status.available)" = 0 ]
    # the pods the controller does not count as available are the stuck ones
    stuck=$(echo "$output" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["stuck"]))')
    [ "$stuck" = "$desired" ]
    kubectl delete namespace clock --wait=false >/dev/null
}

@test "a missing object or an unreachable server cannot be told: exit 2 with kubectl's words" {
    run "$GPUOP" why-pending gpu-lab/no-such-pod
    [ "$status" -eq 2 ]
    [[ "$output" == *'Error from server (NotFound): pods "no-such-pod" not found'* ]]
    run "$GPUOP" rollout gpu-operator/nope -o lab
    [ "$status" -eq 2 ]
    sed 's#https://127.0.0.1:[0-9]*#https://127.0.0.1:1#' "$KUBECONFIG" >"$AN_TMP/dead"
    run "$GPUOP" nodes --kubeconfig "$AN_TMP/dead"
    [ "$status" -eq 2 ]
    [[ "$output" == *"cannot reach the Kubernetes API server at https://127.0.0.1:1"* ]]
    run "$GPUOP" nodes --context no-such-context
    [ "$status" -eq 2 ]
    [[ "$output" == *no-such-context* ]]
}

@test "slots from a file needs no cluster; a config the plugin refuses is reported, exit 1" {
    printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 1\n' >"$AN_TMP/bad.yaml"
    run "$GPUOP" slots --config "$AN_TMP/bad.yaml" --gpus 4 --gpu-model A100-40GB
    [ "$status" -eq 1 ]
    [[ "$output" == *"number of replicas must be >= 2"* ]]
    printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n' >"$AN_TMP/ok.yaml"
    run "$GPUOP" slots --config "$AN_TMP/ok.yaml" --gpus 8 --gpu-model H100-80GB -o lab
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | sed -n 3p)" = "ADVERTISED=32" ]
    [ "$(echo "$output" | sed -n 4p)" = "VRAM_PER_GPU_GIB=80" ]
}

#!/usr/bin/env bash
# Regenerates the lab snapshots in this folder from a real run: the embedded
# control plane (`gpuop cluster up --lab`) driven by the real kubectl through
# lab steps 5, 6, 7 (advertisement only) and 8, plus the incident state of a
# cluster whose kubelets check RuntimeClass handlers (--kubelet-runtime-check).
#
#   GPUOP=/path/to/gpuop tests/data/analyze/make-fixtures.sh
#
# Each snapshot is `kubectl get nodes,pods,ds,controllerrevisions,events,
# runtimeclasses -A -o json` once the state is stable. The script waits for
# the state lab.md names before it saves anything, so a snapshot never holds
# a transient.
set -euo pipefail
: "${GPUOP:?set GPUOP to the gpuop binary}"
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
# shellcheck source=../../cli/lab_manifests.bash
. "$src/tests/cli/lab_manifests.bash"

tmp=$(mktemp -d)
export HOME=$tmp/home KUBECONFIG=$tmp/kubeconfig
mkdir -p "$HOME"
cleanup() {
    "$GPUOP" cluster down --data "$tmp/data" >/dev/null 2>&1 || true
    "$GPUOP" cluster down --data "$tmp/strict" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

k() { kubectl --cache-dir "$tmp/cache" --request-timeout=10s "$@"; }

until_output() {
    local want=$1
    shift
    for _ in $(seq 1 300); do
        [ "$(k "$@" 2>/dev/null)" = "$want" ] && return 0
        sleep 0.1
    done
    echo "timed out waiting for '$want' from: k $*" >&2
    return 1
}

snapshot() {
    k get nodes,pods,ds,controllerrevisions,events,runtimeclasses -A -o json >"$here/$1.json"
    echo "wrote $1.json"
}

"$GPUOP" cluster up --lab --data "$tmp/data" >/dev/null

# Step 5: the GPU pod is Pending, no node advertises nvidia.com/gpu.
k create namespace gpu-lab >/dev/null
lab_manifest gpu-lab | k apply -f - >/dev/null
until_output "False Unschedulable" get pod cuda-probe -n gpu-lab \
    -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}'
until_output "FailedScheduling" get events -n gpu-lab --field-selector reason=FailedScheduling \
    -o jsonpath='{.items[0].reason}'
snapshot lab-step5

# Step 6: lab-node-0 advertises 4 GPUs; the pod runs there.
k patch node lab-node-0 --subresource=status \
    -p '{"status":{"capacity":{"nvidia.com/gpu":"4"},"allocatable":{"nvidia.com/gpu":"4"}}}' >/dev/null
until_output "Running lab-node-0" get pod cuda-probe -n gpu-lab -o jsonpath='{.status.phase} {.spec.nodeName}'
k get nodes -o custom-columns='NAME:.metadata.name,GPU:.status.allocatable.nvidia\.com/gpu' >"$here/lab-step6-custom-columns.txt"
snapshot lab-step6

# Step 7's advertisement: lab-node-1 shows 20 time-sliced slots.
k patch node lab-node-1 --subresource=status \
    -p '{"status":{"capacity":{"nvidia.com/gpu":"20"},"allocatable":{"nvidia.com/gpu":"20"}}}' >/dev/null

# Step 8: the toolkit DaemonSet rolls out, then 64Gi stalls it after one node.
toolkit_manifest gpu-operator nvcr.io/nvidia/k8s/container-toolkit:v1.16.2 128Mi | k apply -f - >/dev/null
until_output "3 3 3 3 3 1" get ds nvidia-container-toolkit -n gpu-operator \
    -o jsonpath='{.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled} {.status.numberAvailable} {.status.observedGeneration}'
toolkit_manifest gpu-operator nvcr.io/nvidia/k8s/container-toolkit:v1.17.0 64Gi | k apply -f - >/dev/null
until_output "3 3 2 1 2 1 0 2" get ds nvidia-container-toolkit -n gpu-operator \
    -o jsonpath='{.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled} {.status.numberAvailable} {.status.numberUnavailable} {.status.numberMisscheduled} {.status.observedGeneration}'
until_output "FailedScheduling" get events -n gpu-operator --field-selector reason=FailedScheduling \
    -o jsonpath='{.items[0].reason}'
k get nodes -o custom-columns='NAME:.metadata.name,GPU:.status.allocatable.nvidia\.com/gpu' >"$here/lab-step8-custom-columns.txt"
snapshot lab-step8
"$GPUOP" cluster down --data "$tmp/data" >/dev/null

# The incident: kubelets check handlers, nodes report only runc. The device
# plugin DaemonSet names RuntimeClass nvidia, so its pods wait in
# ContainerCreating with FailedCreatePodSandBox; nothing advertises
# nvidia.com/gpu and cuda-probe stays Pending. A second probe without a GPU
# request is scheduled and stuck the same way as the plugin.
"$GPUOP" cluster up --lab --kubelet-runtime-check --data "$tmp/strict" >/dev/null
k create namespace gpu-lab >/dev/null
lab_manifest gpu-lab | k apply -f - >/dev/null
lab_manifest gpu-lab | sed 's/name: cuda-probe/name: cpu-probe/; /nvidia.com\/gpu: 1/d; /limits:/d; /resources:/d' |
    k apply -f - >/dev/null
k apply -f - >/dev/null <<'EOF2'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: gpu-operator
spec:
  selector:
    matchLabels:
      app: nvidia-device-plugin-daemonset
  template:
    metadata:
      labels:
        app: nvidia-device-plugin-daemonset
    spec:
      runtimeClassName: nvidia
      priorityClassName: system-node-critical
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
      containers:
      - name: nvidia-device-plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
        volumeMounts:
        - name: device-plugin
          mountPath: /var/lib/kubelet/device-plugins
      volumes:
      - name: device-plugin
        hostPath:
          path: /var/lib/kubelet/device-plugins
EOF2
until_output "ContainerCreating ContainerCreating ContainerCreating" get pods -n gpu-operator \
    -o jsonpath='{.items[*].status.containerStatuses[0].state.waiting.reason}'
until_output "ContainerCreating" get pod cpu-probe -n gpu-lab \
    -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}'
until_output "False Unschedulable" get pod cuda-probe -n gpu-lab \
    -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}'
sleep 1
snapshot incident-runtime-missing

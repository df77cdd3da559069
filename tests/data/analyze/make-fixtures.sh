#!/usr/bin/env bash
# Regenerates the snapshots in this folder from a real run: the embedded
# control plane (`gpuop cluster up --lab`) driven by the real kubectl through
# lab steps 5, 6, 7 (advertisement only) and 8, plus the incident state of a
# cluster whose kubelets check RuntimeClass handlers (--kubelet-runtime-check)
# ("lab"), and the broken states operators meet in the field ("field").
#
#   GPUOP=/path/to/gpuop tests/data/analyze/make-fixtures.sh [lab|field|all|field-NAME]
#
# Each snapshot is `kubectl get nodes,pods,ds,controllerrevisions,events,
# runtimeclasses -A -o json` (field snapshots add configmaps) once the state
# is stable. The script waits for the state it names before it saves
# anything, so a snapshot never holds a transient.
set -euo pipefail
: "${GPUOP:?set GPUOP to the gpuop binary}"
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
# shellcheck source=../../cli/lab_manifests.bash
. "$src/tests/cli/lab_manifests.bash"

tmp=$(mktemp -d)
export HOME=$tmp/home KUBECONFIG=$tmp/kubeconfig
mkdir -p "$HOME"
which=${1:-all}
cleanup() {
    for d in "$tmp"/*/; do
        [ -f "$d/apiserver.pid" ] && "$GPUOP" cluster down --data "$d" >/dev/null 2>&1
    done
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
    k get nodes,pods,ds,controllerrevisions,events,runtimeclasses${2:-} -A -o json >"$here/$1.json"
    echo "wrote $1.json"
}

lab_fixtures() {
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
"$GPUOP" cluster down --data "$tmp/strict" >/dev/null
}

# ---- field states (the cases of issue 16) ----

# NODE COUNT [RESOURCE]: the node advertises COUNT of RESOURCE (default
# nvidia.com/gpu) and carries the GPU Feature Discovery labels of 4
# A100-40GB (gpu-node-facts.md 1.6) and the operator's gpu.present.
gpu_node() {
    local node=$1 count=$2 res=${3:-nvidia.com/gpu}
    k label node "$node" --overwrite nvidia.com/gpu.present=true nvidia.com/gpu.count=4 \
        nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB nvidia.com/gpu.memory=40960 \
        nvidia.com/gpu.replicas=1 nvidia.com/gpu.sharing-strategy=none \
        nvidia.com/cuda.driver-version.full=550.54.15 >/dev/null
    k patch node "$node" --subresource=status --type=merge \
        -p "{\"status\":{\"capacity\":{\"$res\":\"$count\"},\"allocatable\":{\"$res\":\"$count\"}}}" >/dev/null
}

# NAMESPACE NAME RESOURCE: a pod asking for one RESOURCE (limits), no
# RuntimeClass (the fake kubelet runs it wherever it lands).
gpu_pod() {
    k apply -f - >/dev/null <<EOF2
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  restartPolicy: Never
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
    resources: {limits: {$3: 1}}
EOF2
}

# RUNTIMECLASS [SELECTOR]: the GPU Operator's device plugin DaemonSet
# (gpu-node-facts.md 6.3), in gpu-operator; SELECTOR "key=value" is its
# node selector (the operator's gpu.deploy.device-plugin=true gate).
plugin_ds() {
    local rc=${1:+"runtimeClassName: $1"} sel=""
    [ -n "${2:-}" ] && sel="nodeSelector: {${2%%=*}: \"${2#*=}\"}"
    k apply -f - >/dev/null <<EOF2
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
      $rc
      $sel
      priorityClassName: system-node-critical
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
      containers:
      - name: nvidia-device-plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
EOF2
}

# Case 2: time-slicing with renameByDefault: true. lab-node-0 served
# nvidia.com/gpu before, so kubelet keeps it at 0 beside
# nvidia.com/gpu.shared: 16 (gpu-node-facts.md 1.4); GFD keeps the gpu.*
# keys, sharing labels on, product without -SHARED (1.6). A pod asking for
# the shared name runs there; one asking for plain nvidia.com/gpu is Pending.
fx_renamed() {
"$GPUOP" cluster up --lab --data "$tmp/renamed" >/dev/null
k create namespace gpu-lab >/dev/null
gpu_node lab-node-0 0
k label node lab-node-0 --overwrite nvidia.com/gpu.replicas=4 \
    nvidia.com/gpu.sharing-strategy=time-slicing >/dev/null
k patch node lab-node-0 --subresource=status --type=merge \
    -p '{"status":{"capacity":{"nvidia.com/gpu.shared":"16"},"allocatable":{"nvidia.com/gpu.shared":"16"}}}' >/dev/null
gpu_pod gpu-lab shared-probe nvidia.com/gpu.shared
gpu_pod gpu-lab cuda-probe nvidia.com/gpu
until_output "Running lab-node-0" get pod shared-probe -n gpu-lab -o jsonpath='{.status.phase} {.spec.nodeName}'
until_output "False Unschedulable" get pod cuda-probe -n gpu-lab \
    -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}'
until_output "FailedScheduling" get events -n gpu-lab --field-selector reason=FailedScheduling \
    -o jsonpath='{.items[0].reason}'
snapshot field-renamed ,configmaps
"$GPUOP" cluster down --data "$tmp/renamed" >/dev/null
}

# Case 3: three GPU nodes with 4 GPUs each; lab-node-1 cordoned,
# lab-node-2's kubelet stopped (Ready Unknown, NodeStatusUnknown). The node
# lifecycle controller's taints on a node that stopped posting status are
# node.kubernetes.io/unreachable NoSchedule and NoExecute
# (k8s-cases/real-1.32.13/lifecycle-and-backoff.txt); they are put there
# when the embedded cluster does not. One 1-GPU pod runs on lab-node-0.
fx_nodes_down() {
"$GPUOP" cluster up --lab --data "$tmp/down" >/dev/null
k create namespace gpu-lab >/dev/null
for n in lab-node-0 lab-node-1 lab-node-2; do gpu_node "$n" 4; done
k cordon lab-node-1 >/dev/null
k annotate node lab-node-2 gpuop.io/not-ready=true >/dev/null
until_output "Unknown" get node lab-node-2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
if ! k get node lab-node-2 -o jsonpath='{.spec.taints[*].key}' | grep -q unreachable; then
    k taint node lab-node-2 node.kubernetes.io/unreachable:NoSchedule \
        node.kubernetes.io/unreachable:NoExecute >/dev/null
fi
gpu_pod gpu-lab cuda-probe nvidia.com/gpu
until_output "Running lab-node-0" get pod cuda-probe -n gpu-lab -o jsonpath='{.status.phase} {.spec.nodeName}'
snapshot field-nodes-down ,configmaps
"$GPUOP" cluster down --data "$tmp/down" >/dev/null
}

# Case 5: the operator with CDI on: RuntimeClass nvidia-cdi (handler
# nvidia-cdi, gpu-node-facts.md 3.4) for the device plugin, while the
# nodes' containerd loads runc and nvidia only. The plugin's sandboxes
# fail with `no runtime for "nvidia-cdi" is configured`; cuda-probe
# (RuntimeClass nvidia) stays Pending: nothing advertises a GPU.
fx_cdi_handler_missing() {
"$GPUOP" cluster up --lab --kubelet-runtime-check --node-runtime-handlers runc,nvidia \
    --data "$tmp/cdi" >/dev/null
k create namespace gpu-lab >/dev/null
lab_manifest gpu-lab | k apply -f - >/dev/null
k apply -f - >/dev/null <<'EOF2'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia-cdi
handler: nvidia-cdi
EOF2
plugin_ds nvidia-cdi
until_output "ContainerCreating ContainerCreating ContainerCreating" get pods -n gpu-operator \
    -o jsonpath='{.items[*].status.containerStatuses[0].state.waiting.reason}'
until_output "FailedCreatePodSandBox" get events -n gpu-operator --field-selector reason=FailedCreatePodSandBox \
    -o jsonpath='{.items[0].reason}'
until_output "False Unschedulable" get pod cuda-probe -n gpu-lab \
    -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason}'
sleep 1
snapshot field-cdi-handler-missing ,configmaps
"$GPUOP" cluster down --data "$tmp/cdi" >/dev/null
}

# Case 6: the device plugin DaemonSet names RuntimeClass nvidia, which does
# not exist: the API server rejects every pod the controller tries
# (FailedCreate `... is forbidden: pod rejected: RuntimeClass "nvidia" not
# found`, k8s-cases/real-1.32.13/lifecycle-and-backoff.txt), so the
# DaemonSet has no pod at all. The real control plane backs off and
# aggregates: one event object whose count grows, naming the pod by its
# generateName (`pods "dsrc-" is forbidden`, same recording). Where the
# embedded one still writes an event per attempt with the generated name,
# the snapshot folds them into that one object, counts summed.
fx_ds_runtimeclass_missing() {
"$GPUOP" cluster up --lab --data "$tmp/norc" >/dev/null
plugin_ds nvidia
until_output "FailedCreate" get events -n gpu-operator --field-selector reason=FailedCreate \
    -o jsonpath='{.items[0].reason}'
until_output "3" get ds -n gpu-operator nvidia-device-plugin-daemonset -o jsonpath='{.status.desiredNumberScheduled}'
snapshot field-ds-runtimeclass-missing ,configmaps
python3 - "$here/field-ds-runtimeclass-missing.json" <<'EOF2'
import json, re, sys
path = sys.argv[1]
doc = json.load(open(path))
kept, folded = [], None
for it in doc["items"]:
    if it["kind"] == "Event" and it.get("reason") == "FailedCreate":
        msg = re.sub(r'pods "([a-z0-9.-]+-)[a-z0-9]{5}" is forbidden', r'pods "\1" is forbidden',
                     it["message"])
        if folded is None:
            folded = dict(it, message=msg)
            kept.append(folded)
        else:
            folded["count"] = folded.get("count", 1) + it.get("count", 1)
            folded["lastTimestamp"] = max(folded.get("lastTimestamp") or "", it.get("lastTimestamp") or "")
        continue
    kept.append(it)
doc["items"] = kept
json.dump(doc, open(path, "w"), indent=4)
open(path, "a").write("\n")
EOF2
"$GPUOP" cluster down --data "$tmp/norc" >/dev/null
}

# Case 8: GPU Operator gates (gpu-node-facts.md 5, 2.4). The plugin
# DaemonSet selects nvidia.com/gpu.deploy.device-plugin=true. lab-node-0:
# all gates true, a plugin pod, 4 GPUs. lab-node-1: a MIG change failed
# (mig.config.state=failed) and left device-plugin at
# paused-for-mig-change, so no plugin pod and nvidia.com/gpu at 0.
# lab-node-2: deploy.driver=false (the operator manages no driver there),
# 4 GPUs, and its driver upgrade failed.
fx_operator_gates() {
"$GPUOP" cluster up --lab --data "$tmp/gates" >/dev/null
for n in lab-node-0 lab-node-1 lab-node-2; do
    gpu_node "$n" 4
    k label node "$n" --overwrite nvidia.com/gpu.deploy.driver=true \
        nvidia.com/gpu.deploy.device-plugin=true nvidia.com/gpu.deploy.gpu-feature-discovery=true \
        nvidia.com/gpu.deploy.container-toolkit=true >/dev/null
done
k label node lab-node-1 --overwrite nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change \
    nvidia.com/gpu.deploy.gpu-feature-discovery=paused-for-mig-change \
    nvidia.com/mig.config=all-1g.5gb nvidia.com/mig.config.state=failed nvidia.com/mig.capable=true >/dev/null
k patch node lab-node-1 --subresource=status --type=merge \
    -p '{"status":{"capacity":{"nvidia.com/gpu":"0"},"allocatable":{"nvidia.com/gpu":"0"}}}' >/dev/null
k label node lab-node-2 --overwrite nvidia.com/gpu.deploy.driver=false \
    nvidia.com/gpu-driver-upgrade-state=upgrade-failed >/dev/null
plugin_ds "" nvidia.com/gpu.deploy.device-plugin=true
until_output "2" get ds -n gpu-operator nvidia-device-plugin-daemonset -o jsonpath='{.status.numberReady}'
snapshot field-operator-gates ,configmaps
"$GPUOP" cluster down --data "$tmp/gates" >/dev/null
}

# Case 7: MIG, mixed strategy, on lab-node-0's 4 A100-40GB. The MIG
# manager applied the operator's all-balanced layout (2 x 1g.5gb + 2g.10gb
# + 3g.20gb per GPU, gpu-node-facts.md 2.1) from default-mig-parted-config;
# GFD counts the instances per profile (2.3); the device plugin's config
# "mig" time-slices two of the profiles (2.3: time-slicing replicates
# mixed MIG resources), so capacity = instances x replicas.
fx_mig() {
"$GPUOP" cluster up --lab --data "$tmp/mig" >/dev/null
k apply -f - >/dev/null <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata:
  name: default-mig-parted-config
  namespace: gpu-operator
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
        - devices: all
          mig-enabled: false
      all-3g.20gb:
        - devices: all
          mig-enabled: true
          mig-devices:
            "3g.20gb": 2
      all-balanced:
        - devices: all
          mig-enabled: true
          mig-devices:
            "1g.5gb": 2
            "2g.10gb": 1
            "3g.20gb": 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  mig: |
    version: v1
    flags:
      migStrategy: mixed
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/mig-1g.5gb
          replicas: 2
        - name: nvidia.com/mig-3g.20gb
          replicas: 3
EOF2
k label node lab-node-0 --overwrite nvidia.com/gpu.present=true nvidia.com/gpu.count=4 \
    nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB nvidia.com/gpu.memory=40960 \
    nvidia.com/cuda.driver-version.full=550.54.15 nvidia.com/mig.capable=true \
    nvidia.com/mig.strategy=mixed nvidia.com/mig.config=all-balanced \
    nvidia.com/mig.config.state=success nvidia.com/device-plugin.config=mig \
    nvidia.com/mig-1g.5gb.count=8 nvidia.com/mig-2g.10gb.count=4 \
    nvidia.com/mig-3g.20gb.count=4 nvidia.com/mig-1g.5gb.replicas=2 \
    nvidia.com/mig-3g.20gb.replicas=3 >/dev/null
k patch node lab-node-0 --subresource=status --type=merge -p '{"status":{
    "capacity":{"nvidia.com/mig-1g.5gb":"16","nvidia.com/mig-2g.10gb":"4","nvidia.com/mig-3g.20gb":"12"},
    "allocatable":{"nvidia.com/mig-1g.5gb":"16","nvidia.com/mig-2g.10gb":"4","nvidia.com/mig-3g.20gb":"12"}}}' >/dev/null
snapshot field-mig ,configmaps
"$GPUOP" cluster down --data "$tmp/mig" >/dev/null
}

field_fixtures() {
    fx_renamed
    fx_nodes_down
    fx_cdi_handler_missing
    fx_ds_runtimeclass_missing
    fx_operator_gates
    fx_mig
}

case $which in
lab) lab_fixtures ;;
field) field_fixtures ;;
all) lab_fixtures && field_fixtures ;;
field-*) "fx_$(echo "${which#field-}" | tr - _)" ;;
*) echo "usage: make-fixtures.sh [lab|field|all|field-NAME]" >&2 && exit 2 ;;
esac

#!/usr/bin/env bats
# The node lifecycle and taint eviction controllers, and the DaemonSet
# controller's backoff, as the real kubectl sees them on `gpuop cluster up
# --node-monitor-grace-period 2s` (kube-controller-manager's 40 s made short;
# ../shared/k8s-cases/real-1.32.13/lifecycle-and-backoff.txt is what a real
# 1.32 control plane does). One cluster for the file; HOME and KUBECONFIG in
# a temporary directory, never the user's.

bats_require_minimum_version 1.5.0

load until_output

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    export LTMP="$BATS_FILE_TMPDIR"
    export HOME=$LTMP/home
    export KUBECONFIG=$LTMP/kubeconfig
    mkdir -p "$HOME"
    "$GPUOP" cluster up --data "$LTMP/data" --node-monitor-grace-period 2s \
        >"$LTMP/up.log" 2>&1
    for n in nr-0 nr-1; do
        kubectl --cache-dir "$LTMP/cache" create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $n
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: $n, pr2: "y"}
status:
  capacity: {cpu: "16", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}
EOF
    done
    kubectl --cache-dir "$LTMP/cache" create namespace pr2 >/dev/null
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

@test "a bad grace period is refused before anything starts" {
    run "$GPUOP" cluster up --data "$LTMP/bad" --node-monitor-grace-period 5
    [ "$status" -eq 2 ]
    [[ "$output" == *'--node-monitor-grace-period: time: missing unit in duration "5"'* ]]
    run "$GPUOP" cluster up --data "$LTMP/bad" --node-monitor-grace-period 500ms
    [ "$status" -eq 2 ]
    [[ "$output" == *"--node-monitor-grace-period: '500ms' is not between 1s and 24h"* ]]
    [ ! -e "$LTMP/bad/apiserver.pid" ]
}

@test "a new node is tainted not-ready until it is Ready" {
    run k create -o jsonpath='{.spec.taints}' -f - <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: fresh}
EOF
    [ "$status" -eq 0 ]
    [ "$output" = '[{"effect":"NoSchedule","key":"node.kubernetes.io/not-ready"}]' ]
    k delete node fresh >/dev/null
    until_output "True" get node nr-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
    until_output "" get node nr-0 -o jsonpath='{.spec.taints}'
}

@test "a node whose kubelet stops: Unknown after the grace period, tainted, its pods evicted by their tolerations" {
    until_output "True" get node nr-1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
    k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: short, namespace: pr2}
spec:
  nodeName: nr-1
  tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}]
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: long, namespace: pr2}
spec:
  nodeName: nr-1
  containers: [{name: c, image: busybox}]
EOF
    until_output "Running Running" get pods -n pr2 short long -o jsonpath='{.items[*].status.phase}'
    k annotate node nr-1 gpuop.io/not-ready=true >/dev/null
    # the grace period first: still Ready a moment later
    sleep 0.5
    [ "$(ready_of nr-1)" = True ]
    until_output "Unknown NodeStatusUnknown Kubelet stopped posting node status." get node nr-1 \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason} {.status.conditions[?(@.type=="Ready")].message}'
    [ "$(ready_of nr-0)" = True ]
    run k get node nr-1
    [[ "${lines[1]}" =~ ^nr-1\ +NotReady\ + ]]
    until_output "node.kubernetes.io/unreachable:NoSchedule node.kubernetes.io/unreachable:NoExecute " \
        get node nr-1 -o jsonpath='{range .spec.taints[*]}{.key}:{.effect} {end}'
    run k get node nr-1 -o jsonpath='{.status.conditions[?(@.type=="MemoryPressure")].reason}'
    [ "$output" = NodeStatusUnknown ]
    until_output "False False" get pods -n pr2 short long \
        -o jsonpath='{.items[*].status.conditions[?(@.type=="Ready")].status}'
    run k get events -n pr2 --field-selector involvedObject.name=long -o jsonpath='{range .items[*]}{.reason}:{.message}:{.source.component}{end}'
    [ "$output" = "NodeNotReady:Node is not ready:node-controller" ]
    # short tolerates unreachable for 2 s: marked for deletion, and left
    # Terminating by a kubelet that is down; long (300 s) stays
    until_output "NodeNotReady:Node is not ready TaintManagerEviction:Marking for deletion Pod pr2/short " \
        get events -n pr2 --field-selector involvedObject.name=short -o jsonpath='{range .items[*]}{.reason}:{.message} {end}'
    run k get pod short -n pr2 -o jsonpath='{.metadata.deletionTimestamp} {.status.conditions[?(@.type=="DisruptionTarget")].reason}'
    [[ "$output" =~ ^20[0-9-]+T[0-9:]+Z\ DeletionByTaintManager$ ]]
    sleep 2
    run k get pod short -n pr2 -o jsonpath='{.status.phase}'
    [ "$output" = Running ]
    run k get pod long -n pr2 -o jsonpath='{.metadata.deletionTimestamp}'
    [ "$output" = "" ]
    run k get events -n default --field-selector involvedObject.name=nr-1 -o jsonpath='{range .items[*]}{.reason}:{.message}{end}'
    [ "$output" = "NodeNotReady:Node nr-1 status is now: NodeNotReady" ]
}

@test "the scheduler keeps off the unreachable node" {
    k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: g1, namespace: pr2}
spec:
  nodeSelector: {pr2: "y"}
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: g2, namespace: pr2}
spec:
  nodeSelector: {pr2: "y"}
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]
EOF
    until_output "nr-0 Running" get pod g1 -n pr2 -o jsonpath='{.spec.nodeName} {.status.phase}'
    until_output "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling." \
        get pod g2 -n pr2 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
}

@test "a DaemonSet whose RuntimeClass is missing is retried with backoff, its events counted" {
    k apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dsrc, namespace: pr2}
spec:
  selector: {matchLabels: {app: dsrc}}
  template:
    metadata: {labels: {app: dsrc}}
    spec:
      runtimeClassName: missing
      nodeSelector: {pr2: "y"}
      containers: [{name: c, image: busybox}]
EOF
    sleep 6
    # the backoff's tries in 6 s: 0, 5, 15, ... 5115 ms (plus a pass or
    # two); without it, a try every pass
    run k get events -n pr2 --field-selector reason=FailedCreate -o jsonpath='{range .items[*]}{.count}{"\n"}{end}'
    local sum
    sum=$(printf '%s\n' "${lines[@]}" | awk '{s += $1} END {print s}')
    echo "FailedCreate tries: $sum in ${#lines[@]} events" >&2
    [ "$sum" -ge 8 ]
    [ "$sum" -le 14 ]
    # one Event, its count growing: every try says the same
    [ "${#lines[@]}" -eq 1 ]
    run k get events -n pr2 --field-selector reason=FailedCreate -o jsonpath='{.items[0].message}'
    [ "$output" = 'Error creating: pods "dsrc-" is forbidden: pod rejected: RuntimeClass "missing" not found' ]
    # nr-1 is unreachable (NoSchedule): only nr-0 wants a pod
    run k get ds dsrc -n pr2 -o jsonpath='{.status.desiredNumberScheduled} {.status.currentNumberScheduled}'
    [ "$output" = "1 0" ]
}

@test "the kubelet back: Ready again, the NoExecute taint gone, the delete finished" {
    k annotate node nr-1 gpuop.io/not-ready- >/dev/null
    until_output "True KubeletReady" get node nr-1 \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}'
    until_output "" get node nr-1 -o jsonpath='{.spec.taints}'
    until_output "" get pod short -n pr2 --ignore-not-found -o name
    until_output "True" get pod long -n pr2 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
}

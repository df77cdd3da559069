#!/usr/bin/env bats
# The controllers of the embedded control plane as the lab sees them, with
# the real kubectl on a `gpuop cluster up --lab` cluster: lab steps 5-8
# (k8s-semantics.md 5.5, 6.6, 6.7), the garbage collector and namespace
# deletion. One cluster per file; HOME and KUBECONFIG in a temporary
# directory, never the user's.

bats_require_minimum_version 1.5.0
load lab_manifests
load until_output

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    export LTMP="$BATS_FILE_TMPDIR"
    export HOME=$LTMP/home
    export KUBECONFIG=$LTMP/kubeconfig
    mkdir -p "$HOME"
    # a short node-monitor grace period (kube-controller-manager's 40 s) for
    # the drill that takes a node down
    "$GPUOP" cluster up --lab --data "$LTMP/data" --node-monitor-grace-period 5s \
        >"$LTMP/up.log" 2>&1
}

teardown_file() {
    "$GPUOP" cluster down --data "$LTMP/data" >/dev/null 2>&1 || true
}

k() {
    kubectl --cache-dir "$LTMP/cache" --request-timeout=10s "$@"
}

@test "the lab preset: three Ready, untainted nodes of 16 cpu and 32Gi, and gpu-operator" {
    until_output $'lab-node-0 True\nlab-node-1 True\nlab-node-2 True' get nodes \
        -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'
    # the not-ready taint kube-apiserver gives a new node goes once it is Ready
    until_output "" get nodes -o jsonpath='{.items[*].spec.taints}'
    run k get nodes -o custom-columns='NAME:.metadata.name,CPU:.status.allocatable.cpu,MEM:.status.allocatable.memory,PODS:.status.allocatable.pods,TAINTS:.spec.taints'
    [ "${lines[1]}" = "lab-node-0   16    32Gi   110    <none>" ]
    [ "${#lines[@]}" -eq 4 ]
    run k get ns gpu-operator -o jsonpath='{.status.phase}'
    [ "$output" = "Active" ]
    run k get nodes
    [[ "${lines[1]}" =~ ^lab-node-0\ +Ready\ +agent\ +[0-9]+s\ +v1.32.0-kwok$ ]]
}

@test "step 5: the GPU pod is Pending with the scheduler's exact words, on the pod and in describe" {
    k create namespace gpu-lab >/dev/null
    run k apply -f <(lab_manifest gpu-lab)
    [ "${lines[1]}" = "pod/cuda-probe created" ]
    local msg='0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.'
    until_output "False Unschedulable $msg" get pod cuda-probe -n gpu-lab \
        -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].reason} {.status.conditions[?(@.type=="PodScheduled")].message}'
    run k get pod cuda-probe -n gpu-lab
    [[ "${lines[1]}" =~ ^cuda-probe\ +0/1\ +Pending\ +0\ + ]]
    run k describe pod cuda-probe -n gpu-lab
    [[ "$output" =~ Warning\ +FailedScheduling\ +[0-9a-z]+\ +default-scheduler\ +0/3\ nodes\ are\ available:\ 3\ Insufficient\ nvidia.com/gpu\. ]]
}

@test "step 6: a node that advertises nvidia.com/gpu gets the pod, which runs" {
    run k patch node lab-node-0 --subresource=status \
        -p '{"status":{"capacity":{"nvidia.com/gpu":"4"},"allocatable":{"nvidia.com/gpu":"4"}}}'
    [ "$output" = "node/lab-node-0 patched" ]
    until_output "Running lab-node-0" get pod cuda-probe -n gpu-lab -o jsonpath='{.status.phase} {.spec.nodeName}'
    run k wait --for=condition=Ready pod/cuda-probe -n gpu-lab --timeout=15s
    [ "$output" = "pod/cuda-probe condition met" ]
    run k get pod cuda-probe -n gpu-lab -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}'
    [ "$output" = "True" ]
    run k get pod cuda-probe -n gpu-lab
    [[ "${lines[1]}" =~ ^cuda-probe\ +1/1\ +Running\ +0\ + ]]
    run k get events -n gpu-lab --field-selector reason=Scheduled -o jsonpath='{.items[0].message}'
    [ "$output" = "Successfully assigned gpu-lab/cuda-probe to lab-node-0" ]
    run k describe node lab-node-0
    [[ "$output" =~ nvidia.com/gpu\ +1\ +1 ]]
}

@test "step 8: the toolkit DaemonSet rolls out, then stalls after one node on 64Gi" {
    run k apply -f <(toolkit_manifest gpu-operator nvcr.io/nvidia/k8s/container-toolkit:v1.16.2 128Mi)
    [ "$output" = "daemonset.apps/nvidia-container-toolkit created" ]
    until_output "3 3 3 3 3 1" get ds nvidia-container-toolkit -n gpu-operator \
        -o jsonpath='{.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled} {.status.numberAvailable} {.status.observedGeneration}'
    run k rollout status ds/nvidia-container-toolkit -n gpu-operator --timeout=10s
    [ "$output" = 'daemon set "nvidia-container-toolkit" successfully rolled out' ]
    run k get pods -n gpu-operator -o jsonpath='{range .items[*]}{.metadata.labels.pod-template-generation} {.metadata.ownerReferences[0].kind} {.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key}{"\n"}{end}'
    [ "$output" = $'1 DaemonSet metadata.name\n1 DaemonSet metadata.name\n1 DaemonSet metadata.name' ]

    run k apply -f <(toolkit_manifest gpu-operator nvcr.io/nvidia/k8s/container-toolkit:v1.17.0 64Gi)
    [ "$output" = "daemonset.apps/nvidia-container-toolkit configured" ]
    # desired current ready up-to-date available unavailable misscheduled observedGeneration
    until_output "3 3 2 1 2 1 0 2" get ds nvidia-container-toolkit -n gpu-operator \
        -o jsonpath='{.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled} {.status.numberAvailable} {.status.numberUnavailable} {.status.numberMisscheduled} {.status.observedGeneration}'
    run k get ds -n gpu-operator
    [[ "${lines[1]}" =~ ^nvidia-container-toolkit\ +3\ +3\ +2\ +1\ +2\ +\<none\>\ + ]]
    run k rollout status ds/nvidia-container-toolkit -n gpu-operator --timeout=2s
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = 'Waiting for daemon set "nvidia-container-toolkit" rollout to finish: 1 out of 3 new pods have been updated...' ]
    [ "${lines[-1]}" = "error: timed out waiting for the condition" ]
    run k rollout status ds/nvidia-container-toolkit -n gpu-operator --watch=false
    [ "$status" -eq 0 ]
    [ "$output" = 'Waiting for daemon set "nvidia-container-toolkit" rollout to finish: 1 out of 3 new pods have been updated...' ]
    # two old pods run, the new one is Pending with the scheduler's reason
    run k get pods -n gpu-operator -o jsonpath='{range .items[*]}{.status.phase} {.metadata.labels.pod-template-generation}{"\n"}{end}'
    [ "$(printf '%s\n' "${lines[@]}" | sort | tr '\n' ',')" = "Pending 2,Running 1,Running 1," ]
    local pending
    pending=$(k get pods -n gpu-operator --field-selector=status.phase=Pending -o name)
    run k get "$pending" -n gpu-operator -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
    [ "$output" = "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling." ]
    run k get controllerrevisions -n gpu-operator -o jsonpath='{range .items[*]}{.revision}{"\n"}{end}'
    [ "$(printf '%s\n' "${lines[@]}" | sort | tr '\n' ',')" = "1,2," ]
    run k describe ds nvidia-container-toolkit -n gpu-operator
    [[ "$output" == *"Number of Nodes Scheduled with Up-to-date Pods: 1"* ]]
    [[ "$output" =~ Pods\ Status:\ +2\ Running\ /\ 1\ Waiting\ /\ 0\ Succeeded\ /\ 0\ Failed ]]
    [[ "$output" =~ Normal\ +SuccessfulDelete\ +[0-9a-z]+\ +daemonset-controller\ +Deleted\ pod:\ nvidia-container-toolkit- ]]
}

@test "the garbage collector removes a deleted DaemonSet's pods and revisions" {
    run k delete ds nvidia-container-toolkit -n gpu-operator
    [ "$output" = 'daemonset.apps "nvidia-container-toolkit" deleted' ]
    until_output "" get pods,controllerrevisions -n gpu-operator -o name
}

@test "deleting a namespace deletes what is in it, then the namespace" {
    run k delete namespace gpu-lab --timeout=30s
    [ "$output" = 'namespace "gpu-lab" deleted' ]
    run k get namespace gpu-lab
    [ "$output" = 'Error from server (NotFound): namespaces "gpu-lab" not found' ]
    run k get pods -A -o name
    [ "$output" = "" ]
}

@test "the fake kubelet renews node leases, and a node can be taken down and back" {
    run k get lease lab-node-1 -n kube-node-lease -o jsonpath='{.spec.holderIdentity} {.spec.leaseDurationSeconds}'
    [ "$output" = "lab-node-1 40" ]
    run k describe node lab-node-1
    [[ "$output" =~ HolderIdentity:\ +lab-node-1 ]]
    k annotate node lab-node-2 gpuop.io/not-ready=true >/dev/null
    # its kubelet is down: Unknown once the grace period (5 s) has passed
    sleep 5
    until_output "Unknown NodeStatusUnknown" get node lab-node-2 \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}'
    run k get node lab-node-2
    [[ "${lines[1]}" =~ ^lab-node-2\ +NotReady\ + ]]
    k annotate node lab-node-2 gpuop.io/not-ready- >/dev/null
    until_output "True KubeletReady" get node lab-node-2 \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}'
}

@test "runtime-check mode: a pod whose handler no node reports waits in ContainerCreating" {
    "$GPUOP" cluster serve --data "$LTMP/strict" --lab --kubelet-runtime-check \
        >"$LTMP/strict.log" 2>&1 &
    local pid=$!
    local kc=$LTMP/strict/kubeconfig
    for _ in $(seq 1 100); do
        [ -f "$kc" ] && kubectl --kubeconfig "$kc" --cache-dir "$LTMP/cache2" get --raw /readyz >/dev/null 2>&1 && break
        sleep 0.05
    done
    ks() { kubectl --kubeconfig "$kc" --cache-dir "$LTMP/cache2" --request-timeout=10s "$@"; }
    ks create namespace gpu-lab >/dev/null
    lab_manifest gpu-lab | sed '/nvidia.com\/gpu: 1/d; /limits:/d; /resources:/d' | ks apply -f - >/dev/null
    local reason=""
    for _ in $(seq 1 100); do
        reason=$(ks get pod cuda-probe -n gpu-lab -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}' 2>/dev/null)
        [ "$reason" = "ContainerCreating" ] && break
        sleep 0.1
    done
    run ks get events -n gpu-lab --field-selector reason=FailedCreatePodSandBox -o jsonpath='{.items[0].message}'
    kill "$pid"
    wait "$pid" || true
    [ "$reason" = "ContainerCreating" ]
    [[ "$output" == *'no runtime for "nvidia" is configured'* ]]
}

small_ds() {
    cat <<'EOF2'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: probe
  namespace: gc-lab
spec:
  selector:
    matchLabels:
      app: probe
  template:
    metadata:
      labels:
        app: probe
    spec:
      containers:
      - name: probe
        image: registry.k8s.io/pause:3.10
EOF2
}

@test "cascading deletes: orphan keeps the pods, foreground removes them before the owner, a running pod's delete completes" {
    k create namespace gc-lab >/dev/null
    small_ds | k apply -f - >/dev/null
    until_output "3" get ds probe -n gc-lab -o jsonpath='{.status.numberReady}'
    run k delete ds probe -n gc-lab --cascade=orphan
    [ "$output" = 'daemonset.apps "probe" deleted' ]
    run k get pods -n gc-lab -o jsonpath='{range .items[*]}{.status.phase} {.metadata.ownerReferences}{"\n"}{end}'
    [ "$output" = $'Running \nRunning \nRunning ' ]
    # a new DaemonSet adopts the orphans instead of making new pods
    small_ds | k apply -f - >/dev/null
    until_output $'DaemonSet\nDaemonSet\nDaemonSet' get pods -n gc-lab -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}{"\n"}{end}'
    run k get pods -n gc-lab -o name
    [ "${#lines[@]}" -eq 3 ]
    run k delete ds probe -n gc-lab --cascade=foreground --timeout=30s
    [ "$output" = 'daemonset.apps "probe" deleted' ]
    run k get pods -n gc-lab -o name
    [ "$output" = "" ]
    # a plain pod bound to a node: the kubelet ends its grace period
    k run solo -n gc-lab --image=registry.k8s.io/pause:3.10 >/dev/null
    until_output "Running" get pod solo -n gc-lab -o jsonpath='{.status.phase}'
    run k delete pod solo -n gc-lab --timeout=30s
    [ "$output" = 'pod "solo" deleted' ]
}

@test "an owner the collector does not keep in its snapshot (a ServiceAccount) still counts while it exists" {
    k create namespace own-lab >/dev/null
    k create serviceaccount keeper -n own-lab >/dev/null
    uid=$(k get serviceaccount keeper -n own-lab -o jsonpath='{.metadata.uid}')
    k apply -f - >/dev/null <<EOF2
apiVersion: v1
kind: ConfigMap
metadata:
  name: owned
  namespace: own-lab
  ownerReferences:
  - {apiVersion: v1, kind: ServiceAccount, name: keeper, uid: "$uid"}
data: {k: v}
EOF2
    # a deletion makes the collector look at everything
    k create configmap scratch -n own-lab >/dev/null
    k delete configmap scratch -n own-lab >/dev/null
    sleep 3
    run k get configmap owned -n own-lab -o jsonpath='{.data.k}'
    [ "$output" = "v" ]
    # the owner goes: so does what it owns
    k delete serviceaccount keeper -n own-lab >/dev/null
    until_output "" get configmaps -n own-lab --field-selector metadata.name=owned -o name
}

#!/usr/bin/env bats
# Conformance of the embedded API server, judged by the real kubectl 1.32:
# every command of k8s-semantics.md section 8 with the output kubectl prints
# against a real cluster. One server per file (setup_file); each test works
# in namespaces of its own. Never touches the user's home or kubeconfig.

bats_require_minimum_version 1.5.0
load lab_manifests

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    export CTMP="$BATS_FILE_TMPDIR"
    export HOME=$CTMP/home
    export DATA=$CTMP/data
    export KC=$DATA/kubeconfig
    mkdir -p "$HOME"
    start_server
}

teardown_file() {
    stop_server
}

start_server() {
    # the API server alone, as kube-apiserver without controllers: what
    # happens to objects here is only what the API does (lab_cluster.bats
    # tests the controllers)
    "$GPUOP" cluster serve --data "$DATA" --watch-history 64 --no-controllers \
        2>>"$CTMP/server.log" &
    echo $! >"$CTMP/pid"
    for _ in $(seq 1 100); do
        [ -f "$KC" ] && k get --raw /readyz >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    cat "$CTMP/server.log" >&2
    return 1
}

stop_server() {
    local pid
    pid=$(cat "$CTMP/pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -f "$CTMP/pid" "$KC"
}

k() {
    kubectl --kubeconfig "$KC" --cache-dir "$CTMP/cache" --request-timeout=10s "$@"
}

node_manifest() {
    cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels:
    kubernetes.io/hostname: $1
status:
  capacity:
    cpu: "16"
    memory: 32Gi
    pods: "110"
  allocatable:
    cpu: "16"
    memory: 32Gi
    pods: "110"
  conditions:
  - type: Ready
    status: "True"
    reason: KubeletReady
    message: kubelet is posting ready status
  nodeInfo:
    kubeletVersion: v1.32.0
EOF
}

@test "create namespace (protobuf body): created, then AlreadyExists" {
    run k create namespace gpu-lab
    [ "$status" -eq 0 ]
    [ "$output" = "namespace/gpu-lab created" ]
    run k create namespace gpu-lab
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (AlreadyExists): namespaces "gpu-lab" already exists' ]
}

@test "get namespaces: the real columns, the four namespaces every cluster has" {
    k create namespace ns-list >/dev/null
    run k get namespaces
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^NAME\ +STATUS\ +AGE$ ]]
    for ns in default kube-node-lease kube-public kube-system ns-list; do
        [[ "$output" =~ $ns\ +Active\ +[0-9]+s ]]
    done
    run k get ns ns-list -o jsonpath='{.metadata.labels.kubernetes\.io/metadata\.name} {.spec.finalizers[0]} {.status.phase}'
    [ "$output" = "ns-list kubernetes Active" ]
}

@test "an empty namespace: No resources found" {
    k create namespace empty-ns >/dev/null
    run k get pods -n empty-ns
    [ "$status" -eq 0 ]
    [ "$output" = "No resources found in empty-ns namespace." ]
}

@test "apply the lab manifest: created, then unchanged; the pod as the real server defaults it" {
    k create namespace apply-lab >/dev/null
    run k apply -f <(lab_manifest apply-lab)
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "runtimeclass.node.k8s.io/nvidia created" ] || [ "${lines[0]}" = "runtimeclass.node.k8s.io/nvidia unchanged" ]
    [ "${lines[1]}" = "pod/cuda-probe created" ]
    local rv
    rv=$(k get pod cuda-probe -n apply-lab -o jsonpath='{.metadata.resourceVersion}')
    # The manifest's `nvidia.com/gpu: 1` is a YAML integer and the live object
    # holds "1": kubectl's three-way diff sends that limit again and prints
    # "configured", as against a real cluster (kubernetes/kubernetes#66450);
    # the server finds nothing changed and stores nothing.
    run k apply -f <(lab_manifest apply-lab)
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "runtimeclass.node.k8s.io/nvidia unchanged" ]
    [ "${lines[1]}" = "pod/cuda-probe configured" ]
    [ "$(k get pod cuda-probe -n apply-lab -o jsonpath='{.metadata.resourceVersion}')" = "$rv" ]
    run k get pod cuda-probe -n apply-lab -o jsonpath='{.spec.containers[0].resources.requests.nvidia\.com/gpu}|{.status.phase}|{.status.qosClass}|{.spec.containers[0].imagePullPolicy}|{.spec.schedulerName}|{.spec.tolerations[0].key}:{.spec.tolerations[0].tolerationSeconds}|{.spec.terminationGracePeriodSeconds}'
    [ "$output" = "1|Pending|BestEffort|IfNotPresent|default-scheduler|node.kubernetes.io/not-ready:300|30" ]
}

@test "get pod: the real Table columns, with -o wide" {
    k create namespace table-lab >/dev/null
    k apply -f <(lab_manifest table-lab) >/dev/null
    run k get pods -n table-lab
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^NAME\ +READY\ +STATUS\ +RESTARTS\ +AGE$ ]]
    [[ "${lines[1]}" =~ ^cuda-probe\ +0/1\ +Pending\ +0\ +[0-9]+s$ ]]
    run k get pods -n table-lab -o wide
    [[ "${lines[0]}" =~ ^NAME\ +READY\ +STATUS\ +RESTARTS\ +AGE\ +IP\ +NODE\ +NOMINATED\ NODE\ +READINESS\ GATES$ ]]
    [[ "${lines[1]}" =~ ^cuda-probe\ +0/1\ +Pending\ +0\ +[0-9]+s\ +\<none\>\ +\<none\>\ +\<none\>\ +\<none\>$ ]]
    run k get pods -A
    [[ "${lines[0]}" =~ ^NAMESPACE\ +NAME\ +READY ]]
    [[ "$output" =~ table-lab\ +cuda-probe\ +0/1\ +Pending ]]
}

@test "get -o yaml, json, name, custom-columns" {
    k create namespace out-lab >/dev/null
    k apply -f <(lab_manifest out-lab) >/dev/null
    run k get pod cuda-probe -n out-lab -o yaml
    [[ "$output" == *"  name: cuda-probe"* ]]
    [[ "$output" == *"runtimeClassName: nvidia"* ]]
    run k get pods -n out-lab -o json
    [ "$(echo "$output" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kind"], len(d["items"]), d["items"][0]["metadata"]["name"])')" = "List 1 cuda-probe" ]
    run k get pods -n out-lab -o name
    [ "$output" = "pod/cuda-probe" ]
    run k get pods -n out-lab -o custom-columns='NAME:.metadata.name,GPU:.spec.containers[0].resources.limits.nvidia\.com/gpu,NODE:.spec.nodeName'
    [ "${lines[1]}" = "cuda-probe   1     <none>" ]
}

@test "NotFound for a missing object, a missing namespace; Forbidden for a missing RuntimeClass" {
    run k get pod nothing-here -n default
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (NotFound): pods "nothing-here" not found' ]
    run k apply -f <(lab_manifest no-such-ns | sed -n '/^kind: Pod/,$p' | sed '1i apiVersion: v1')
    [ "$status" -eq 1 ]
    [[ "$output" == *'Error from server (NotFound): error when creating "'*'": namespaces "no-such-ns" not found' ]]
    k create namespace rc-lab >/dev/null
    run k apply -f <(lab_manifest rc-lab | sed -n '/^kind: Pod/,$p' | sed '1i apiVersion: v1' | sed 's/runtimeClassName: nvidia/runtimeClassName: missing-rc/')
    [ "$status" -eq 1 ]
    [[ "$output" == *'Error from server (Forbidden): error when creating "'*'": pods "cuda-probe" is forbidden: pod rejected: RuntimeClass "missing-rc" not found' ]]
}

@test "validation: 422 with the field, as kubectl prints it" {
    run k apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: bad
  namespace: default
spec:
  containers:
  - name: c
EOF
    [ "$status" -eq 1 ]
    [ "$output" = 'The Pod "bad" is invalid: spec.containers[0].image: Required value' ]
    run k apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: Bad_Name
  namespace: default
spec:
  containers:
  - name: c
    image: i
    resources:
      limits:
        nvidia.com/gpu: 500m
EOF
    [ "$status" -eq 1 ]
    # several causes: kubectl lists them one per line
    [ "${lines[0]}" = 'The Pod "Bad_Name" is invalid: ' ]
    [[ "${lines[1]}" == '* metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of'* ]]
    [ "${lines[2]}" = '* spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: 500m: must be an integer' ]
}

@test "create configmap (protobuf), get, label, annotate" {
    k create namespace cm-lab >/dev/null
    run k create configmap settings -n cm-lab --from-literal=a=1 --from-literal=b=two
    [ "$status" -eq 0 ]
    [ "$output" = "configmap/settings created" ]
    run k get cm settings -n cm-lab
    [[ "${lines[0]}" =~ ^NAME\ +DATA\ +AGE$ ]]
    [[ "${lines[1]}" =~ ^settings\ +2\ +[0-9]+s$ ]]
    run k get cm settings -n cm-lab -o jsonpath='{.data.b}'
    [ "$output" = "two" ]
    run k label cm settings -n cm-lab tier=lab
    [ "$output" = "configmap/settings labeled" ]
    run k label cm settings -n cm-lab tier=lab
    [ "$output" = "configmap/settings not labeled" ]
    run k annotate cm settings -n cm-lab note=hello
    [ "$output" = "configmap/settings annotated" ]
    run k get cm -n cm-lab -l tier=lab -o name
    [ "$output" = "configmap/settings" ]
    run k get cm -n cm-lab -l tier=other
    [ "$output" = "No resources found in cm-lab namespace." ]
}

@test "patch: strategic, merge and json; (no change) when nothing changes" {
    k create namespace patch-lab >/dev/null
    k create configmap p -n patch-lab --from-literal=a=1 >/dev/null
    run k patch cm p -n patch-lab -p '{"data":{"b":"2"}}'
    [ "$output" = "configmap/p patched" ]
    run k patch cm p -n patch-lab -p '{"data":{"b":"2"}}'
    [ "$output" = "configmap/p patched (no change)" ]
    run k patch cm p -n patch-lab --type=merge -p '{"data":{"a":null}}'
    [ "$output" = "configmap/p patched" ]
    run k patch cm p -n patch-lab --type=json -p '[{"op":"add","path":"/data/c","value":"3"}]'
    [ "$output" = "configmap/p patched" ]
    run k get cm p -n patch-lab -o jsonpath='{.data}'
    [ "$output" = '{"b":"2","c":"3"}' ]
    run k patch cm p -n patch-lab --type=json -p '[{"op":"remove","path":"/data/nope"}]'
    [ "$status" -eq 1 ]
    [[ "$output" == *"the server rejected our request due to an error in our request"* ]]
}

@test "node status: only through --subresource=status, and (no change) the second time" {
    k apply -f <(node_manifest lab-node-0) >/dev/null
    run k patch node lab-node-0 -p '{"status":{"capacity":{"nvidia.com/gpu":"4"}}}'
    [ "$status" -eq 0 ]
    [ "$output" = "node/lab-node-0 patched (no change)" ]
    run k patch node lab-node-0 --subresource=status -p '{"status":{"capacity":{"nvidia.com/gpu":"4"},"allocatable":{"nvidia.com/gpu":"4"}}}'
    [ "$output" = "node/lab-node-0 patched" ]
    run k patch node lab-node-0 --subresource=status -p '{"status":{"capacity":{"nvidia.com/gpu":"4"},"allocatable":{"nvidia.com/gpu":"4"}}}'
    [ "$output" = "node/lab-node-0 patched (no change)" ]
    run k get nodes -o custom-columns='NAME:.metadata.name,GPU:.status.allocatable.nvidia\.com/gpu,MEM:.status.allocatable.memory'
    [ "${lines[1]}" = "lab-node-0   4     32Gi" ]
    run k get node lab-node-0
    [[ "${lines[0]}" =~ ^NAME\ +STATUS\ +ROLES\ +AGE\ +VERSION$ ]]
    [[ "${lines[1]}" =~ ^lab-node-0\ +Ready\ +\<none\>\ +[0-9]+s\ +v1.32.0$ ]]
    run k cordon lab-node-0
    [ "$output" = "node/lab-node-0 cordoned" ]
    run k get node lab-node-0
    [[ "${lines[1]}" =~ ^lab-node-0\ +Ready,SchedulingDisabled ]]
    k uncordon lab-node-0 >/dev/null
}

@test "daemonset: apply, edited apply, set image, set resources; generation and columns" {
    k create namespace ds-lab >/dev/null
    run k apply -f <(toolkit_manifest ds-lab nvcr.io/nvidia/k8s/container-toolkit:v1.16.2 128Mi)
    [ "$output" = "daemonset.apps/nvidia-container-toolkit created" ]
    run k get ds -n ds-lab nvidia-container-toolkit -o jsonpath='{.metadata.generation} {.metadata.annotations.deprecated\.daemonset\.template\.generation} {.spec.updateStrategy.rollingUpdate.maxSurge} {.spec.revisionHistoryLimit}'
    [ "$output" = "1 1 0 10" ]
    run k apply -f <(toolkit_manifest ds-lab nvcr.io/nvidia/k8s/container-toolkit:v1.16.2 128Mi)
    [ "$output" = "daemonset.apps/nvidia-container-toolkit unchanged" ]
    run k apply -f <(toolkit_manifest ds-lab nvcr.io/nvidia/k8s/container-toolkit:v1.17.0 64Gi)
    [ "$output" = "daemonset.apps/nvidia-container-toolkit configured" ]
    run k get ds -n ds-lab nvidia-container-toolkit -o jsonpath='{.metadata.generation} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].resources.requests.memory}'
    [ "$output" = "2 nvcr.io/nvidia/k8s/container-toolkit:v1.17.0 64Gi" ]
    run k set image ds/nvidia-container-toolkit -n ds-lab agent=nvcr.io/nvidia/k8s/container-toolkit:v1.17.1
    [ "$output" = "daemonset.apps/nvidia-container-toolkit image updated" ]
    run k set resources ds/nvidia-container-toolkit -n ds-lab -c agent --requests=memory=32Gi
    [ "$output" = "daemonset.apps/nvidia-container-toolkit resource requirements updated" ]
    run k get ds -n ds-lab nvidia-container-toolkit -o jsonpath='{.metadata.generation} {.metadata.annotations.deprecated\.daemonset\.template\.generation} {.spec.template.spec.containers[0].resources.requests.memory}'
    [ "$output" = "4 4 32Gi" ]
    run k get ds -n ds-lab
    [[ "${lines[0]}" =~ ^NAME\ +DESIRED\ +CURRENT\ +READY\ +UP-TO-DATE\ +AVAILABLE\ +NODE\ SELECTOR\ +AGE$ ]]
    [[ "${lines[1]}" =~ ^nvidia-container-toolkit\ +0\ +0\ +0\ +0\ +0\ +\<none\>\ +[0-9]+s$ ]]
    run k rollout restart ds/nvidia-container-toolkit -n ds-lab
    [ "$output" = "daemonset.apps/nvidia-container-toolkit restarted" ]
}

@test "describe pod, node and daemonset" {
    k create namespace describe-lab >/dev/null
    k apply -f <(lab_manifest describe-lab) >/dev/null
    run k describe pod cuda-probe -n describe-lab
    [ "$status" -eq 0 ]
    [[ "$output" =~ Namespace:\ +describe-lab ]]
    [[ "$output" =~ Status:\ +Pending ]]
    [[ "$output" =~ QoS\ Class:\ +BestEffort ]]
    [[ "$output" =~ Runtime\ Class\ Name:\ +nvidia ]]
    [[ "$output" == *"node.kubernetes.io/not-ready:NoExecute op=Exists for 300s"* ]]
    k apply -f <(node_manifest describe-node) >/dev/null
    run k describe node describe-node
    [ "$status" -eq 0 ]
    [[ "$output" =~ Name:\ +describe-node ]]
    [[ "$output" =~ memory:\ +32Gi ]]
    k create namespace ds-describe >/dev/null
    toolkit_manifest ds-describe img:v1 128Mi | k apply -f - >/dev/null
    run k describe ds nvidia-container-toolkit -n ds-describe
    [ "$status" -eq 0 ]
    [[ "$output" =~ Desired\ Number\ of\ Nodes\ Scheduled:\ 0 ]]
    [[ "$output" =~ Pods\ Status:\ +0\ Running\ /\ 0\ Waiting\ /\ 0\ Succeeded\ /\ 0\ Failed ]]
}

@test "get -w prints changes as they happen" {
    k create namespace watch-lab >/dev/null
    k -n watch-lab get cm -w >"$CTMP/watch.out" 2>&1 &
    local watcher=$!
    sleep 1
    k create configmap w1 -n watch-lab --from-literal=x=1 >/dev/null
    k patch cm w1 -n watch-lab -p '{"data":{"x":"2"}}' >/dev/null
    sleep 1
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    run cat "$CTMP/watch.out"
    [[ "${lines[0]}" =~ ^NAME\ +DATA\ +AGE$ ]]
    [[ "${lines[1]}" =~ ^w1\ +1\ +[0-9]+s$ ]]
    [ "${#lines[@]}" -ge 3 ]
}

@test "wait: condition met, and the timeout message" {
    k create namespace wait-lab >/dev/null
    k create configmap ready -n wait-lab --from-literal=state=go >/dev/null
    run k wait --for=jsonpath='{.data.state}'=go cm/ready -n wait-lab --timeout=10s
    [ "$status" -eq 0 ]
    [ "$output" = "configmap/ready condition met" ]
    k apply -f <(lab_manifest wait-lab) >/dev/null
    run k wait --for=condition=Ready pod/cuda-probe -n wait-lab --timeout=1s
    [ "$status" -eq 1 ]
    [ "$output" = "error: timed out waiting for the condition on pods/cuda-probe" ]
}

@test "wait notices a change made while it waits (watch)" {
    k create namespace wait2-lab >/dev/null
    k create configmap later -n wait2-lab --from-literal=state=wait >/dev/null
    (sleep 1; k patch cm later -n wait2-lab -p '{"data":{"state":"go"}}' >/dev/null) &
    run k wait --for=jsonpath='{.data.state}'=go cm/later -n wait2-lab --timeout=20s
    [ "$status" -eq 0 ]
    [ "$output" = "configmap/later condition met" ]
}

@test "delete: an unscheduled pod goes at once; delete -f; create -f" {
    k create namespace delete-lab >/dev/null
    k apply -f <(lab_manifest delete-lab) >/dev/null
    run k delete pod cuda-probe -n delete-lab
    [ "$status" -eq 0 ]
    [ "$output" = 'pod "cuda-probe" deleted' ]
    run k get pod cuda-probe -n delete-lab
    [ "$output" = 'Error from server (NotFound): pods "cuda-probe" not found' ]
    run k create -f <(lab_manifest delete-lab | sed -n '/^kind: Pod/,$p' | sed '1i apiVersion: v1')
    [ "$output" = "pod/cuda-probe created" ]
    run k delete -f <(lab_manifest delete-lab | sed -n '/^kind: Pod/,$p' | sed '1i apiVersion: v1')
    [ "$output" = 'pod "cuda-probe" deleted' ]
}

@test "a bound pod waits out its grace period; finalizers hold an object" {
    k create namespace grace-lab >/dev/null
    k create configmap held -n grace-lab >/dev/null
    k patch cm held -n grace-lab --type=merge -p '{"metadata":{"finalizers":["lab.gpuop/hold"]}}' >/dev/null
    run k delete cm held -n grace-lab --wait=false
    [ "$output" = 'configmap "held" deleted' ]
    run k get cm held -n grace-lab -o jsonpath='{.metadata.deletionTimestamp}'
    [ -n "$output" ]
    k patch cm held -n grace-lab --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null || true
    run k get cm held -n grace-lab
    [ "$output" = 'Error from server (NotFound): configmaps "held" not found' ]
}

@test "edit with an EDITOR script" {
    k create namespace edit-lab >/dev/null
    k create configmap e -n edit-lab --from-literal=v=old >/dev/null
    cat >"$CTMP/editor.sh" <<'EOF'
#!/bin/sh
sed -i 's/v: old/v: new/' "$1"
EOF
    chmod +x "$CTMP/editor.sh"
    run env EDITOR="$CTMP/editor.sh" kubectl --kubeconfig "$KC" --cache-dir "$CTMP/cache" edit cm e -n edit-lab
    [ "$output" = "configmap/e edited" ]
    run k get cm e -n edit-lab -o jsonpath='{.data.v}'
    [ "$output" = "new" ]
}

@test "replace with a stale resourceVersion: Conflict" {
    k create namespace conflict-lab >/dev/null
    k create configmap c -n conflict-lab --from-literal=v=1 >/dev/null
    k get cm c -n conflict-lab -o json >"$CTMP/c.json"
    k patch cm c -n conflict-lab -p '{"data":{"v":"2"}}' >/dev/null
    run k replace -f "$CTMP/c.json"
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (Conflict): error when replacing "'"$CTMP"'/c.json": Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again' ]
}

@test "label and field selectors" {
    k create namespace sel-lab >/dev/null
    for i in 1 2 3; do k create configmap "s$i" -n sel-lab >/dev/null; done
    k label cm s1 s2 -n sel-lab tier=gpu >/dev/null
    run k get cm -n sel-lab -l 'tier in (gpu)' -o name
    [ "$output" = $'configmap/s1\nconfigmap/s2' ]
    run k get cm -n sel-lab -l '!tier' -o name
    [ "$output" = "configmap/s3" ]
    run k get cm -n sel-lab --field-selector metadata.name=s2 -o name
    [ "$output" = "configmap/s2" ]
    run k get cm -n sel-lab --field-selector spec.nothing=x
    [ "$status" -eq 1 ]
    [[ "$output" == *"field label not supported: spec.nothing"* ]]
}

@test "limit and continue: kubectl pages through a long list" {
    k create namespace page-lab >/dev/null
    for i in $(seq 1 7); do k create configmap "p$i" -n page-lab >/dev/null; done
    run k get cm -n page-lab --chunk-size=3 -o name
    [ "${#lines[@]}" -eq 7 ]
    [ "${lines[6]}" = "configmap/p7" ]
}

@test "concurrent kubectl clients all succeed with distinct resourceVersions" {
    k create namespace many-lab >/dev/null
    for i in $(seq 1 12); do k create configmap "c$i" -n many-lab >/dev/null & done
    wait
    run k get cm -n many-lab -o jsonpath='{range .items[*]}{.metadata.resourceVersion}{"\n"}{end}'
    [ "${#lines[@]}" -eq 12 ]
    [ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" -eq 12 ]
}

@test "watch from an expired resourceVersion: 410 Expired as the real server says it" {
    for i in $(seq 1 70); do k create configmap "x$i" -n default >/dev/null; done
    run k get --raw '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1'
    [[ "$output" == *'"reason":"Expired","code":410'* ]]
    [[ "$output" == *'too old resource version: 1 ('* ]]
}

@test "data survives a restart and a kill -9" {
    k create namespace durable-lab >/dev/null
    k create configmap kept -n durable-lab --from-literal=k=v >/dev/null
    stop_server
    start_server
    run k get cm kept -n durable-lab -o jsonpath='{.data.k}'
    [ "$output" = "v" ]
    k create configmap after -n durable-lab --from-literal=k=w >/dev/null
    kill -9 "$(cat "$CTMP/pid")"
    wait "$(cat "$CTMP/pid")" 2>/dev/null || true
    start_server
    run k get cm after -n durable-lab -o jsonpath='{.data.k}'
    [ "$output" = "w" ]
}

@test "bounds: a body over 3 MiB is 413, a ConfigMap over 1 MiB is 422, an object over 1.5 MiB is 422, nothing stored" {
    k create namespace bounds-lab >/dev/null
    head -c 3500000 /dev/zero | tr '\0' a >"$CTMP/big"
    head -c 1200000 /dev/zero | tr '\0' a >"$CTMP/mid"
    run k create configmap big -n bounds-lab --from-file="$CTMP/big"
    [ "$status" -eq 1 ]
    [ "$output" = "error: failed to create configmap: Request entity too large: limit is 3145728" ]
    run k create configmap mid -n bounds-lab --from-file="$CTMP/mid"
    [ "$status" -eq 1 ]
    [ "$output" = 'error: failed to create configmap: ConfigMap "mid" is invalid: []: Too long: may not be more than 1048576 bytes' ]
    # a pod whose fields each pass but which as a whole is over the 1.5 MiB
    # an object may be (etcd's request limit): refused, counted on the
    # object as it would be stored
    python3 - "$CTMP/pod.json" <<'PY'
import json, sys
env = [{"name": "E", "value": "x" * 200000}]
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "big", "namespace": "bounds-lab"},
       "spec": {"containers": [{"name": "c%d" % i, "image": "busybox", "env": env}
                               for i in range(9)]}}
json.dump(pod, open(sys.argv[1], "w"))
PY
    run k create -f "$CTMP/pod.json"
    [ "$status" -eq 1 ]
    [ "$output" = 'The Pod "big" is invalid: metadata: Too long: may not be more than 1572864 bytes' ]
    run k get cm -n bounds-lab
    [ "$output" = "No resources found in bounds-lab namespace." ]
    run k get pods -n bounds-lab
    [ "$output" = "No resources found in bounds-lab namespace." ]
    run k get --raw /readyz
    [ "$output" = "ok" ]
}

@test "bounds: a small JSON patch that copies an object past 1.5 MiB is 422, and the object stays as it was" {
    # The server skips counting an object's bytes when the request bounds
    # its size; a JSON patch's copy bounds nothing, so this must be counted.
    k create namespace grow-lab >/dev/null
    python3 - "$CTMP/ds.json" <<'PY'
import json, sys
ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
      "metadata": {"name": "grow", "namespace": "grow-lab"},
      "spec": {"selector": {"matchLabels": {"app": "grow"}},
               "template": {"metadata": {"labels": {"app": "grow"}},
                            "spec": {"containers": [{"name": "c", "image": "busybox",
                                                     "args": ["x" * 800000]}]}}}}
json.dump(ds, open(sys.argv[1], "w"))
PY
    k create -f "$CTMP/ds.json" >/dev/null
    rv=$(k get ds grow -n grow-lab -o jsonpath='{.metadata.resourceVersion}')
    run k patch ds grow -n grow-lab --type=json \
        -p '[{"op":"copy","from":"/spec/template/spec/containers/0/args/0","path":"/spec/template/spec/containers/0/args/-"}]'
    [ "$status" -eq 1 ]
    [ "$output" = 'The DaemonSet "grow" is invalid: metadata: Too long: may not be more than 1572864 bytes' ]
    run k get ds grow -n grow-lab -o jsonpath='{.metadata.resourceVersion} {.spec.template.spec.containers[0].args[*]}'
    [ "${output%% *}" = "$rv" ]
    [ "${#output}" -eq $((${#rv} + 1 + 800000)) ]
}

@test "bounds: a pod that its RuntimeClass's scheduling takes past 1.5 MiB is 422 (counted after admission)" {
    # The pod alone is 0.6 MB and the class's nodeSelector 1.15 MB: only the
    # pod as RuntimeClass admission leaves it is over the limit.
    k create namespace rc-bounds >/dev/null
    python3 - "$CTMP/rc.json" "$CTMP/pod.json" <<'PY'
import json, sys
sel = {"example.com/k-%05d-%s" % (i, "p" * 40): "v" * 60 for i in range(9000)}
rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
      "metadata": {"name": "wide"}, "handler": "runc", "scheduling": {"nodeSelector": sel}}
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "wide", "namespace": "rc-bounds"},
       "spec": {"runtimeClassName": "wide",
                "containers": [{"name": "c", "image": "busybox",
                                "env": [{"name": "E", "value": "x" * 600000}]}]}}
json.dump(rc, open(sys.argv[1], "w"))
json.dump(pod, open(sys.argv[2], "w"))
PY
    k create -f "$CTMP/rc.json" >/dev/null
    run k create -f "$CTMP/pod.json"
    [ "$status" -eq 1 ]
    [ "$output" = 'The Pod "wide" is invalid: metadata: Too long: may not be more than 1572864 bytes' ]
    run k get pods -n rc-bounds
    [ "$output" = "No resources found in rc-bounds namespace." ]
    k delete runtimeclass wide >/dev/null
}

# ---- decoding: the Go types of the served kinds (issue 15) --------------------

# An HTTP request with the server's token, by Python: METHOD PATH
# CONTENT-TYPE BODY-FILE (or -); prints the status, the Warning headers and
# the body, a line each.
raw() {
    python3 - "$KC" "$DATA/token" "$@" <<'PY'
import json, ssl, sys, urllib.request
cfg = json.load(open(sys.argv[1]))
token = open(sys.argv[2]).read().strip()
method, path, ctype, body = sys.argv[3:7]
data = None if body == "-" else open(body, "rb").read()
req = urllib.request.Request(cfg["clusters"][0]["cluster"]["server"] + path, data=data,
                             method=method)
req.add_header("Authorization", "Bearer " + token)
if ctype != "-":
    req.add_header("Content-Type", ctype)
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    r = urllib.request.urlopen(req, context=ctx, timeout=10)
except urllib.error.HTTPError as e:
    r = e
print(r.status)
for w in r.headers.get_all("Warning") or []:
    print("Warning:", w)
print(r.read().decode())
PY
}

@test "decoding: a value of the wrong type is kube-apiserver's 400, nothing is stored" {
    k create namespace dec-types >/dev/null
    # kubectl apply reads metadata itself, so these go as they are
    echo '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad","labels":[1]}}' >"$CTMP/labels.json"
    run k create --raw /api/v1/namespaces/dec-types/configmaps -f "$CTMP/labels.json"
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (BadRequest): ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string' ]
    echo '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad","finalizers":"x"}}' >"$CTMP/fin.json"
    run k create --raw /api/v1/namespaces/dec-types/configmaps -f "$CTMP/fin.json"
    [ "$output" = 'Error from server (BadRequest): ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string' ]
    run k apply -f - <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: dec-types}
spec:
  containers: [{name: c, image: busybox, ports: [{containerPort: "80"}]}]
EOF2
    [ "$output" = 'Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32' ]
    run k get cm,pods -n dec-types -o name
    [ -z "$output" ]
}

@test "fieldValidation: Strict refuses unknown fields, Warn warns, Ignore stores quietly" {
    k create namespace dec-strict >/dev/null
    cat >"$CTMP/typo.yaml" <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: typo, namespace: dec-strict}
spec:
  runtimeclassName: nvidia
  containers: [{name: c, image: busybox, imagePullPolicyy: Always}]
EOF2
    run k apply -f "$CTMP/typo.yaml"
    [ "$status" -eq 1 ]
    [ "$output" = "Error from server (BadRequest): error when creating \"$CTMP/typo.yaml\": Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.containers[0].imagePullPolicyy\", unknown field \"spec.runtimeclassName\"" ]
    run k apply --validate=warn -f "$CTMP/typo.yaml"
    [ "$status" -eq 0 ]
    [[ "$output" == *'Warning: unknown field "spec.runtimeclassName"'* ]]
    [[ "$output" == *'Warning: unknown field "spec.containers[0].imagePullPolicyy"'* ]]
    [[ "$output" == *"pod/typo created"* ]]
    # the unknown fields are dropped, not stored
    run k get pod typo -n dec-strict -o jsonpath='{.spec.runtimeclassName}{.spec.containers[0].imagePullPolicyy}'
    [ -z "$output" ]
    sed 's/name: typo/name: typo2/' "$CTMP/typo.yaml" >"$CTMP/typo2.yaml"
    run --separate-stderr k apply --validate=false -f "$CTMP/typo2.yaml"
    [ "$status" -eq 0 ]
    [ "$output" = "pod/typo2 created" ]
    [ -z "$stderr" ]
    # a value that is not a directive is refused before anything
    echo '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}' >"$CTMP/cm.json"
    run raw POST "/api/v1/namespaces/dec-strict/configmaps?fieldValidation=Loose" application/json "$CTMP/cm.json"
    [ "${lines[0]}" = 422 ]
    [[ "$output" == *'"message":"CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Loose\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""'* ]]
}

@test "fieldValidation: a duplicate field warns without the parameter (kube's default is Warn)" {
    k create namespace dec-dup >/dev/null
    printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"},"data":{"k":"1","k":"2"}}' >"$CTMP/dup.json"
    run raw POST /api/v1/namespaces/dec-dup/configmaps application/json "$CTMP/dup.json"
    [ "${lines[0]}" = 201 ]
    [ "${lines[1]}" = 'Warning: 299 - "duplicate field \"metadata.name\""' ]
    [ "${lines[2]}" = 'Warning: 299 - "duplicate field \"data.k\""' ]
    # the last one wins, as in encoding/json
    run k get cm b -n dec-dup -o jsonpath='{.data.k}'
    [ "$output" = 2 ]
    run raw POST "/api/v1/namespaces/dec-dup/configmaps?fieldValidation=Strict" application/json "$CTMP/dup.json"
    [ "${lines[0]}" = 400 ]
    [[ "$output" == *'cannot be handled as a ConfigMap: strict decoding error: duplicate field \"metadata.name\", duplicate field \"data.k\""'* ]]
}

@test "patches are checked as kube's patcher checks them (422 patch: Invalid value)" {
    k create namespace dec-patch >/dev/null
    k create configmap c -n dec-patch --from-literal=a=1 >/dev/null
    # kubectl patch sends no fieldValidation: the server's default, Warn
    run k patch cm c -n dec-patch -p '{"bogus":1}'
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf 'Warning: unknown field "bogus"\nconfigmap/c patched (no change)')" ]
    echo '{"bogus":1}' >"$CTMP/bogus.json"
    run raw PATCH '/api/v1/namespaces/dec-patch/configmaps/c?fieldValidation=Strict' application/strategic-merge-patch+json "$CTMP/bogus.json"
    [ "${lines[0]}" = 422 ]
    [[ "$output" == *'"message":" \"\" is invalid: patch: Invalid value: \"map[bogus:1]\": strict decoding error: unknown field \"bogus\""'* ]]
    run k patch cm c -n dec-patch -p '{"data":{"a":5}}'
    [ "$status" -eq 1 ]
    [ "$output" = 'The request is invalid: patch: Invalid value: "map[data:map[a:5]]": cannot convert int64 to string' ]
    run k patch cm c -n dec-patch --type=merge -p '{"data":{"a":5}}'
    [ "$status" -eq 1 ]
    [[ "$output" == 'The request is invalid: patch: Invalid value: "{\"apiVersion\":\"v1\",\"data\":{\"a\":5},'*'": json: cannot unmarshal number into Go struct field ConfigMap.data of type string' ]]
    run k get cm c -n dec-patch -o jsonpath='{.data.a}'
    [ "$output" = 1 ]
}

@test "application/yaml bodies are read as kube-apiserver reads them" {
    k create namespace dec-yaml >/dev/null
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  on: "yes"\n' >"$CTMP/cm.yaml"
    run raw POST /api/v1/namespaces/dec-yaml/configmaps application/yaml "$CTMP/cm.yaml"
    [ "${lines[0]}" = 201 ]
    run k get cm from-yaml -n dec-yaml -o jsonpath='{.data}'
    [ "$output" = '{"true":"yes"}' ]
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad-yaml}\ndata: {a: 1}\n' >"$CTMP/bad.yaml"
    run raw POST /api/v1/namespaces/dec-yaml/configmaps application/yaml "$CTMP/bad.yaml"
    [ "${lines[0]}" = 400 ]
    [[ "$output" == *'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'* ]]
}

@test "application/yaml: keys given twice as kube-apiserver's strict YAML reading says" {
    # kube-apiserver runs a YAML body through sigs.k8s.io/yaml's
    # YAMLToJSONStrict under Warn and Strict (apimachinery
    # runtime/serializer/json/json.go); go-yaml v2 names the line of the
    # second value. The texts: kubernetes test/integration/apiserver/
    # field_validation_test.go (post-*-validation-yaml): one warning a line,
    # then the unknown fields; handlers/rest.go parseYAMLWarnings.
    k create namespace dec-ydup >/dev/null
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\ndata:\n  k: "1"\n  k: "2"\nbogus: 1\n' >"$CTMP/dup.yaml"
    run raw POST /api/v1/namespaces/dec-ydup/configmaps application/yaml "$CTMP/dup.yaml"
    [ "${lines[0]}" = 201 ]
    [ "${lines[1]}" = 'Warning: 299 - "line 5: key \"name\" already set in map"' ]
    [ "${lines[2]}" = 'Warning: 299 - "line 8: key \"k\" already set in map"' ]
    [ "${lines[3]}" = 'Warning: 299 - "unknown field \"bogus\""' ]
    # the last one wins, as in sigs.k8s.io/yaml's YAMLToJSON
    run k get cm b -n dec-ydup -o jsonpath='{.data.k}'
    [ "$output" = 2 ]
    run raw POST "/api/v1/namespaces/dec-ydup/configmaps?fieldValidation=Strict" application/yaml "$CTMP/dup.yaml"
    [ "${lines[0]}" = 400 ]
    [[ "$output" == *'"message":"ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 5: key \"name\" already set in map\n  line 8: key \"k\" already set in map, unknown field \"bogus\""'* ]]
    run raw POST "/api/v1/namespaces/dec-ydup/configmaps?fieldValidation=Ignore" application/yaml "$CTMP/dup.yaml"
    [ "${lines[0]}" = 409 ]
    [[ "$output" != *Warning* ]]
}

@test "pods/binding: the body is a Binding, checked as BindingREST.Create checks it" {
    # The body is decoded as any create's (create.go; a kind of another
    # type fails the conversion to core.Binding, converter.go), then
    # pkg/registry/core/pod/storage/storage.go BindingREST.Create: the name
    # must be the URL's, and ValidatePodBinding's errors come back as an
    # aggregate, not an API status: 500 with no reason (ErrorToAPIStatus).
    k create namespace bind-check >/dev/null
    k run p -n bind-check --image=registry.k8s.io/pause:3.10 >/dev/null
    bind() {
        printf '%s' "$1" >"$CTMP/binding.json"
        k create --raw /api/v1/namespaces/bind-check/pods/p/binding -f "$CTMP/binding.json"
    }
    run bind '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"target":{"name":"n"}}'
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (BadRequest): Pod in version "v1" cannot be handled as a Binding: converting (v1.Pod) to (core.Binding): unknown conversion' ]
    run bind '{"apiVersion":"apps/v1","kind":"Binding","metadata":{"name":"p"},"target":{"name":"n"}}'
    [ "$output" = 'Error from server (BadRequest): Binding in version "v1" cannot be handled as a Binding: no kind "Binding" is registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"' ]
    run bind '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":"n"}'
    [ "$output" = 'Error from server (BadRequest): Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal string into Go struct field Binding.target of type v1.ObjectReference' ]
    run bind '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"q"},"target":{"name":"n"}}'
    [ "$output" = 'Error from server (BadRequest): name in URL does not match name in Binding object' ]
    run bind '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{}}'
    [ "$output" = 'Error from server: target.name: Required value' ]
    run bind '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Pod"}}'
    [ "$output" = 'Error from server: [target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]' ]
    printf '{"kind":"Binding","apiVersion":"v1","metadata":{"name":"p"},"target":{}}' >"$CTMP/binding.json"
    run raw POST /api/v1/namespaces/bind-check/pods/p/binding application/json "$CTMP/binding.json"
    [ "${lines[0]}" = 500 ]
    [[ "$output" != *'"reason"'* ]]
    # nothing of that bound the pod; a right one does
    run k get pod p -n bind-check -o jsonpath='{.spec.nodeName}'
    [ -z "$output" ]
    run bind '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n"}}'
    [ "$status" -eq 0 ]
    run k get pod p -n bind-check -o jsonpath='{.spec.nodeName}'
    [ "$output" = n ]
}

@test "dryRun: from the query and from DeleteOptions, nothing is written" {
    k create namespace dry >/dev/null
    run k create configmap c -n dry --from-literal=a=1 --dry-run=server
    [ "$output" = "configmap/c created (server dry run)" ]
    run k get cm -n dry -o name
    [ -z "$output" ]
    k create configmap c -n dry --from-literal=a=1 >/dev/null
    run k delete cm c -n dry --dry-run=server
    [ "$output" = 'configmap "c" deleted (server dry run)' ]
    run k get cm c -n dry -o name
    [ "$output" = "configmap/c" ]
    echo '{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}' >"$CTMP/opts.json"
    run raw DELETE /api/v1/namespaces/dry/configmaps/c application/json "$CTMP/opts.json"
    [ "${lines[0]}" = 200 ]
    run k get cm c -n dry -o name
    [ "$output" = "configmap/c" ]
}

@test "admission in kube-apiserver's order: a missing namespace before a missing RuntimeClass" {
    run k apply -f - <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ghost}
spec:
  runtimeClassName: nope
  containers: [{name: c, image: busybox}]
EOF2
    [ "$output" = 'Error from server (NotFound): error when creating "STDIN": namespaces "ghost" not found' ]
}

@test "events.k8s.io/v1 is a second view of the core events, both ways" {
    k create namespace ev-view >/dev/null
    cat >"$CTMP/core-ev.yaml" <<'EOF2'
apiVersion: v1
kind: Event
metadata: {name: core1, namespace: ev-view}
involvedObject: {kind: Pod, name: p1, namespace: ev-view}
reason: Testing
message: written as core
type: Normal
source: {component: bats}
firstTimestamp: "2025-01-01T00:00:00Z"
lastTimestamp: "2025-01-01T00:00:00Z"
count: 2
EOF2
    cat >"$CTMP/v1-ev.yaml" <<'EOF2'
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: new1, namespace: ev-view}
eventTime: "2025-01-01T00:00:09.000000Z"
reportingController: bats
reportingInstance: bats-1
action: Testing
reason: Later
regarding: {kind: Pod, name: p1, namespace: ev-view}
note: written as events.k8s.io
type: Warning
EOF2
    k create -f "$CTMP/core-ev.yaml" >/dev/null
    k create -f "$CTMP/v1-ev.yaml" >/dev/null
    run k get events.events.k8s.io core1 -n ev-view -o jsonpath='{.note}|{.regarding.name}|{.deprecatedCount}|{.deprecatedSource.component}'
    [ "$output" = "written as core|p1|2|bats" ]
    run k get events new1 -n ev-view -o jsonpath='{.message}|{.involvedObject.name}|{.reportingComponent}|{.eventTime}'
    [ "$output" = "written as events.k8s.io|p1|bats|2025-01-01T00:00:09.000000Z" ]
    run k get events.events.k8s.io -n ev-view -o name
    [ "${#lines[@]}" -eq 2 ]
    k delete events.events.k8s.io core1 -n ev-view >/dev/null
    run k get events -n ev-view -o name
    [ "$output" = "event/new1" ]
}

@test "events.k8s.io/v1: field selectors in its own names, converted to core's" {
    # pkg/apis/events/v1/conversion.go AddFieldLabelConversionsForEvent:
    # regarding.* is involvedObject.*, reportingController is
    # reportingComponent; "source" falls back to the reporting controller
    # (pkg/registry/core/event/strategy.go); core's names are refused.
    k create namespace ev-sel >/dev/null
    cat >"$CTMP/sel-ev.yaml" <<'EOF2'
apiVersion: v1
kind: Event
metadata: {name: dsfail, namespace: ev-sel}
involvedObject: {kind: DaemonSet, name: toolkit, namespace: ev-sel, apiVersion: apps/v1, fieldPath: "spec.template"}
reason: FailedCreate
message: no runtime handler
type: Warning
reportingComponent: daemonset-controller
---
apiVersion: v1
kind: Event
metadata: {name: sched, namespace: ev-sel}
involvedObject: {kind: Pod, name: p1, namespace: ev-sel}
reason: Scheduled
message: bound
type: Normal
source: {component: default-scheduler}
EOF2
    k create -f "$CTMP/sel-ev.yaml" >/dev/null
    sel() { k get events.v1.events.k8s.io -n ev-sel --field-selector "$1" -o name; }
    run sel reason=FailedCreate
    [ "$output" = "event.events.k8s.io/dsfail" ]
    run sel regarding.kind=DaemonSet,regarding.name=toolkit
    [ "$output" = "event.events.k8s.io/dsfail" ]
    run sel regarding.apiVersion=apps/v1,regarding.fieldPath=spec.template
    [ "$output" = "event.events.k8s.io/dsfail" ]
    run sel reportingController=daemonset-controller
    [ "$output" = "event.events.k8s.io/dsfail" ]
    run sel source=daemonset-controller
    [ "$output" = "event.events.k8s.io/dsfail" ]
    run sel source=default-scheduler,type=Normal
    [ "$output" = "event.events.k8s.io/sched" ]
    run sel type!=Normal
    [ "$output" = "event.events.k8s.io/dsfail" ]
    run sel involvedObject.name=toolkit
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (BadRequest): Unable to find "events.k8s.io/v1, Resource=events" that match label selector "", field selector "involvedObject.name=toolkit": field label not supported: involvedObject.name' ]
    # the core view keeps its names
    run k get events -n ev-sel --field-selector involvedObject.name=toolkit -o name
    [ "$output" = "event/dsfail" ]
    run k get events -n ev-sel --field-selector regarding.name=toolkit -o name
    [ "$status" -eq 1 ]
    [[ "$output" == *'field label not supported: regarding.name' ]]
}

@test "a Table with includeObject=Object carries the objects: get --sort-by works" {
    k create namespace sort-lab >/dev/null
    for e in late:2025-01-01T00:00:09Z early:2025-01-01T00:00:01Z; do
        k create -f - >/dev/null <<EOF2
apiVersion: v1
kind: Event
metadata: {name: ${e%%:*}, namespace: sort-lab}
involvedObject: {kind: Pod, name: ${e%%:*}, namespace: sort-lab}
reason: R
message: m
type: Normal
lastTimestamp: "${e#*:}"
EOF2
    done
    run k get events -n sort-lab --sort-by=.lastTimestamp -o custom-columns=NAME:.metadata.name --no-headers
    [ "$output" = "$(printf 'early\nlate')" ]
    run k get events -n sort-lab --sort-by=.lastTimestamp
    [ "${#lines[@]}" -eq 3 ]
    [[ "${lines[1]}" == *"pod/early"* ]]
}

# The rows of a Table watch (what `kubectl get -w` asks for): "EVENT
# NAME KIND-OF-OBJECT" a row, or the 400's status and message.
watch_table_rows() {
    python3 - "$KC" "$DATA/token" "$1" <<'PY'
import json, ssl, sys, urllib.request
cfg = json.load(open(sys.argv[1]))
req = urllib.request.Request(cfg["clusters"][0]["cluster"]["server"] + sys.argv[3])
req.add_header("Authorization", "Bearer " + open(sys.argv[2]).read().strip())
req.add_header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    r = urllib.request.urlopen(req, context=ctx, timeout=10)
except urllib.error.HTTPError as e:
    print(e.status, json.loads(e.read())["message"])
    sys.exit(0)
for line in r:
    ev = json.loads(line)
    if "rows" in ev:  # a list
        ev = {"type": "LISTED", "object": ev}
    for row in ev["object"]["rows"]:
        o = row["object"] if "object" in row else "absent"
        print(ev["type"], row["cells"][0], o["kind"] if isinstance(o, dict) else json.dumps(o))
PY
}

@test "a Table watch gives each row what includeObject asks, as a list does" {
    # handlers/watch.go sends each event through the list's transform
    # (response.go asTable): Object, Metadata (the default) or None, whose
    # empty RawExtension is written null; another value is a 400.
    k create namespace watch-inc >/dev/null
    k run p1 -n watch-inc --image=registry.k8s.io/pause:3.10 >/dev/null
    # kubectl get -w --sort-by asks the watch for the objects
    run timeout 2 kubectl --kubeconfig "$KC" --cache-dir "$CTMP/cache" get pods -n watch-inc -w \
        --sort-by=.metadata.name -v=6
    [[ "$output" == *'/pods?includeObject=Object&resourceVersion='*'&watch=true'* ]]
    w='/api/v1/namespaces/watch-inc/pods?watch=true&resourceVersion=0&timeoutSeconds=1'
    run watch_table_rows "$w&includeObject=Object"
    [ "$output" = "ADDED p1 Pod" ]
    run watch_table_rows "$w"
    [ "$output" = "ADDED p1 PartialObjectMetadata" ]
    run watch_table_rows "$w&includeObject=Metadata"
    [ "$output" = "ADDED p1 PartialObjectMetadata" ]
    run watch_table_rows "$w&includeObject=None"
    [ "$output" = "ADDED p1 null" ]
    run watch_table_rows "$w&includeObject=Bogus"
    [ "$output" = '400 unrecognized includeObject value: "Bogus"' ]
    # a Table list answers the same; a request for no Table ignores it
    run watch_table_rows '/api/v1/namespaces/watch-inc/pods?includeObject=None'
    [ "$output" = "LISTED p1 null" ]
    run watch_table_rows '/api/v1/namespaces/watch-inc/pods?includeObject=Bogus'
    [ "$output" = '400 unrecognized includeObject value: "Bogus"' ]
    run raw GET '/api/v1/namespaces/watch-inc/pods?includeObject=Bogus' - -
    [ "${lines[0]}" = 200 ]
}

@test "deletecollection deletes what the selector picks and answers the list" {
    k create namespace dc-lab >/dev/null
    for n in a b c; do k create configmap "$n" -n dc-lab >/dev/null; done
    k label cm a b -n dc-lab sweep=yes >/dev/null
    run raw DELETE '/api/v1/namespaces/dc-lab/configmaps?labelSelector=sweep%3Dyes' - -
    [ "${lines[0]}" = 200 ]
    [ "$(echo "${lines[1]}" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kind"], sorted(i["metadata"]["name"] for i in d["items"]))')" = "ConfigMapList ['a', 'b']" ]
    run k get cm -n dc-lab -o name
    [ "$output" = "configmap/c" ]
    # namespaces do not list deletecollection in discovery, and do not have it
    run raw DELETE /api/v1/namespaces - -
    [ "${lines[0]}" = 405 ]
}

@test "kubectl create -f and apply -f of a List" {
    k create namespace list-lab >/dev/null
    printf '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l1","namespace":"list-lab"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l2","namespace":"list-lab"}}]}' >"$CTMP/list.json"
    run k create -f "$CTMP/list.json"
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf 'configmap/l1 created\nconfigmap/l2 created')" ]
    # an item's typo is still the server's to refuse, item by item
    printf '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l3","namespace":"list-lab"},"bogus":1}]}' >"$CTMP/list-typo.json"
    run k apply -f "$CTMP/list-typo.json"
    [ "$status" -eq 1 ]
    [[ "$output" == *'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"'* ]]
    k get cm l1 l2 -n list-lab -o yaml >"$CTMP/list.yaml"
    run k apply -f "$CTMP/list.yaml"
    [ "$status" -eq 0 ]
    [[ "$output" == *"configmap/l1 configured"* ]]
    [[ "$output" == *"configmap/l2 configured"* ]]
}

@test "kubectl auth can-i: yes for the admin, and its rules" {
    run k auth can-i create pods
    [ "$output" = yes ]
    run k auth can-i delete nodes --all-namespaces
    [ "$output" = yes ]
    run k auth can-i --list
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Resources"*"Non-Resource URLs"*"Resource Names"*"Verbs"* ]]
    [[ "$output" == *"*.*"*"[*]"* ]]
}

@test "logs, exec, attach and port-forward of a pod without a node answer as kube-apiserver" {
    k create namespace conn-lab >/dev/null
    k apply -f - >/dev/null <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: conn-lab}
spec:
  containers: [{name: c, image: busybox}, {name: d, image: busybox}]
EOF2
    run --separate-stderr k logs p1 -n conn-lab -c c
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    run k logs p1 -n conn-lab -c nope
    [ "$output" = "error: container nope is not valid for pod p1" ] ||
        [ "$output" = "Error from server (BadRequest): container nope is not valid for pod p1" ]
    run k exec p1 -n conn-lab -c c -- true
    [ "$status" -eq 1 ]
    [ "$output" = "Error from server (BadRequest): pod p1 does not have a host assigned" ]
    run raw GET /api/v1/namespaces/conn-lab/pods/p1/log - -
    [ "${lines[0]}" = 400 ]
    [[ "$output" == *'"message":"a container name must be specified for pod p1, choose one of: [c d]"'* ]]
    run raw POST '/api/v1/namespaces/conn-lab/pods/p1/attach?container=d' - -
    [ "${lines[0]}" = 400 ]
    [[ "$output" == *'"message":"pod p1 does not have a host assigned"'* ]]
    run raw POST /api/v1/namespaces/conn-lab/pods/p1/portforward - -
    [ "${lines[0]}" = 400 ]
    run raw GET /api/v1/namespaces/conn-lab/pods/nope/log - -
    [ "${lines[0]}" = 404 ]
    [[ "$output" == *'"message":"pods \"nope\" not found"'* ]]
}

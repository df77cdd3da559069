#!/usr/bin/env bats
# What kube-apiserver's ServiceAccount admission and kube-controller-manager's
# serviceaccount controller and root-CA publisher do to a namespace and its
# pods, and what pods/log and pods/exec answer for a pod on a fake (kwok)
# node, judged by the real kubectl 1.32 against the embedded cluster with
# its controllers. One server for the file; each test in its own namespace.

bats_require_minimum_version 1.5.0

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    export ATMP="$BATS_FILE_TMPDIR"
    export HOME=$ATMP/home
    export DATA=$ATMP/data
    export KC=$DATA/kubeconfig
    mkdir -p "$HOME"
    "$GPUOP" cluster serve --data "$DATA" 2>>"$ATMP/server.log" &
    echo $! >"$ATMP/pid"
    for _ in $(seq 1 100); do
        [ -f "$KC" ] && k get --raw /readyz >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    cat "$ATMP/server.log" >&2
    return 1
}

teardown_file() {
    local pid
    pid=$(cat "$ATMP/pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

k() {
    kubectl --kubeconfig "$KC" --cache-dir "$ATMP/cache" --request-timeout=10s "$@"
}

# Retries a command for up to 5 s (controllers act within a pass).
eventually() {
    for _ in $(seq 1 50); do
        "$@" && return 0
        sleep 0.1
    done
    "$@"
}

@test "every namespace gets the default ServiceAccount and kube-root-ca.crt with the cluster's CA" {
    k create namespace sa-lab >/dev/null
    eventually k get sa default -n sa-lab -o name
    eventually k get cm kube-root-ca.crt -n sa-lab -o name
    # the CA kubectl trusts (the kubeconfig's) is the one published
    want=$(python3 -c 'import json,sys,base64; print(base64.b64decode(json.load(open(sys.argv[1]))["clusters"][0]["cluster"]["certificate-authority-data"]).decode().strip())' "$KC")
    run k get cm kube-root-ca.crt -n sa-lab -o jsonpath='{.data.ca\.crt}'
    [ "$(echo "$output" | tr -d '\r')" = "$want" ]
    # changed or deleted, it is put back
    k patch cm kube-root-ca.crt -n sa-lab --type=merge -p '{"data":{"ca.crt":"tampered"}}' >/dev/null
    eventually bash -c "kubectl --kubeconfig '$KC' get cm kube-root-ca.crt -n sa-lab -o jsonpath='{.data.ca\.crt}' | grep -q BEGIN"
    k delete cm kube-root-ca.crt -n sa-lab >/dev/null
    eventually k get cm kube-root-ca.crt -n sa-lab -o name
    # the system namespaces have them too
    run k get sa default -n kube-system -o name
    [ "$output" = "serviceaccount/default" ]
}

@test "ServiceAccount admission: the projected kube-api-access volume, mounted in every container" {
    k create namespace sa-pod >/dev/null
    eventually k get sa default -n sa-pod -o name
    k apply -f - >/dev/null <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: sa-pod}
spec:
  initContainers: [{name: init, image: busybox}]
  containers: [{name: a, image: busybox}, {name: b, image: busybox}]
EOF2
    run k get pod p1 -n sa-pod -o jsonpath='{.spec.serviceAccountName} {.spec.volumes[*].name}'
    [[ "$output" =~ ^default\ kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$ ]]
    vol=${output#default }
    run k get pod p1 -n sa-pod -o jsonpath='{range .spec.initContainers[*]}{.volumeMounts[0].name}:{.volumeMounts[0].mountPath}:{.volumeMounts[0].readOnly} {end}{range .spec.containers[*]}{.volumeMounts[0].name}:{.volumeMounts[0].mountPath}:{.volumeMounts[0].readOnly} {end}'
    m="$vol:/var/run/secrets/kubernetes.io/serviceaccount:true"
    [ "$output" = "$m $m $m " ]
    run k get pod p1 -n sa-pod -o jsonpath='{.spec.volumes[0].projected.defaultMode} {.spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds} {.spec.volumes[0].projected.sources[1].configMap.name} {.spec.volumes[0].projected.sources[2].downwardAPI.items[0].fieldRef.fieldPath}'
    [ "$output" = "420 3607 kube-root-ca.crt metadata.namespace" ]
    # the pod can turn it off
    k apply -f - >/dev/null <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: p2, namespace: sa-pod}
spec:
  automountServiceAccountToken: false
  containers: [{name: a, image: busybox}]
EOF2
    run k get pod p2 -n sa-pod -o jsonpath='{.spec.volumes}'
    [ -z "$output" ]
}

@test "ServiceAccount admission: a pod naming a missing account is forbidden" {
    k create namespace sa-missing >/dev/null
    run k apply -f - <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: sa-missing}
spec:
  serviceAccountName: robot
  containers: [{name: a, image: busybox}]
EOF2
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (Forbidden): error when creating "STDIN": pods "p" is forbidden: error looking up service account sa-missing/robot: serviceaccount "robot" not found' ]
}

@test "logs and exec of a pod on a fake node: kwok's answer for a pod it has no configuration for" {
    k create namespace conn-fake >/dev/null
    k apply -f - >/dev/null <<'EOF2'
apiVersion: v1
kind: Node
metadata:
  name: fake-1
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: fake-1, type: kwok}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
EOF2
    eventually k get sa default -n conn-fake -o name
    k apply -f - >/dev/null <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: conn-fake}
spec:
  containers: [{name: c, image: busybox}]
EOF2
    k wait --for=condition=Ready pod/p1 -n conn-fake --timeout=20s >/dev/null
    run k logs p1 -n conn-fake
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (BadRequest): no logs found for container "c" in pod "conn-fake/p1"' ]
    run k exec p1 -n conn-fake -- true
    [ "$status" -eq 1 ]
    [ "$output" = 'Error from server (BadRequest): no exec found for container "c" in pod "conn-fake/p1"' ]
    k delete node fake-1 >/dev/null
}

#!/usr/bin/env bash
# The embedded control plane's threads under ThreadSanitizer.
#
#   tests/tsan/controllers.sh SERVER    (SERVER: a gpuop-apiserver built with GPUOP_TSAN=ON)
#
# The controllers decide on one thread and send their writes on two others
# (write_queue.c), while the HTTP threads serve clients. The real kubectl
# drives every controller at once on 50 fake nodes: 300 pods created in one
# apply and made Running, a DaemonSet rolled out and then updated (pods
# deleted and created in batches), and the namespace deleted (the garbage
# collector and the namespace controller). The test fails when a step does
# not complete or ThreadSanitizer reports anything.
set -euo pipefail

server=${1:?usage: tests/tsan/controllers.sh SERVER}
[ -x "$server" ] || { echo "tsan: $server not found" >&2; exit 2; }
command -v kubectl >/dev/null || { echo "tsan: kubectl not found" >&2; exit 2; }

work=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "tsan: $*" >&2
    exit 1
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TSAN_OPTIONS="halt_on_error=0 exitcode=0 log_path=$work/tsan second_deadlock_stack=1" \
    "$server" --data "$work/data" --port "$port" --nodes 50 >"$work/server.log" 2>&1 &
pid=$!
k() { kubectl --kubeconfig "$work/data/kubeconfig" "$@"; }
for _ in $(seq 1 100); do
    [ -f "$work/data/kubeconfig" ] && k get --raw /readyz >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || fail "the server exited: $(tail -5 "$work/server.log")"
    sleep 0.2
done
k get --raw /readyz >/dev/null || fail "the server did not get ready"

k create namespace smoke >/dev/null
for i in $(seq 0 299); do
    printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%d, namespace: smoke}\n' "$i"
    printf 'spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10, '
    printf 'resources: {requests: {cpu: 10m, memory: 16Mi}}}]}\n'
done >"$work/pods.yaml"
k apply -f "$work/pods.yaml" >/dev/null
k wait --for=jsonpath='{.status.phase}'=Running pods --all -n smoke --timeout=180s >/dev/null ||
    fail "the pods did not all get Running"

cat >"$work/ds.yaml" <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: smoke}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 10%}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "registry.k8s.io/pause:3.9"}]
EOF
k apply -f "$work/ds.yaml" >/dev/null
k rollout status ds/agent -n smoke --timeout=180s >/dev/null || fail "the DaemonSet did not roll out"
k set image ds/agent -n smoke agent=registry.k8s.io/pause:3.10 >/dev/null
k rollout status ds/agent -n smoke --timeout=180s >/dev/null || fail "the update did not complete"

k delete namespace smoke --timeout=180s >/dev/null || fail "the namespace was not deleted"

kill "$pid"
wait "$pid" 2>/dev/null || true
pid=

# The node agents (--node-agents): their host thread serves the nodes'
# sockets and restarts daemons while the controllers' thread asks them and
# the HTTP threads act on them. The toolkit signals containerd (it exits and
# comes back 5 s later), the device plugin then registers, a restart and a
# reboot go through the API server's /gpuop/v1/agents routes.
TSAN_OPTIONS="halt_on_error=0 exitcode=0 log_path=$work/tsan second_deadlock_stack=1" \
    "$server" --data "$work/ag" --port 0 --nodes 3 --node-agents >"$work/server.log" 2>&1 &
pid=$!
k() { kubectl --kubeconfig "$work/ag/kubeconfig" "$@"; }
for _ in $(seq 1 100); do
    [ -f "$work/ag/kubeconfig" ] && k get --raw /readyz >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || fail "the agents' server exited: $(tail -5 "$work/server.log")"
    sleep 0.2
done
k apply -f - >/dev/null <<'EOF2'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: nvidia}
handler: nvidia
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: toolkit, namespace: default}
spec:
  selector: {matchLabels: {app: toolkit}}
  template:
    metadata: {labels: {app: toolkit}}
    spec:
      containers: [{name: toolkit, image: "nvcr.io/nvidia/k8s/container-toolkit:v1.18.1"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: plugin, namespace: default}
spec:
  selector: {matchLabels: {app: plugin}}
  template:
    metadata: {labels: {app: plugin}}
    spec:
      runtimeClassName: nvidia
      containers: [{name: plugin, image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]
EOF2
k wait --for=jsonpath='{.status.capacity.nvidia\.com/gpu}'=4 nodes --all --timeout=120s >/dev/null ||
    fail "the simulated device plugins did not register"
echo '{}' >"$work/empty.json"
k create --raw /gpuop/v1/agents/kwok-node-0/restart-containerd -f "$work/empty.json" >/dev/null ||
    fail "restart-containerd failed"
echo '{"kernelUpdate": true}' >"$work/reboot.json"
k create --raw /gpuop/v1/agents/kwok-node-1/reboot -f "$work/reboot.json" >/dev/null ||
    fail "reboot failed"
k wait --for=jsonpath='{.status.allocatable.nvidia\.com/gpu}'=0 node/kwok-node-1 --timeout=60s \
    >/dev/null || fail "the rebooted node kept its GPUs"
k delete ds toolkit plugin --timeout=60s >/dev/null || fail "the DaemonSets were not deleted"
k get --raw /gpuop/v1/agents/kwok-node-2 >/dev/null || fail "the agent's status failed"

kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
if compgen -G "$work/tsan.*" >/dev/null && grep -q "ThreadSanitizer" "$work"/tsan.*; then
    grep -h -A30 "WARNING: ThreadSanitizer" "$work"/tsan.* | head -120 >&2
    fail "ThreadSanitizer reported $(grep -h -c 'WARNING: ThreadSanitizer' "$work"/tsan.* | paste -sd+ | bc) problem(s)"
fi
echo "tsan: controllers clean (300 pods Running, a DaemonSet on 50 nodes rolled out and updated, the namespace deleted; node agents on 3 nodes: toolkit, device plugin, restart, reboot)"

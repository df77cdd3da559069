#!/usr/bin/env bats
# gpuop containerd check --node: a Node's status.runtimeHandlers as the
# witness, read from the embedded API server with the real kubectl writing
# the nodes (tests/data/containerd: a containerd 2.1.5 node that reports its
# handlers, a 1.6.20 node that cannot). Never touches the user's home or
# kubeconfig.

bats_require_minimum_version 1.5.0

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    : "${GPUOP_SRC:?set GPUOP_SRC to the source tree}"
    export NODE_TMP
    NODE_TMP=$(mktemp -d)
    export HOME=$NODE_TMP/home KC=$NODE_TMP/data/kubeconfig
    mkdir -p "$HOME"
    "$GPUOP" cluster serve --data "$NODE_TMP/data" 2>"$NODE_TMP/server.log" 3>&- &
    echo $! >"$NODE_TMP/server.pid"
    for _ in $(seq 1 100); do
        [ -f "$KC" ] && k get --raw /healthz >/dev/null 2>&1 && break
        sleep 0.1
    done
    local fixtures=$GPUOP_SRC/tests/data/containerd
    for n in node-containerd-1.6.20 node-containerd-2.1.5; do
        k create -f "$fixtures/$n.json" >/dev/null
        # The kubelet writes status through the status subresource.
        k patch node "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["name"])' "$fixtures/$n.json")" \
            --subresource=status --type=merge \
            -p "$(python3 -c 'import json,sys; print(json.dumps({"status": json.load(open(sys.argv[1]))["status"]}))' "$fixtures/$n.json")" >/dev/null
    done
}

teardown_file() {
    kill "$(cat "$NODE_TMP/server.pid")" 2>/dev/null || true
    rm -rf "$NODE_TMP"
}

k() {
    kubectl --kubeconfig "$KC" --cache-dir "$NODE_TMP/cache" --request-timeout=5s "$@"
}

check_node() {
    run --separate-stderr "$GPUOP" containerd check --kubeconfig "$KC" "$@"
}

@test "the nodes carry what the kubelet wrote (kubectl reads it back)" {
    [ "$(k get node gpu-node-2 -o jsonpath='{.status.runtimeHandlers[*].name}')" = " nvidia runc" ]
    [ "$(k get node gpu-node-1 -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')" = "containerd://1.6.20" ]
}

@test "--source node on containerd 2.1.5: loaded (exit 0), not loaded (exit 1)" {
    check_node nvidia --source node --node gpu-node-2
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "nvidia: loaded (node gpu-node-2, containerd://2.1.5: status.runtimeHandlers nvidia, runc)" ]
    [ "${lines[1]}" = "source: node (what the kubelet read from containerd's CRI Status)" ]
    [ "${#lines[@]}" -eq 2 ]
    # Issue 16 case 5's handler: the node does not list it.
    check_node nvidia-cdi --source node --node gpu-node-2
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "nvidia-cdi: NOT loaded (node gpu-node-2, containerd://2.1.5: status.runtimeHandlers nvidia, runc)" ]
}

@test "--source node on containerd 1.6.20: no runtimeHandlers proves nothing (exit 2)" {
    check_node nvidia --source node --node gpu-node-1
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell (the node's status proves nothing)" ]
    [ "${lines[2]}" = "node gpu-node-1 (containerd://1.6.20) lists no runtimeHandlers: containerd 1.x never reports them, so their absence proves nothing" ]
    [ "${#lines[@]}" -eq 3 ]
    check_node nvidia --source node --node gpu-node-1 -o json
    [ "$status" -eq 2 ]
    run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["source"] == "auto" and d["verdict"] == "cannot-tell", d
assert d["node"] == {"name": "gpu-node-1", "container_runtime": "containerd://1.6.20",
                     "reports_handlers": False, "runtime_handlers": None}, d["node"]
assert d["error"]["code"] == "node-reports-no-handlers" and d["error"]["where"] == "gpu-node-1"
print("ok")' "$output"
    [ "$output" = ok ]
}

@test "auto with --node: no daemon here, so the node answers; a missing node cannot tell" {
    check_node nvidia --node gpu-node-2 --address "$NODE_TMP/none.sock"
    [ "$status" -eq 0 ]
    [ "${lines[1]}" = "source: node (what the kubelet read from containerd's CRI Status)" ]
    [ "${lines[2]}" = "daemon not asked: cannot connect to $NODE_TMP/none.sock: No such file or directory" ]
    check_node nvidia --source node --node no-such-node -o json
    [ "$status" -eq 2 ]
    [[ "$stderr" == *'nodes "no-such-node" not found'* ]]
    [[ "$output" == *'"code": "node-unreadable"'* ]]
}

#!/usr/bin/env bats
# gpuop cluster serve: the embedded API server as the real kubectl sees it.
# Never touches the user's home or kubeconfig: HOME and kubectl's cache
# point into a temporary directory.

bats_require_minimum_version 1.5.0

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    tmp=$(mktemp -d)
    export HOME=$tmp/home
    data=$tmp/data
    kc=$data/kubeconfig
    server_pid=
}

teardown() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$tmp"
}

k() {
    kubectl --kubeconfig "$kc" --cache-dir "$tmp/cache" --request-timeout=5s "$@"
}

start_server() {
    "$GPUOP" cluster serve --data "$data" "$@" 2>"$tmp/server.log" &
    server_pid=$!
    for _ in $(seq 1 50); do
        [ -f "$kc" ] && k get --raw /healthz >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    cat "$tmp/server.log"
    return 1
}

# A request with the given Authorization header value (or none), by Python:
# prints the status code and the body.
raw_request() {
    python3 - "$kc" "$1" <<'PY'
import json, ssl, sys, urllib.request
cfg = json.load(open(sys.argv[1]))
url = cfg["clusters"][0]["cluster"]["server"] + "/api/v1/namespaces"
req = urllib.request.Request(url)
if sys.argv[2]:
    req.add_header("Authorization", sys.argv[2])
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    r = urllib.request.urlopen(req, context=ctx, timeout=5)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
PY
}

@test "kubectl version shows the server as Kubernetes 1.32" {
    start_server
    run k version
    [ "$status" -eq 0 ]
    [[ "$output" == *"Server Version: v1.32.0-gpuop"* ]]
}

@test "health endpoints answer ok; unknown paths are kubectl's NotFound" {
    start_server
    for p in /healthz /readyz /livez; do
        run k get --raw "$p"
        [ "$status" -eq 0 ]
        [ "$output" = "ok" ]
    done
    run k get --raw /no/such/path
    [ "$status" -eq 1 ]
    [ "$output" = "Error from server (NotFound): the server could not find the requested resource" ]
}

@test "every request needs the kubeconfig's bearer token: 401 Status otherwise" {
    start_server
    run raw_request ""
    [[ "$output" == "401 "* ]]
    [[ "$output" == *'"kind":"Status"'* ]]
    [[ "$output" == *'"reason":"Unauthorized"'* ]]
    run raw_request "Bearer not-the-token"
    [[ "$output" == "401 "* ]]
    run raw_request "Bearer $(cat "$data/token")"
    [[ "$output" == "200 "* ]]
    [[ "$output" == *'"kind":"NamespaceList"'* ]]
}

@test "secrets are private: data dir 0700, kubeconfig, token and key 0600; loopback by default" {
    start_server
    [ "$(stat -c %a "$data")" = 700 ]
    for f in kubeconfig token tls.key; do
        [ "$(stat -c %a "$data/$f")" = 600 ]
    done
    grep -q '"server": "https://127.0.0.1:' "$kc"
}

@test "a restart keeps the token and certificate: an old kubeconfig still works" {
    start_server
    cp "$kc" "$tmp/old-kubeconfig"
    kill "$server_pid"
    wait "$server_pid"
    server_pid=
    start_server
    old_port=$(grep -o '127.0.0.1:[0-9]*' "$tmp/old-kubeconfig")
    new_port=$(grep -o '127.0.0.1:[0-9]*' "$kc")
    sed "s#$old_port#$new_port#" "$tmp/old-kubeconfig" >"$tmp/renamed"
    run kubectl --kubeconfig "$tmp/renamed" --cache-dir "$tmp/cache" get --raw /healthz
    [ "$status" -eq 0 ]
}

@test "SIGTERM stops the server cleanly (exit 0); a taken port is exit 2" {
    start_server
    port=$(grep -o '127.0.0.1:[0-9]*' "$kc" | cut -d: -f2)
    run "$GPUOP" cluster serve --data "$tmp/other" --port "$port"
    [ "$status" -eq 2 ]
    [[ "$output" == *"cannot listen"* ]]
    kill -TERM "$server_pid"
    wait "$server_pid"
    status=$?
    server_pid=
    [ "$status" -eq 0 ]
}

@test "kubectl discovers the lab's resources: api-resources and api-versions" {
    start_server
    run k api-versions
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf 'apps/v1\nauthorization.k8s.io/v1\ncoordination.k8s.io/v1\nevents.k8s.io/v1\nnode.k8s.io/v1\nv1')" ]
    run k api-resources --no-headers
    [ "$status" -eq 0 ]
    row() { printf '%s\n' "$output" | awk -v n="$1" -v g="$2" '$1 == n && $0 ~ g'; }
    [ "$(row daemonsets apps/v1 | awk '{print $2, $4, $5}')" = "ds true DaemonSet" ]
    [ "$(row runtimeclasses node.k8s.io | awk '{print $3, $4}')" = "false RuntimeClass" ]
    [ "$(row pods ' v1 ' | awk '{print $2, $4}')" = "po true" ]
    [ "$(row namespaces ' v1 ' | awk '{print $2, $4}')" = "ns false" ]
}

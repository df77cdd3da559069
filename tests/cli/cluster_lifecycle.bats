#!/usr/bin/env bats
# gpuop cluster up | down | status, judged by the real kubectl.
# HOME, KUBECONFIG and kubectl's cache all point into a temporary directory:
# nothing here reads or writes the user's own home or kubeconfig. Every
# server a test started is stopped by the pid in its data directory.

bats_require_minimum_version 1.5.0

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    tmp=$(mktemp -d)
    export HOME=$tmp/home
    mkdir -p "$HOME/.kube"
    export KUBECONFIG=$HOME/.kube/config
    data=$HOME/.local/share/gpuop/cluster
}

teardown() {
    local f
    while IFS= read -r f; do
        kill -KILL "$(cat "$f")" 2>/dev/null || true
    done < <(find "$tmp" -name apiserver.pid 2>/dev/null)
    rm -rf "$tmp"
}

k() {
    kubectl --cache-dir "$tmp/cache" --request-timeout=5s "$@"
}

# A kubeconfig as `kubectl config set-*` writes it, with two other clusters,
# users and contexts, preferences and an extension.
write_user_kubeconfig() {
    cat >"$KUBECONFIG" <<'EOF'
apiVersion: v1
clusters:
- cluster:
    server: https://10.0.0.1:6443
    extensions:
    - name: gpuop-test
      extension:
        note: "12345"
  name: prod
- cluster:
    insecure-skip-tls-verify: true
    server: https://kind.local:6443
  name: kind-lab
contexts:
- context:
    cluster: prod
    namespace: gpu-ops
    user: admin
  name: prod-admin
- context:
    cluster: kind-lab
    user: kind-lab
  name: kind-lab
current-context: prod-admin
kind: Config
preferences:
  colors: true
users:
- name: admin
  user:
    token: secret-admin-token
- name: kind-lab
  user:
    username: kind
    password: "0123"
EOF
}

# kubectl's own reading of a kubeconfig, secrets included.
view() {
    kubectl config view --raw -o json --kubeconfig "$1"
}

# The view without gpuop's entries and current-context.
others() {
    view "$1" | python3 -c '
import json, sys
c = json.load(sys.stdin)
for k in ("clusters", "users", "contexts"):
    c[k] = [e for e in (c.get(k) or []) if e["name"] != "gpuop"]
c.pop("current-context", None)
print(json.dumps(c, sort_keys=True))'
}

pid_of_server() {
    cat "$data/apiserver.pid"
}

port_of_server() {
    k config view --minify -o jsonpath='{.clusters[0].cluster.server}' | sed 's/.*://'
}

@test "up: kubectl reaches the server through the merged context" {
    write_user_kubeconfig
    run "$GPUOP" cluster up
    [ "$status" -eq 0 ]
    [[ "$output" == "gpuop cluster is up on https://127.0.0.1:"*'(kubectl context "gpuop"'* ]]
    [ "$(k config current-context)" = gpuop ]
    run k get --raw /version
    [ "$status" -eq 0 ]
    [[ "$output" == *'"gitVersion":"v1.32.0-gpuop"'* ]]
    run k api-resources --no-headers
    [ "$status" -eq 0 ]
    [[ "$output" == *daemonsets* ]]
    [ -s "$data/apiserver.log" ]
    [ "$(stat -c %a "$data/kubeconfig")" = 600 ]
    [ "$(stat -c %a "$KUBECONFIG")" = 600 ]
}

@test "up keeps the user's other entries as kubectl reads them, and backs the file up" {
    write_user_kubeconfig
    cp "$KUBECONFIG" "$tmp/original"
    before=$(others "$KUBECONFIG")
    "$GPUOP" cluster up
    [ "$(others "$KUBECONFIG")" = "$before" ]
    backups=("$KUBECONFIG".gpuop-backup-*)
    [ "${#backups[@]}" -eq 1 ]
    cmp "${backups[0]}" "$tmp/original"
    [ "$(stat -c %a "${backups[0]}")" = 600 ]
    run k config get-contexts -o name
    [ "$output" = "$(printf 'gpuop\nkind-lab\nprod-admin')" ]
}

@test "up twice is one server: same pid, exit 0, no second backup" {
    write_user_kubeconfig
    "$GPUOP" cluster up
    pid=$(pid_of_server)
    run "$GPUOP" cluster up
    [ "$status" -eq 0 ]
    [[ "$output" == *"already running (pid $pid)"* ]]
    [ "$(pid_of_server)" = "$pid" ]
    backups=("$KUBECONFIG".gpuop-backup-*)
    [ "${#backups[@]}" -eq 1 ]
}

@test "status: 0 running, 1 stopped; down restores the user's kubeconfig" {
    write_user_kubeconfig
    before=$(view "$KUBECONFIG")
    run "$GPUOP" cluster status
    [ "$status" -eq 1 ]
    [[ "$output" == "status:     stopped"* ]]
    "$GPUOP" cluster up
    run "$GPUOP" cluster status
    [ "$status" -eq 0 ]
    [[ "$output" == *"status:     running"* ]]
    [[ "$output" == *"pid:        $(pid_of_server)"* ]]
    [[ "$output" == *"server:     https://127.0.0.1:"* ]]
    [[ "$output" == *"kubeconfig: $data/kubeconfig"* ]]
    pid=$(pid_of_server)
    run "$GPUOP" cluster down
    [ "$status" -eq 0 ]
    [[ "$output" == *"stopped gpuop cluster (pid $pid)"* ]]
    ! kill -0 "$pid" 2>/dev/null
    [ ! -e "$data/apiserver.pid" ]
    run "$GPUOP" cluster status
    [ "$status" -eq 1 ]
    # kubectl reads back exactly what it read before: contexts, current one, secrets.
    [ "$(view "$KUBECONFIG")" = "$before" ]
    [ "$(k config current-context)" = prod-admin ]
    run k config get-contexts -o name
    [ "$output" = "$(printf 'kind-lab\nprod-admin')" ]
    # The data stays for the next up.
    [ -s "$data/token" ]
}

@test "down when nothing runs: exit 0 with a message" {
    run "$GPUOP" cluster down
    [ "$status" -eq 0 ]
    [[ "$output" == *"not running"* ]]
}

@test "down leaves a context the user switched to" {
    write_user_kubeconfig
    "$GPUOP" cluster up
    k config use-context kind-lab
    "$GPUOP" cluster down
    [ "$(k config current-context)" = kind-lab ]
    run k config get-contexts -o name
    [ "$output" = "$(printf 'kind-lab\nprod-admin')" ]
}

@test "the next up reuses the port (kubectl's discovery cache stays valid)" {
    "$GPUOP" cluster up
    port=$(port_of_server)
    "$GPUOP" cluster down
    "$GPUOP" cluster up
    [ "$(port_of_server)" = "$port" ]
    run k get --raw /healthz
    [ "$output" = ok ]
}

@test "--port is honoured; a taken port is exit 2 with the server's own message" {
    "$GPUOP" cluster up --port 0 --data "$tmp/a"
    port=$(KUBECONFIG=$tmp/a/kubeconfig port_of_server)
    run "$GPUOP" cluster up --data "$tmp/b" --port "$port" --no-kubeconfig-merge
    [ "$status" -eq 2 ]
    [[ "$output" == *"cannot listen on 127.0.0.1:$port"* ]]
    [ ! -e "$tmp/b/apiserver.pid" ]
}

@test "kill -9 of the server: status says stopped, up starts a new one" {
    "$GPUOP" cluster up
    old=$(pid_of_server)
    kill -KILL "$old"
    for _ in $(seq 1 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
    run "$GPUOP" cluster status
    [ "$status" -eq 1 ]
    run "$GPUOP" cluster up
    [ "$status" -eq 0 ]
    [ "$(pid_of_server)" != "$old" ]
    run k get --raw /healthz
    [ "$output" = ok ]
}

@test "a pid file naming another process is stale, not a server" {
    mkdir -p "$data"
    sleep 60 &
    other=$!
    echo "$other" >"$data/apiserver.pid"
    run "$GPUOP" cluster status
    [ "$status" -eq 1 ]
    run "$GPUOP" cluster down
    [ "$status" -eq 0 ]
    kill -0 "$other"
    kill "$other"
    run "$GPUOP" cluster up
    [ "$status" -eq 0 ]
    [ "$(pid_of_server)" != "$other" ]
}

@test "a pid file without a pid: status cannot tell (2); up replaces it" {
    mkdir -p "$data"
    echo garbage >"$data/apiserver.pid"
    run "$GPUOP" cluster status
    [ "$status" -eq 2 ]
    [[ "$output" == *"apiserver.pid: does not hold a process id"* ]]
    run "$GPUOP" cluster up
    [ "$status" -eq 0 ]
    run "$GPUOP" cluster status
    [ "$status" -eq 0 ]
}

@test "every request needs the bearer token: 401 Status otherwise" {
    "$GPUOP" cluster up
    url=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
    run python3 - "$url/api/v1/namespaces" <<'PY'
import ssl, sys, urllib.request
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    urllib.request.urlopen(sys.argv[1], context=ctx, timeout=5)
    print("200")
except urllib.error.HTTPError as e:
    try:
        print(e.code, e.read().decode())
    except Exception as cut:
        print(e.code, "(the body was cut off: %r)" % cut)
PY
    [[ "$output" == "401 "*'"kind":"Status"'* ]]
}

@test "a kubeconfig that is not YAML: exit 2, FILE:LINE:COL, file unchanged" {
    printf 'apiVersion: v1\nkind: Config\ncurrent-context: a: b\n' >"$KUBECONFIG"
    cp "$KUBECONFIG" "$tmp/original"
    run "$GPUOP" cluster up
    [ "$status" -eq 2 ]
    # kubectl: "yaml: line 3: mapping values are not allowed in this context"
    [[ "$output" == *"$KUBECONFIG:3:19: not valid YAML: mapping values are not allowed"* ]]
    cmp "$KUBECONFIG" "$tmp/original"
    ! ls "$KUBECONFIG".gpuop-backup-* 2>/dev/null
}

@test "KUBECONFIG=a:b merges into a; --kubeconfig and --no-kubeconfig-merge are honoured" {
    export KUBECONFIG=$tmp/first:$tmp/second
    "$GPUOP" cluster up
    [ -f "$tmp/first" ]
    [ ! -e "$tmp/second" ]
    [ "$(kubectl config view --kubeconfig "$tmp/first" -o jsonpath='{.current-context}')" = gpuop ]
    "$GPUOP" cluster down
    [ "$(view "$tmp/first" | python3 -c 'import json,sys; print(json.load(sys.stdin)["contexts"])')" = None ]

    "$GPUOP" cluster up --kubeconfig "$tmp/explicit"
    [ "$(kubectl config view --kubeconfig "$tmp/explicit" -o jsonpath='{.current-context}')" = gpuop ]
    "$GPUOP" cluster down --kubeconfig "$tmp/explicit"
    [ -z "$(kubectl config view --kubeconfig "$tmp/explicit" -o jsonpath='{.current-context}')" ]

    cp "$tmp/first" "$tmp/first.before"
    run "$GPUOP" cluster up --data "$tmp/c" --no-kubeconfig-merge
    [ "$status" -eq 0 ]
    [[ "$output" == *"kubectl --kubeconfig $tmp/c/kubeconfig"* ]]
    cmp "$tmp/first" "$tmp/first.before"
    run "$GPUOP" cluster down --data "$tmp/c" --no-kubeconfig-merge
    [ "$status" -eq 0 ]
    cmp "$tmp/first" "$tmp/first.before"
}

@test "down of one data dir leaves another cluster's gpuop context alone" {
    write_user_kubeconfig
    "$GPUOP" cluster up --data "$tmp/one"
    "$GPUOP" cluster up --data "$tmp/two"
    run "$GPUOP" cluster down --data "$tmp/one"
    [ "$status" -eq 0 ]
    [[ "$output" == *"belongs to another gpuop cluster"* ]]
    run k get --raw /healthz
    [ "$output" = ok ]
}

#!/usr/bin/env bats
# The limits that keep the embedded API server up, against a real server
# (`gpuop cluster serve`): clients that withhold, trickle or flood are
# played by apiserver_limits.py, the well-behaved one by the real kubectl.
# One server per file; never touches the user's home or kubeconfig.

bats_require_minimum_version 1.5.0

setup_file() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    export CTMP="$BATS_FILE_TMPDIR"
    export HOME=$CTMP/home
    export DATA=$CTMP/data
    export KC=$DATA/kubeconfig
    export CLIENT="python3 $BATS_TEST_DIRNAME/apiserver_limits.py $KC"
    mkdir -p "$HOME"
    "$GPUOP" cluster serve --data "$DATA" --no-controllers 2>>"$CTMP/server.log" &
    echo $! >"$CTMP/pid"
    for _ in $(seq 1 100); do
        [ -f "$KC" ] && k get --raw /readyz >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    cat "$CTMP/server.log" >&2
    return 1
}

teardown_file() {
    local pid
    pid=$(cat "$CTMP/pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

k() {
    kubectl --kubeconfig "$KC" --cache-dir "$CTMP/cache" --request-timeout=10s "$@"
}

@test "no token: 401 from the headers alone, the announced body never read" {
    run $CLIENT early-401
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "no token: 401 while the body is still coming, without waiting for it" {
    run $CLIENT early-401-slow-body
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "a flood of connections without the token does not keep kubectl out" {
    # more than the server serves at once (512); the oldest of those that
    # have not shown the token are closed to make room for new ones
    run $CLIENT flood 1100 kubectl --kubeconfig "$KC" --cache-dir "$CTMP/cache" \
        --request-timeout=10s get namespaces
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *kube-system* ]]
}

@test "trickling clients: started (checked by the last test, a minute on)" {
    # a byte a second in the request line, the headers, the body: each byte
    # would reset an idle timer, the deadlines are totals
    { $CLIENT trickle; echo "exit $?"; } >"$CTMP/trickle.out" 2>&1 3>&- &
}

@test "body over 3 MiB announced: 413 with kube-apiserver's text, unread" {
    run $CLIENT too-large-announced
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "chunked body over 3 MiB: 413 with kube-apiserver's text" {
    run $CLIENT too-large-chunked
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "chunked body without end: the server stops reading it" {
    run $CLIENT too-large-endless
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "bodies held at once are bounded: 429 and Retry-After past the budget" {
    run $CLIENT body-budget 30
    echo "$output"
    [ "$status" -eq 0 ]
    # the budget comes back: an ordinary write goes through
    run k create configmap after-budget --from-literal=a=b
    [ "$status" -eq 0 ]
}

@test "a body within the limits is still read and stored" {
    head -c 1000000 /dev/zero | tr '\0' a >"$CTMP/value"
    run k create configmap big --from-file=value="$CTMP/value"
    [ "$status" -eq 0 ]
    [ "$(k get configmap big -o jsonpath='{.data.value}' | wc -c)" -eq 1000000 ]
}

@test "dropped watches are freed at once, not at the next event" {
    run $CLIENT dropped-watches 200 "$(cat "$CTMP/pid")"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "TLS 1.2 and 1.3 only, as kube-apiserver: 1.0 and 1.1 are refused" {
    run $CLIENT tls-versions
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "a NUL byte (%00) in a name: NotFound for that name, never the name cut at it" {
    k create configmap nul
    run k get --raw '/api/v1/namespaces/default/configmaps/nul%00x'
    [ "$status" -eq 1 ]
    [[ "$output" == *'configmaps "nul\x00x" not found'* ]]
    run k delete --raw '/api/v1/namespaces/default/configmaps/nul%00'
    [ "$status" -eq 1 ]
    [[ "$output" == *'configmaps "nul\x00" not found'* ]]
    run k get configmap nul -o name
    [ "$output" = configmap/nul ]
}

@test "a NUL byte in a query parameter is refused, not cut" {
    run k get --raw '/api/v1/namespaces/default/configmaps?labelSelector=a%3Db%00'
    [ "$status" -eq 1 ]
    [[ "$output" == *'BadRequest'*'labelSelector'* ]]
}

@test "a NUL byte (\\u0000) in a name in the body is refused, nothing stored" {
    printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"in\\u0000body"}}' \
        >"$CTMP/nul.json"
    run k create --raw /api/v1/namespaces/default/configmaps -f "$CTMP/nul.json"
    [ "$status" -eq 1 ]
    [[ "$output" == *BadRequest* || "$output" == *Invalid* ]]
    run k get configmaps -o name
    [[ "$output" != *in* ]]
}

@test "trickling clients were cut off by their deadlines" {
    for _ in $(seq 1 120); do
        grep -q '^exit ' "$CTMP/trickle.out" && break
        sleep 1
    done
    cat "$CTMP/trickle.out"
    grep -qx 'exit 0' "$CTMP/trickle.out"
}

# shellcheck shell=bash
# Polling the cluster until it says what a test waits for, shared by the
# bats files that drive a live cluster (`load until_output`). Each file
# defines its own `k` (kubectl with its kubeconfig and cache).

# Polls `k ARGS` every 0.1 s until its output equals WANT, for at most
# SECS seconds (default 20); on a timeout it prints the last output beside
# the wanted one and fails.
until_output() {
    local want=$1
    shift
    for _ in $(seq 1 $((${SECS:-20} * 10))); do
        [ "$(k "$@" 2>/dev/null)" = "$want" ] && return 0
        sleep 0.1
    done
    echo "last output: $(k "$@" 2>&1)" >&2
    echo "wanted:      $want" >&2
    return 1
}

# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # port, url, failed and now_us are the caller's; cc, apiload and results come from it
# Sourced by the benchmark scripts: die, and the checked paths every one needs.
#   BENCH_NAME   prefix of messages (set before sourcing)
# After `bench_setup "$@"`: $root (the project) and $build (absolute BUILD dir).

die() {
    echo "${BENCH_NAME:-bench}: $*" >&2
    exit 2
}

# shellcheck disable=SC2034 # root and build are the caller's
bench_setup() {
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    [ $# -le 1 ] || die "usage: $0 [BUILD_DIR]"
    local build_arg=${1:-build}
    [ -d "$build_arg" ] || die "build directory '$build_arg' not found; run 'make build' first"
    build=$(cd "$build_arg" && pwd)
}

# NAME: the folders of a benchmark that runs servers: $out (BUILD/bench),
# $results (BUILD/bench/NAME-results, made anew), $apiload (the load
# client's path) and $work, a private temporary directory. On exit the
# server in $server_pid is stopped, bench_cleanup_more runs when the script
# defines it (servers that are not its children), and $work goes.
bench_workdir() {
    out=$build/bench
    results=$out/$1-results
    apiload=$out/apiload
    mkdir -p "$out"
    rm -rf "$results"
    mkdir -p "$results"
    work=$(mktemp -d "${TMPDIR:-/tmp}/gpuop-$1-bench.XXXXXX")
    work=$(cd "$work" && pwd -P)
    server_pid=
    trap bench_cleanup EXIT
}

# shellcheck disable=SC2317 # called by the EXIT trap
bench_cleanup() {
    if [ -n "${server_pid:-}" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if declare -F bench_cleanup_more >/dev/null; then bench_cleanup_more || true; fi
    rm -rf "$work"
}

# Builds bench/apiload.c (the C load client of the API benchmarks) into
# $apiload with $cc, then picks a free port into $port and sets $url.
bench_apiload() {
    echo "${BENCH_NAME:-bench}: compiling apiload" >&2
    "$cc" -O2 -g -std=c11 -Wall -Wextra -pthread -o "$apiload" "$root/bench/apiload.c" \
        -lcurl -ljansson -lyajl -lpthread ||
        die "could not build $apiload; the libcurl, jansson and yajl headers come with 'scripts/setup-deps.sh build bench'"
    port=$("$apiload" port) || die "no free port on 127.0.0.1"
    url=https://127.0.0.1:$port
    failed=0
}

# Notes a failure for the report ($results/problems.txt) and the exit status.
problem() {
    echo "$*" >>"$results/problems.txt"
    echo "${BENCH_NAME:-bench}: $*" >&2
    failed=1
}

# Microseconds since the epoch into $now_us, without a fork.
now() {
    local t=$EPOCHREALTIME
    now_us=${t//[!0-9]/}
}

# NAME DEFAULT: the environment variable NAME, a positive integer.
positive() {
    local v=${!1:-$2}
    [[ $v =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got '$v'"
    echo "$v"
}

# Sets $python and $cc (PYTHON, CC, else python3 and cc), checked.
bench_tools() {
    python=${PYTHON:-python3}
    command -v "$python" >/dev/null || die "'$python' not found; run 'scripts/setup-deps.sh bench'"
    cc=${CC:-cc}
    command -v "$cc" >/dev/null || die "C compiler '$cc' not found; run 'scripts/setup-deps.sh build'"
}

# ---- the server under test ($server_pid; its logs are $work/server*.log) ----

# True while the server runs; otherwise notes how it ended (once). An exited
# child stays a zombie until waited for, and kill -0 succeeds on a zombie.
server_alive() {
    [ -n "$server_pid" ] || return 1
    local stat=
    read -r stat 2>/dev/null <"/proc/$server_pid/stat" || true
    stat=${stat##*) }
    [ -n "$stat" ] && [ "${stat:0:1}" != Z ] && return 0
    local rc=0 why
    wait "$server_pid" || rc=$?
    why="exited with status $rc"
    [ "$rc" -ne 0 ] || why="exited with status 0, as on SIGTERM or SIGINT: another process signalled it"
    [ "$rc" -le 128 ] || why="was killed by signal $((rc - 128))"
    problem "the server (pid $server_pid) $why during '$1'; its log: $(tail -q -n 5 "$work"/server*.log | tr '\n' ' ')"
    server_pid=
    return 1
}

stop_server() {
    server_alive "$1" || return 0
    local rc=0
    kill -TERM "$server_pid"
    wait "$server_pid" || rc=$?
    [ "$rc" -eq 0 ] || problem "the server exited with status $rc on SIGTERM after '$1'"
    server_pid=
}

# "rss_kib=N hwm_kib=N" of the server (nothing once it is gone).
memory() {
    local key value rest rss=0 hwm=0
    [ -r "/proc/$server_pid/status" ] || return 0
    while read -r key value rest; do
        case $key in
        VmRSS:) rss=$value ;;
        VmHWM:) hwm=$value ;;
        esac
    done <"/proc/$server_pid/status"
    echo "rss_kib=$rss hwm_kib=$hwm"
}

# Waits until the server has been quiet for a second (under 5% of a core:
# its WAL checkpoint after a burst of writes done), at most $1 seconds
# (default 30), so that what is timed next is not timed against it.
settle() {
    local limit=${1:-30} i c0
    for ((i = 0; i < limit; i++)); do
        server_cpu
        c0=$cpu_ticks
        sleep 1
        server_cpu
        [ $((cpu_ticks - c0)) -lt $(($(getconf CLK_TCK) / 20)) ] && return 0
    done
    return 0
}

# User+system CPU of the server in clock ticks, into $cpu_ticks.
server_cpu() {
    local stat
    cpu_ticks=0
    read -r stat 2>/dev/null <"/proc/$server_pid/stat" || return 0
    stat=${stat##*) }
    # shellcheck disable=SC2086 # the fields of /proc/PID/stat
    set -- $stat
    cpu_ticks=$((${12:-0} + ${13:-0}))
}


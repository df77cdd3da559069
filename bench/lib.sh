# shellcheck shell=bash
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

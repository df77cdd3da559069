#!/usr/bin/env bats
# Start-up: the commands that talk to no cluster load none of the cluster
# client's libraries, and gpuop hands the others to its gpuop-kube helper
# as if it ran them itself. Run by ctest with GPUOP and GPUOP_SRC set.

# SC2016: the scripts given to sh are single-quoted on purpose; SC2154:
# bats's `run` sets $stderr.
# shellcheck disable=SC2016,SC2154
bats_require_minimum_version 1.5.0

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    : "${GPUOP_SRC:?set GPUOP_SRC to the source tree}"
    tmp=$(mktemp -d)
    lab=$GPUOP_SRC/examples/incident/etc/containerd
}

teardown() {
    rm -rf "$tmp"
}

# The shared libraries the dynamic loader maps for "$@", one a line
# (LD_DEBUG=files names each as it loads it).
loaded_libraries() {
    LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld" "$@" >/dev/null 2>&1 || true
    sed -n 's/^.*file=\([^ ]*\) .*needed by.*$/\1/p' "$tmp"/ld.* | sort -u
    rm -f "$tmp"/ld.*
}

# Fails, naming them, when "$@" loads a library other than libc, libm and
# jansson (a sanitizer's runtime aside).
loads_only_small_libraries() {
    local libs extra
    libs=$(loaded_libraries "$@")
    [ -n "$libs" ] || {
        echo "LD_DEBUG showed no library for: $*"
        return 1
    }
    extra=$(grep -Ev '^(libc|libm|libjansson|libasan|libubsan|libgcc_s|libstdc\+\+)\.so' <<<"$libs" || true)
    [ -z "$extra" ] || {
        echo "$* loads: $(tr '\n' ' ' <<<"$extra")"
        return 1
    }
}

@test "toml, containerd and --version load no HTTP client, YAML, yajl or SQLite" {
    loads_only_small_libraries "$GPUOP" --version
    loads_only_small_libraries "$GPUOP" --help
    loads_only_small_libraries "$GPUOP" toml check "$lab/config.toml"
    loads_only_small_libraries "$GPUOP" toml json "$lab/config.toml"
    loads_only_small_libraries "$GPUOP" containerd merge --root "$GPUOP_SRC/examples/incident" \
        --containerd 1.6
    loads_only_small_libraries "$GPUOP" containerd merge --root "$GPUOP_SRC/examples/incident" \
        --containerd 2.1 -o json
    loads_only_small_libraries "$GPUOP" containerd script
    loads_only_small_libraries "$GPUOP" containerd --help
    # The stand-in containerd the lab's grader runs check scripts against.
    mkdir "$tmp/bin"
    ln -s "$GPUOP" "$tmp/bin/containerd"
    loads_only_small_libraries "$tmp/bin/containerd" --version
}

@test "the cluster commands run in gpuop-kube, which loads the HTTP client" {
    local helper
    helper=$(dirname "$GPUOP")/gpuop-kube
    [ -x "$helper" ]
    # Through gpuop, the loader maps libcurl: the helper ran.
    loaded_libraries "$GPUOP" nodes --help | grep -q '^libcurl\.so'
    run --separate-stderr "$GPUOP" nodes --help
    [ "$status" -eq 0 ]
    [[ ${lines[0]} == "Usage: gpuop nodes "* ]]
}

@test "containerd check runs in gpuop-kube: it speaks CRI over HTTP/2 with libcurl" {
    # gpuop itself has no check in it: the helper's usage comes back.
    loaded_libraries "$GPUOP" containerd check --help | grep -q '^libcurl\.so'
    run --separate-stderr "$GPUOP" containerd check --help
    [ "$status" -eq 0 ]
    [[ ${lines[0]} == "Usage: gpuop containerd check "* ]]
    ! grep -aq 'Usage: gpuop containerd check \[HANDLER\] \[--source auto' "$GPUOP"
    grep -aq 'Usage: gpuop containerd check \[HANDLER\] \[--source auto' "$(dirname "$GPUOP")/gpuop-kube"
    # libcurl as Debian 12 builds it has HTTP/2 (nghttp2), which CRI needs.
    curl -V | grep -q 'nghttp2/'
}

# An installed layout in $tmp: bin/gpuop and, in libexec/gpuop, a gpuop-kube
# stand-in that reports what it was given.
fake_install() {
    mkdir -p "$tmp/inst/bin" "$tmp/inst/libexec/gpuop"
    cp "$GPUOP" "$tmp/inst/bin/gpuop"
    cat >"$tmp/inst/libexec/gpuop/gpuop-kube" <<'SH'
#!/bin/sh
echo "pid=$$"
for a in "$@"; do echo "arg=$a"; done
echo "LANGUAGE=${LANGUAGE-unset}"
echo "stdin=$(cat)"
echo "to stderr" >&2
exit 7
SH
    chmod +x "$tmp/inst/libexec/gpuop/gpuop-kube"
}

@test "gpuop hands a cluster command to gpuop-kube: same pid, arguments, streams, environment, exit status" {
    fake_install
    echo input >"$tmp/stdin"
    # LANG names a language with no locale here: gpuop's own set-up would
    # add LANGUAGE, which the helper must not inherit from it. The shell
    # execs gpuop, so its $$ is gpuop's pid.
    run --separate-stderr sh -c 'echo "shell=$$"; LANG=xx_XX.UTF-8 exec "$0" why-pending "a b" "" --c <"$1"' \
        "$tmp/inst/bin/gpuop" "$tmp/stdin"
    [ "$status" -eq 7 ]
    [ "$stderr" = "to stderr" ]
    [ "${lines[1]}" = "pid=${lines[0]#shell=}" ]
    [ "${lines[2]}" = "arg=why-pending" ]
    [ "${lines[3]}" = "arg=a b" ]
    [ "${lines[4]}" = "arg=" ]
    [ "${lines[5]}" = "arg=--c" ]
    [ "${lines[6]}" = "LANGUAGE=unset" ]
    [ "${lines[7]}" = "stdin=input" ]
    [ "${#lines[@]}" -eq 8 ]
}

@test "exec keeps the pid: a signal sent to gpuop reaches the helper" {
    fake_install
    cat >"$tmp/inst/libexec/gpuop/gpuop-kube" <<'SH'
#!/bin/sh
trap 'echo got TERM; exit 3' TERM
echo ready
i=0
while [ $i -lt 200 ]; do # at most 10 s, should the signal go elsewhere
    sleep 0.05
    i=$((i + 1))
done
SH
    "$tmp/inst/bin/gpuop" nodes >"$tmp/out" 2>&1 &
    local pid=$!
    for _ in $(seq 100); do
        grep -q ready "$tmp/out" && break
        sleep 0.05
    done
    kill -TERM "$pid"
    local rc=0
    wait "$pid" || rc=$?
    [ "$rc" -eq 3 ]
    grep -q "got TERM" "$tmp/out"
}

@test "toml and containerd stay in gpuop: they run with no helper installed" {
    fake_install
    rm "$tmp/inst/libexec/gpuop/gpuop-kube"
    run "$tmp/inst/bin/gpuop" toml check "$lab/config.toml"
    [ "$status" -eq 0 ]
    run "$tmp/inst/bin/gpuop" containerd merge --root "$GPUOP_SRC/examples/incident" --containerd 2.1
    [ "$status" -eq 0 ]
    run "$tmp/inst/bin/gpuop" --version
    [ "$status" -eq 0 ]
    run "$tmp/inst/bin/gpuop" containerd --help
    [ "$status" -eq 0 ]
}

@test "gpuop hands containerd check to gpuop-kube, arguments and all" {
    fake_install
    run --separate-stderr "$tmp/inst/bin/gpuop" containerd check nvidia --source daemon </dev/null
    [ "$status" -eq 7 ]
    [ "${lines[1]}" = "arg=containerd" ]
    [ "${lines[2]}" = "arg=check" ]
    [ "${lines[3]}" = "arg=nvidia" ]
    [ "${lines[4]}" = "arg=--source" ]
    [ "${lines[5]}" = "arg=daemon" ]
    # merge is not handed over.
    run "$tmp/inst/bin/gpuop" containerd merge --root "$GPUOP_SRC/examples/incident" --containerd 2.1
    [ "$status" -eq 0 ]
}

@test "a missing gpuop-kube is named, exit 2, in the user's language" {
    fake_install
    rm "$tmp/inst/libexec/gpuop/gpuop-kube"
    # The last place looked in is the configured libexec folder.
    local dir
    dir=$(grep -a -o '/[[:alnum:]/._-]*/libexec/gpuop' "$GPUOP" | head -n 1)
    [ ! -e "$dir/gpuop-kube" ] || skip "a gpuop-kube is installed in $dir"
    run --separate-stderr env LANGUAGE=ko GPUOP_LOCALEDIR="$(dirname "$GPUOP")/locale" \
        "$tmp/inst/bin/gpuop" nodes
    [ "$status" -eq 2 ]
    [ -z "$output" ]
    [[ $stderr == "gpuop: $dir/gpuop-kube 명령을 실행할 수 없습니다: "* ]]
}

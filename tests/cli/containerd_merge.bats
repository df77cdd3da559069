#!/usr/bin/env bats
# gpuop containerd merge: its verdicts and exit status (1 when a runtime the
# files declare does not load, or the default runtime is not the one they
# name), and -o json's schema and error object. The config sets are
# tests/data/containerd/merge's (containerd/fixtures checks them against the
# real containerd). Run by ctest with GPUOP and GPUOP_SRC set.

bats_require_minimum_version 1.5.0

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    : "${GPUOP_SRC:?set GPUOP_SRC to the source tree}"
    tmp=$(mktemp -d)
}

teardown() {
    rm -rf "$tmp"
}

# The fixture $1 in $tmp/$1, <dir> replaced, as measured.
fixture() {
    cp -r "$GPUOP_SRC/tests/data/containerd/merge/$1" "$tmp/$1"
    sed -i "s|<dir>|$tmp/$1|g" "$tmp/$1/config.toml"
}

merge() {
    local case=$1
    shift
    run --separate-stderr "$GPUOP" containerd merge --config "$tmp/$case/config.toml" "$@"
}

@test "merge: a declared runtime that does not load is a verdict, exit 1" {
    fixture runtime-not-loaded
    merge runtime-not-loaded --containerd 1.6
    [ "$status" -eq 1 ]
    [[ "$output" == *$'\n  CRI config valid\n  NOT LOADED: runtimes the files declare: nvidia, runc\n'* ]]
    [[ "$output" == *"$tmp/runtime-not-loaded/config.toml:5  [runtime-not-loaded] runtime runc is declared here but containerd 1.6 does not load it"* ]]
    # 2.x merges key by key: everything loads.
    merge runtime-not-loaded --containerd 2.1
    [ "$status" -eq 0 ]
}

@test "merge: the default runtime the files name, replaced by the built-in one, exit 1" {
    fixture default-runtime-lost
    merge default-runtime-lost --containerd 1.6
    [ "$status" -eq 1 ]
    [[ "$output" == *$'\n  DEFAULT RUNTIME LOST: the files name "nvidia", containerd loads "runc"\n'* ]]
    merge default-runtime-lost --containerd 1.6 -o json
    run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["schema"] == "gpuop.containerd.merge/v1" and d["holds"] is False, d["schema"]
p = d["predicted"]
assert (p["default_runtime_written"], p["default_runtime_name"], p["default_runtime_lost"]) == ("nvidia", "runc", True), p
assert p["declared_not_loaded"] == [] and p["cri_valid"] is True
print("ok")' "$output"
    [ "$output" = ok ]
}

@test "merge: imports after a table is a lint, its drop-ins unread, exit 1" {
    fixture imports-after-table
    merge imports-after-table --containerd 2.1
    [ "$status" -eq 1 ]
    [[ "$output" == *"  IMPORTS IGNORED: an \`imports\` inside a table is not the list of drop-ins"* ]]
    [[ "$output" == *"config.toml:8  [imports-in-table] this \`imports\` comes after the header [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]"* ]]
    [[ "$output" != *"99-nvidia.toml"* ]]
}

@test "merge: CDI on 1.6 is dropped and linted; a shadowed snapshotter is not loaded" {
    fixture cdi-on-1.6
    merge cdi-on-1.6 --containerd 1.6
    [ "$status" -eq 0 ]
    [[ "$output" == *"99-nvidia.toml:3  plugins.\"io.containerd.grpc.v1.cri\".enable_cdi: not a setting of the containerd 1.6 CRI plugin: ignored silently"* ]]
    [[ "$output" == *"[cdi-needs-1.7] CDI needs containerd 1.7 or later"* ]]
    merge cdi-on-1.6 --containerd 1.7
    [ "$status" -eq 0 ]
    [[ "$output" != *"cdi-needs-1.7"* ]]
    fixture snapshotter-shadowed
    merge snapshotter-shadowed --containerd 1.6
    [ "$status" -eq 0 ]
    [[ "$output" == *"config.toml:4  plugins.\"io.containerd.grpc.v1.cri\".containerd.snapshotter: overridden by $tmp/snapshotter-shadowed/conf.d/99-nvidia.toml:3, which sets \"overlayfs\""* ]]
}

@test "merge -o json: on exit 2 the error object is on stdout" {
    merge none -o json --containerd 1.6
    [ "$status" -eq 2 ]
    [ "$stderr" = "$tmp/none/config.toml: cannot open: No such file or directory" ]
    run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d == {"schema": "gpuop.containerd.merge/v1", "holds": None,
             "error": {"code": "config-unreadable", "where": sys.argv[2],
                       "message": sys.argv[2] + ": cannot open: No such file or directory"}}, d
print("ok")' "$output" "$tmp/none/config.toml"
    [ "$output" = ok ]
    fixture cdi-on-1.6
    merge cdi-on-1.6 -o json --containerd 3.0
    [ "$status" -eq 2 ]
    [[ "$output" == *'"code":"unknown-version"'*'"where":"--containerd"'* ]]
    merge cdi-on-1.6 -o json --containerd 1.6 --observed "$tmp/no-dump.toml"
    [ "$status" -eq 2 ]
    [[ "$output" == *'"code":"observed-unreadable"'* ]]
    # Text: nothing on stdout, the error on stderr.
    merge none --containerd 1.6
    [ "$status" -eq 2 ]
    [ -z "$output" ]
}

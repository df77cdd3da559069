#!/usr/bin/env bats
# scripts/run-lab.sh (make run): the workspace it hands the lab. gpuop is a
# stand-in that records its arguments, so no cluster starts.

setup() {
    tmp=$(mktemp -d)
    export HOME=$tmp/home
    mkdir -p "$HOME"
    fake=$tmp/gpuop
    printf '#!/bin/sh\necho "$*" >>"%s/calls"\n' "$tmp" >"$fake"
    chmod +x "$fake"
    unset GPUOP_LAB_ROOT
}

teardown() {
    rm -rf "$tmp"
}

@test "a source tree in ~/gpuop: the lab gets ~/gpuop-lab, and make run says so" {
    mkdir -p "$HOME/gpuop"
    cd "$HOME/gpuop"
    run "$GPUOP_SRC/scripts/run-lab.sh" "$fake"
    [ "$status" -eq 0 ]
    [[ "$output" == *"the lab's workspace is $HOME/gpuop-lab"* ]]
    grep -qx "lab init --root $HOME/gpuop-lab" "$tmp/calls"
    grep -qx "lab check --root $HOME/gpuop-lab" "$tmp/calls"
}

@test "a source tree below ~/gpuop counts too" {
    mkdir -p "$HOME/gpuop/src/gpuop"
    cd "$HOME/gpuop/src/gpuop"
    run "$GPUOP_SRC/scripts/run-lab.sh" "$fake"
    [ "$status" -eq 0 ]
    grep -qx "lab init --root $HOME/gpuop-lab" "$tmp/calls"
}

@test "elsewhere the lab's own default stands, and GPUOP_LAB_ROOT wins" {
    mkdir -p "$HOME/gpuop" "$tmp/src"
    cd "$tmp/src"
    run "$GPUOP_SRC/scripts/run-lab.sh" "$fake"
    [ "$status" -eq 0 ]
    grep -qx "lab init" "$tmp/calls"
    cd "$HOME/gpuop"
    rm "$tmp/calls"
    GPUOP_LAB_ROOT=$tmp/mine run "$GPUOP_SRC/scripts/run-lab.sh" "$fake"
    grep -qx "lab init --root $tmp/mine" "$tmp/calls"
}

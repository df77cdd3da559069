#!/usr/bin/env bats
# Steps 5-8 need kubectl 1.24 or newer (`kubectl patch --subresource`), and
# Debian 12's is 1.20: `gpuop lab steps` and `gpuop lab up` say so in one
# line, in English, Korean and Japanese, when the kubectl on PATH is missing
# or too old; `make test` stops at once without kubectl 1.32. Fake kubectls
# on a PATH of their own print what real ones print for
# `kubectl version --client -o json`.

bats_require_minimum_version 1.5.0

setup_file() {
    export T
    T=$(mktemp -d)
    export HOME="$T/home" KUBECONFIG="$T/kubeconfig" ROOT="$T/gpuop"
    mkdir -p "$HOME" "$T/none"
    "$GPUOP" lab init --root "$ROOT" >/dev/null
    # A fake kubectl in $T/DIR prints BODY for `version --client -o json`
    # with shell built-ins only, so that its PATH needs nothing else.
    fake() {
        mkdir -p "$T/$1"
        printf '%s\n' "$2" >"$T/$1/version.json"
        {
            echo '#!/bin/sh'
            echo '[ "$*" = "version --client -o json" ] || exit 3'
            echo "while IFS= read -r line; do printf '%s\\n' \"\$line\"; done <'$T/$1/version.json'"
        } >"$T/$1/kubectl"
        chmod +x "$T/$1/kubectl"
    }
    # What Debian 12's kubernetes-client (1.20) prints.
    fake old '{
  "clientVersion": {
    "major": "1",
    "minor": "20",
    "gitVersion": "v1.20.15",
    "gitTreeState": "clean",
    "platform": "linux/amd64"
  }
}'
    # A vendor's 1.32 build: minor "32+", a suffix after the patch number.
    fake new '{
  "clientVersion": {
    "major": "1",
    "minor": "32+",
    "gitVersion": "v1.32.4-dispatcher",
    "platform": "linux/amd64"
  },
  "kustomizeVersion": "v5.5.0"
}'
    fake edge '{"clientVersion": {"major": "1", "minor": "24", "gitVersion": "v1.24.0"}}'
    fake just_old '{"clientVersion": {"major": "1", "minor": "23+"}}'
    fake garbled 'kubectl: unknown flag: --output'
}

teardown_file() {
    "$GPUOP" cluster down --data "$T/data" >/dev/null 2>&1 || true
    rm -rf "$T"
}

# steps_with DIR [ENV...]: `gpuop lab steps` with only DIR on PATH.
steps_with() {
    local dir=$1
    shift
    run --separate-stderr env PATH="$T/$dir" "$@" "$GPUOP" lab steps --root "$ROOT"
    [ "$status" -eq 0 ]
    [[ "$output" == *"/out/rollout.txt"* ]] # step 8, in any language
}

@test "no kubectl on PATH: lab steps says in one line that steps 5-8 need it, and where to get it" {
    steps_with none
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "gpuop: steps 5-8 need kubectl 1.24 or newer"* ]]
    [[ "$stderr" == *"none on PATH"* ]]
    [[ "$stderr" == *"https://kubernetes.io/docs/tasks/tools/"* ]]
}

@test "a kubectl older than 1.24: lab steps names its version in one line" {
    steps_with old
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "gpuop: steps 5-8 need kubectl 1.24 or newer"* ]]
    [[ "$stderr" == *"v1.20.15"* ]]
    [[ "$stderr" == *"https://kubernetes.io/docs/tasks/tools/"* ]]
    # Only major and minor, "23+": still older.
    steps_with just_old
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == *"v1.23"* ]]
}

@test "kubectl 1.24 and a vendor's 1.32 (minor \"32+\"): nothing to say" {
    steps_with edge
    [ -z "$stderr" ]
    steps_with new
    [ -z "$stderr" ]
}

@test "a kubectl whose version cannot be read: one line that says so" {
    steps_with garbled
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == *"cannot be read"* ]]
    [[ "$stderr" == *"clientVersion"* ]]
}

@test "the steps that need no kubectl (1-4) say nothing about it" {
    run --separate-stderr env PATH="$T/none" "$GPUOP" lab steps 3 --root "$ROOT"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    run --separate-stderr env PATH="$T/none" "$GPUOP" lab steps 6 --root "$ROOT"
    [ "${#stderr_lines[@]}" -eq 1 ]
}

# gettext ignores LANGUAGE in the plain C locale; C.UTF-8 is always there.
@test "in Korean: missing and too old, one line each" {
    steps_with none LANG=C.UTF-8 LANGUAGE=ko
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == *"5-8단계에는 kubectl 1.24 이상이 필요"* ]]
    [[ "$stderr" == *"PATH에 kubectl이 없습니다"* ]]
    [[ "$stderr" == *"https://kubernetes.io/docs/tasks/tools/"* ]]
    steps_with old LANG=C.UTF-8 LANGUAGE=ko
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == *"5-8단계"* ]]
    [[ "$stderr" == *"v1.20.15"* ]]
}

@test "in Japanese: missing and too old, one line each" {
    steps_with none LANG=C.UTF-8 LANGUAGE=ja
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == *"ステップ5〜8にはkubectl 1.24以降が必要"* ]]
    [[ "$stderr" == *"PATHにkubectlがありません"* ]]
    [[ "$stderr" == *"https://kubernetes.io/docs/tasks/tools/"* ]]
    steps_with old LANG=C.UTF-8 LANGUAGE=ja
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == *"ステップ5〜8"* ]]
    [[ "$stderr" == *"v1.20.15"* ]]
}

@test "lab up says it too, once the cluster is up" {
    run --separate-stderr env PATH="$T/old" "$GPUOP" lab up --root "$ROOT" --data "$T/data"
    [ "$status" -eq 0 ]
    [[ "$output" == *"The lab's cluster is up"* ]]
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "gpuop: steps 5-8 need kubectl 1.24 or newer"*"v1.20.15"* ]]
    # Up again with a good kubectl: nothing more.
    run --separate-stderr env PATH="$T/new" "$GPUOP" lab up --root "$ROOT" --data "$T/data"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
}

# A PATH with only what scripts/check-test-prereqs.sh and make use, and a
# fake kubectl: if the check let `make test` go on, setup-deps.sh would find
# no dpkg-query nor apt-get here and stop too, with other words.
make_test_with() {
    local bin=$T/make-$1
    mkdir -p "$bin"
    local tool
    for tool in make bash sh sed head timeout; do
        ln -sf "$(command -v "$tool")" "$bin/$tool"
    done
    [ "$1" = none ] || ln -sf "$T/$1/kubectl" "$bin/kubectl"
    run env PATH="$bin" make -C "$GPUOP_SRC" --no-print-directory test
}

@test "make test without kubectl 1.32 stops at once and says what is missing" {
    make_test_with none
    [ "$status" -ne 0 ]
    [[ "$output" == *"make test: needs kubectl 1.32 on PATH, and there is none"* ]]
    [[ "$output" != *"setup-deps"* ]]
    make_test_with old
    [ "$status" -ne 0 ]
    [[ "$output" == *"make test: needs kubectl 1.32, and the one on PATH"*"is v1.20.15"* ]]
    [[ "$output" != *"setup-deps"* ]]
}

@test "the check passes kubectl 1.32 and refuses a missing toml-test" {
    run env PATH="$T/new:/usr/bin:/bin" "$GPUOP_SRC/scripts/check-test-prereqs.sh" "$TOML_TEST_DIR"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    run env PATH="$T/new:/usr/bin:/bin" "$GPUOP_SRC/scripts/check-test-prereqs.sh" "$T/no-toml-test"
    [ "$status" -eq 2 ]
    [[ "$output" == "make test: needs the toml-test cases at $T/no-toml-test"* ]]
}

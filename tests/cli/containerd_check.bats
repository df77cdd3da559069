#!/usr/bin/env bats
# gpuop containerd check / script, and the stand-in containerd, against real
# `containerd config dump` outputs recorded from 1.6.20 and 2.1.5.
# Run by ctest with GPUOP, GPUOP_SRC and TOML_TEST_DIR set.

# SC2016: containerd's messages hold literal backticks and $(...) is test
# input; SC2154: bats's `run` sets $stderr.
# shellcheck disable=SC2016,SC2154
bats_require_minimum_version 1.5.0

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    : "${TOML_TEST_DIR:?set TOML_TEST_DIR to the toml-test cases}"
    cases=$TOML_TEST_DIR/../containerd-cases
    tmp=$(mktemp -d)
    mkdir "$tmp/bin"
    # The stand-in: gpuop through a link named containerd, first in PATH.
    ln -s "$GPUOP" "$tmp/bin/containerd"
    cli_standin_path="$tmp/bin:/usr/bin:/bin"
    has_nvidia=$cases/2.1.5/lab.toml
    no_nvidia=$cases/1.6.20/h3_v2main_v3dropin.toml
    refused=$cases/1.6.20/lab.toml
    # A directory with nothing in it: no containerd on this PATH.
    mkdir "$tmp/empty"
}

teardown() {
    rm -rf "$tmp"
}

# gpuop containerd check --source dump ... with the stand-in answering from
# dump $1. The dump alone, whatever daemon this machine runs.
check_with() {
    local dump=$1
    shift
    run --separate-stderr env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$dump" \
        "$GPUOP" containerd check --source dump "$@"
}

@test "stand-in: config dump prints GPUOP_STANDIN_DUMP; --version shows the version" {
    run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$has_nvidia" containerd config dump
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat "$has_nvidia")" ]
    run env PATH="$cli_standin_path" containerd --version
    [ "$status" -eq 0 ]
    [ "$output" = "containerd github.com/containerd/containerd 1.6.20 gpuop-standin" ]
    run env PATH="$cli_standin_path" GPUOP_STANDIN_VERSION=2.1.5 containerd --version
    [ "$output" = "containerd github.com/containerd/containerd 2.1.5 gpuop-standin" ]
}

@test "stand-in: unset dump, forced failure and unknown commands are errors" {
    run --separate-stderr env -u GPUOP_STANDIN_DUMP PATH="$cli_standin_path" containerd config dump
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [[ "$stderr" == *"GPUOP_STANDIN_DUMP"* ]]
    run --separate-stderr env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$has_nvidia" \
        GPUOP_STANDIN_EXIT=3 containerd config dump
    [ "$status" -eq 3 ]
    [ -z "$output" ]
    [[ "$stderr" == *"GPUOP_STANDIN_EXIT=3"* ]]
    run --separate-stderr env PATH="$cli_standin_path" containerd frobnicate
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"Incorrect Usage"* ]]
    run env PATH="$cli_standin_path" containerd
    [ "$status" -eq 1 ]
}

# Issue 16, case 1: the dump re-reads the files, so it predicts a restart
# and never says what is loaded: exit 2 whatever it lists.
@test "check --source dump: nvidia in the dump is a prediction, cannot tell (exit 2)" {
    check_with "$has_nvidia"
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell; would load after a restart (containerd config dump: runtimes nvidia, runc; default runc)" ]
    [ "${lines[1]}" = "source: dump (what a restart would load, not what is loaded)" ]
    [[ "${lines[2]}" == "restart pending: "* ]]
    check_with "$has_nvidia" runc
    [ "$status" -eq 2 ]
    [[ "$output" == "runc: cannot tell; would load after a restart"* ]]
}

@test "check --source dump: a dump without nvidia predicts it would not load (exit 2)" {
    check_with "$no_nvidia"
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell; would NOT load after a restart (containerd config dump: runtimes runc; default runc)" ]
    check_with "$has_nvidia" kata
    [ "$status" -eq 2 ]
    [[ "$output" == "kata: cannot tell; would NOT load after a restart"* ]]
}

@test "check --source dump: the 1.6.20 lab dump lists nvidia, but the CRI plugin would refuse it" {
    check_with "$refused"
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell; would NOT load after a restart (containerd config dump: runtimes nvidia; default runc; the CRI plugin would refuse this config)" ]
    # containerd's own words, as its daemon logged them (no closing backtick).
    [ "${lines[1]}" = 'CRI plugin would fail to load: invalid plugin config: no corresponding runtime configured in `containerd.runtimes` for `containerd` `default_runtime_name = "runc"' ]
    grep -qF "${lines[1]#CRI plugin would fail to load: }" "$cases/1.6.20/daemon-lab.txt"
}

@test "check: no containerd on PATH, or a failing one, cannot tell (exit 2)" {
    run --separate-stderr env PATH=/nonexistent "$GPUOP" containerd check --source dump
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == "nvidia: cannot tell ("*"containerd not found on PATH"* ]]
    run --separate-stderr env PATH="$tmp/empty" "$GPUOP" containerd check nvidia --source dump
    [ "$status" -eq 2 ]
    run --separate-stderr env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$has_nvidia" \
        GPUOP_STANDIN_EXIT=5 "$GPUOP" containerd check --source dump
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == "nvidia: cannot tell ("*"containerd config dump"*"failed (exit 5)"* ]]
}

@test "check: a dump that is not TOML cannot tell (exit 2)" {
    printf 'version = 2\n[plugins\n' >"$tmp/bad.toml"
    check_with "$tmp/bad.toml"
    [ "$status" -eq 2 ]
    [[ "${lines[0]}" == "nvidia: cannot tell (<containerd config dump>:2:"* ]]
}

# With no daemon at the address, auto falls back to the dump, and says so.
@test "check (auto): no daemon at the socket, so the dump predicts (exit 2) and says why" {
    run --separate-stderr env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$has_nvidia" \
        "$GPUOP" containerd check --address "$tmp/none.sock"
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell; would load after a restart (containerd config dump: runtimes nvidia, runc; default runc)" ]
    [ "${lines[1]}" = "source: dump (what a restart would load, not what is loaded)" ]
    [ "${lines[2]}" = "daemon not asked: cannot connect to $tmp/none.sock: No such file or directory" ]
    [ "${lines[3]}" = "restart pending: cannot tell (no containerd process serving $tmp/none.sock is visible here)" ]
}

@test "check -o json: schema, source, and on exit 2 an error object on stdout" {
    run --separate-stderr env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$refused" \
        "$GPUOP" containerd check --address "unix://$tmp/none.sock" -o json
    [ "$status" -eq 2 ]
    run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["schema"] == "gpuop.containerd.check/v1", d["schema"]
assert (d["verdict"], d["exit"], d["source"], d["asked"]) == ("cannot-tell", 2, "dump", "auto"), d
assert d["daemon"]["state"] == "unreachable" and d["daemon"]["address"] == sys.argv[2], d["daemon"]
assert d["dump"]["runtimes"] == ["nvidia"] and d["dump"]["cri"] == "invalid", d["dump"]
assert d["dump"]["would_load_after_restart"] is False
assert d["error"]["code"] == "prediction-only" and d["error"]["where"] == "containerd config dump", d["error"]
assert "what a restart would load" in d["error"]["message"]
print("ok")' "$output" "$tmp/none.sock"
    [ "$output" = ok ]
    run --separate-stderr "$GPUOP" containerd check --source daemon --address "$tmp/none.sock" -o json
    [ "$status" -eq 2 ]
    run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["error"] == {"code": "daemon-unreachable", "where": sys.argv[2],
                      "message": "cannot connect to %s: No such file or directory" % sys.argv[2]}, d
assert d["dump"] is None and d["node"] is None
print("ok")' "$output" "$tmp/none.sock"
    [ "$output" = ok ]
}

@test "check --prometheus: the dump gives would_load, never loaded; the exit status stays" {
    check_with "$has_nvidia" --prometheus
    [ "$status" -eq 2 ]
    [[ "$output" == *'# TYPE gpuop_containerd_runtime_handler_would_load gauge'* ]]
    [[ "$output" == *'gpuop_containerd_runtime_handler_would_load{handler="nvidia",source="dump"} 1'* ]]
    [[ "$output" == *'gpuop_containerd_cri_config_valid{source="dump"} 1'* ]]
    [[ "$output" == *'gpuop_containerd_check_success{handler="nvidia",source="dump"} 0'* ]]
    [[ "$output" != *"runtime_handler_loaded{"* ]]
    [[ "$output" != *"nvidia: "* ]]
    check_with "$refused" --prometheus
    [ "$status" -eq 2 ]
    [[ "$output" == *'gpuop_containerd_runtime_handler_would_load{handler="nvidia",source="dump"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_cri_config_valid{source="dump"} 0'* ]]
    run --separate-stderr env PATH=/nonexistent "$GPUOP" containerd check --source dump --prometheus
    [ "$status" -eq 2 ]
    [[ "$output" == *'gpuop_containerd_check_success{handler="nvidia",source="auto"} 0'* ]]
    [[ "$output" != *"would_load{"* ]]
    # Every line is a comment or NAME{LABELS} VALUE.
    check_with "$has_nvidia" --prometheus
    while IFS= read -r line; do
        [[ "$line" =~ ^#\ (HELP|TYPE)\ gpuop_ || "$line" =~ ^gpuop_[a-z_]+\{[a-z]+=\"[a-z]+\"(,[a-z]+=\"[a-z]+\")?\}\ [01]$ ]]
    done <<<"$output"
}

@test "check: invalid handler names and options are refused (exit 2)" {
    for bad in 'a b' "x'y" '$(id)' 'nvidia"}' ''; do
        check_with "$has_nvidia" "$bad"
        [ "$status" -eq 2 ]
        [ -z "$output" ]
        [[ "$stderr" == *"not a runtime handler name"* ]]
    done
    check_with "$has_nvidia" --source elsewhere
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--source takes auto, daemon, node or dump, not 'elsewhere'"* ]]
    check_with "$has_nvidia" --frobnicate
    [ "$status" -eq 2 ]
    check_with "$has_nvidia" nvidia runc
    [ "$status" -eq 2 ]
    run --separate-stderr "$GPUOP" containerd check --source node
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--source node needs --node NAME"* ]]
    run --separate-stderr "$GPUOP" containerd check -o yaml
    [ "$status" -eq 2 ]
    run "$GPUOP" containerd check --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"--source dump"* ]]
    [[ "$output" == *"--source node"* ]]
}

@test "check --source daemon: no socket, or a file that is no socket, cannot tell (exit 2)" {
    run --separate-stderr "$GPUOP" containerd check --source daemon --address "$tmp/none.sock"
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell (cannot connect to $tmp/none.sock: No such file or directory)" ]
    [ "${lines[1]}" = "source: auto (none of the witnesses could tell)" ]
    : >"$tmp/not-a-socket"
    run --separate-stderr env PATH=/nonexistent "$GPUOP" containerd check --source daemon \
        --address "$tmp/not-a-socket"
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell (cannot connect to $tmp/not-a-socket: Connection refused)" ]
}

# Saves the script for handler $1 (default nvidia) as $tmp/check.sh.
save_script() {
    "$GPUOP" containerd script "$@" >"$tmp/check.sh"
}

@test "script: exits 0 with nvidia in the dump, 1 without, for 1.x and 2.x dumps" {
    save_script
    run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$has_nvidia" sh "$tmp/check.sh"
    [ "$status" -eq 0 ]
    [ "$output" = "nvidia: found in containerd config dump" ]
    run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$refused" sh "$tmp/check.sh"
    [ "$status" -eq 0 ]
    run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$no_nvidia" sh "$tmp/check.sh"
    [ "$status" -eq 1 ]
    [ "$output" = "nvidia: NOT found in containerd config dump" ]
    run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$cases/2.1.5/k_noversion_v2names.toml" \
        sh "$tmp/check.sh"
    [ "$status" -eq 1 ]
}

@test "script: exits 2 when containerd is not on PATH or fails" {
    save_script
    run --separate-stderr env PATH="$tmp/empty" /bin/sh "$tmp/check.sh"
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"containerd not found on PATH"* ]]
    run --separate-stderr env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$has_nvidia" \
        GPUOP_STANDIN_EXIT=4 sh "$tmp/check.sh"
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"config dump failed"* ]]
}

@test "script: matches quoted names and names with dots exactly" {
    printf '%s\n' 'version = 3' \
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia.cdi']" \
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia-legacy]" \
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."kata"]' \
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]' >"$tmp/d.toml"
    for found in nvidia.cdi nvidia-legacy kata; do
        save_script "$found"
        run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$tmp/d.toml" sh "$tmp/check.sh"
        [ "$status" -eq 0 ]
    done
    # nvidia is not nvidia-legacy; runc's options table alone is not runc's
    # runtime table.
    for missing in nvidia runc; do
        save_script "$missing"
        run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$tmp/d.toml" sh "$tmp/check.sh"
        [ "$status" -eq 1 ]
    done
    # The dot is a dot, not any character.
    printf '%s\n' "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidiaXcdi']" \
        >"$tmp/x.toml"
    save_script nvidia.cdi
    run env PATH="$cli_standin_path" GPUOP_STANDIN_DUMP="$tmp/x.toml" sh "$tmp/check.sh"
    [ "$status" -eq 1 ]
}

@test "script: is clean under shellcheck -s sh and reads no config file" {
    command -v shellcheck >/dev/null || skip "shellcheck is not installed"
    for h in nvidia nvidia.cdi-x_1; do
        save_script "$h"
        shellcheck -s sh "$tmp/check.sh"
    done
    save_script
    run grep -E 'config\.toml|/etc/containerd|conf\.d|--config' "$tmp/check.sh"
    [ "$status" -eq 1 ]
    grep -q '^if ! dump=\$(containerd config dump); then$' "$tmp/check.sh"
    # Its header says what the dump proves, and what it does not.
    grep -qx '# What the dump proves: what a restart of containerd would load from the' "$tmp/check.sh"
    grep -qx '# files as they are now. What it does not: what the running daemon loaded.' "$tmp/check.sh"
}

@test "script: an invalid handler name is refused (exit 2), nothing printed" {
    for bad in 'a b' "x'y" '$(id)' 'a;b' '-'; do
        run --separate-stderr "$GPUOP" containerd script "$bad"
        [ "$status" -eq 2 ]
        [ -z "$output" ]
    done
    run --separate-stderr "$GPUOP" containerd script 'nv"idia'
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"not a runtime handler name"* ]]
}

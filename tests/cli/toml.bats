#!/usr/bin/env bats
# gpuop toml: the command-line contract (output, stderr, exit codes).
# Run by ctest with GPUOP (the binary), GPUOP_SRC and TOML_TEST_DIR set.

bats_require_minimum_version 1.5.0

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    : "${GPUOP_SRC:?set GPUOP_SRC to the source tree}"
    tmp=$(mktemp -d)
    main=$GPUOP_SRC/examples/incident/etc/containerd/config.toml
    dropin=$GPUOP_SRC/examples/incident/etc/containerd/conf.d/99-nvidia.toml
    cri='plugins."io.containerd.grpc.v1.cri"'
}

teardown() {
    rm -rf "$tmp"
}

@test "gpuop --help lists the toml command and exits 0" {
    run "$GPUOP" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"toml"* ]]
    [[ "$output" == *"Exit status"* ]]
}

@test "gpuop --version prints the version" {
    run "$GPUOP" --version
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^gpuop\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "no command and an unknown command are usage errors (exit 2)" {
    run "$GPUOP"
    [ "$status" -eq 2 ]
    run "$GPUOP" frobnicate
    [ "$status" -eq 2 ]
    [[ "$output" == *"unknown command 'frobnicate'"* ]]
}

@test "per-command help: gpuop toml --help and gpuop toml json --help" {
    run "$GPUOP" toml --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"gpuop toml check FILE"* ]]
    run "$GPUOP" toml json --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"--tagged"* ]]
}

@test "toml check: valid files print nothing and exit 0" {
    run "$GPUOP" toml check "$main" "$dropin"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "toml check: invalid TOML exits 1 with FILE:LINE:COL on stderr" {
    printf 'version = 2\n[plugins]\nx = 1\nx = 2\n' >"$tmp/bad.toml"
    run --separate-stderr "$GPUOP" toml check "$main" "$tmp/bad.toml"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "$tmp/bad.toml:4:1: duplicate key 'x' (first defined at line 3)" ]
}

@test "toml check: an unreadable file is 2, but an invalid one among them wins (1)" {
    run "$GPUOP" toml check "$tmp/missing.toml"
    [ "$status" -eq 2 ]
    [[ "$output" == *"$tmp/missing.toml: cannot open"* ]]
    printf 'a = \n' >"$tmp/bad.toml"
    run "$GPUOP" toml check "$tmp/missing.toml" "$tmp/bad.toml"
    [ "$status" -eq 1 ]
    run "$GPUOP" toml check "$tmp"
    [ "$status" -eq 2 ]
    [[ "$output" == *"is a directory"* ]]
}

@test "toml json reads standard input and names it in errors" {
    run bash -c "printf 'a = 1\nb = [' | '$GPUOP' toml json"
    [ "$status" -eq 1 ]
    [[ "$output" == "<stdin>:2:"* ]]
    run bash -c "printf 'a = 1\n' | '$GPUOP' toml json -"
    [ "$status" -eq 0 ]
    [ "$output" = '{"a":1}' ]
}

@test "toml json: plain JSON that python's json module reads back as the lab config" {
    run "$GPUOP" toml json "$main"
    [ "$status" -eq 0 ]
    echo "$output" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]
assert d["version"] == 2 and isinstance(d["version"], int)
assert c["default_runtime_name"] == "runc"
assert c["runtimes"]["runc"]["options"]["SystemdCgroup"] is True
'
}

@test "toml json --tagged writes the toml-test form" {
    run bash -c "printf 'x = 1.5\nd = 1979-05-27\n' | '$GPUOP' toml json --tagged"
    [ "$status" -eq 0 ]
    echo "$output" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["x"] == {"type": "float", "value": "1.5"}, d
assert d["d"] == {"type": "date-local", "value": "1979-05-27"}, d
'
}

@test "toml json: an unknown option is a usage error" {
    run "$GPUOP" toml json --frob "$main"
    [ "$status" -eq 2 ]
}

@test "toml get prints a string raw, the lab's default runtime" {
    run "$GPUOP" toml get "$main" "$cri.containerd.default_runtime_name"
    [ "$status" -eq 0 ]
    [ "$output" = "runc" ]
}

@test "toml get: whitespace around dots and literal quotes are TOML key syntax" {
    run "$GPUOP" toml get "$dropin" "plugins . 'io.containerd.grpc.v1.cri' . containerd.runtimes.nvidia.options.BinaryName"
    [ "$status" -eq 0 ]
    [ "$output" = "/usr/bin/nvidia-container-runtime" ]
}

@test "toml get prints a table as TOML that parses back to the same value" {
    run --separate-stderr "$GPUOP" toml get "$main" "$cri.containerd.runtimes.runc"
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" >"$tmp/runc.toml"
    run "$GPUOP" toml get "$tmp/runc.toml" options.SystemdCgroup
    [ "$output" = "true" ]
    run "$GPUOP" toml get "$tmp/runc.toml" runtime_type
    [ "$output" = "io.containerd.runc.v2" ]
}

@test "toml get --json prints JSON; scalars print in TOML form" {
    run "$GPUOP" toml get --json "$main" imports
    [ "$status" -eq 0 ]
    [ "$output" = '["/etc/containerd/conf.d/*.toml"]' ]
    run "$GPUOP" toml get "$main" version
    [ "$output" = "2" ]
}

@test "toml get: an absent key exits 1, a malformed key 2" {
    run "$GPUOP" toml get "$main" "$cri.containerd.runtimes.nvidia"
    [ "$status" -eq 1 ]
    [[ "$output" == *"not found"* ]]
    run "$GPUOP" toml get "$main" 'plugins."unterminated'
    [ "$status" -eq 2 ]
    [[ "$output" == *"invalid key"* ]]
    run "$GPUOP" toml get "$main"
    [ "$status" -eq 2 ]
}

@test "toml keys lists each key with the file, line and column that defined it" {
    run "$GPUOP" toml keys "$dropin"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "$dropin:1:1"$'\t'"[$cri.containerd.runtimes.nvidia]" ]]
    [[ "${lines[3]}" == "$dropin:4:5"$'\t'"$cri.containerd.runtimes.nvidia.options.BinaryName = \"/usr/bin/nvidia-container-runtime\"" ]]
}

@test "bad bytes never crash the parser: random inputs exit 0 or 1" {
    for i in $(seq 1 200); do
        head -c $((RANDOM % 300)) /dev/urandom >"$tmp/r.toml"
        run "$GPUOP" toml check "$tmp/r.toml"
        [ "$status" -eq 0 ] || [ "$status" -eq 1 ]
    done
}

@test "messages follow the locale: Korean and Japanese, parse errors included" {
    # gettext ignores LANGUAGE in the plain C locale; C.UTF-8 is always there.
    run env LANG=C.UTF-8 LANGUAGE=ko "$GPUOP" frobnicate
    [ "$status" -eq 2 ]
    [[ "$output" == *"frobnicate"* ]]
    [[ "$output" != *"unknown command"* ]]
    run env LANG=C.UTF-8 LANGUAGE=ja "$GPUOP" frobnicate
    [[ "$output" == *"frobnicate"* ]]
    [[ "$output" != *"unknown command"* ]]
    printf 'a = 1\na = 2\n' >"$tmp/dup.toml"
    run env LANG=C.UTF-8 LANGUAGE=ko "$GPUOP" toml check "$tmp/dup.toml"
    [ "$status" -eq 1 ]
    [[ "$output" == "$tmp/dup.toml:2:1: "* ]]
    [[ "$output" != *"duplicate key"* ]]
    run env LANG=C.UTF-8 "$GPUOP" toml check "$tmp/dup.toml"
    [[ "$output" == *"duplicate key"* ]]
}

@test "docs stay true: each command has a man page naming its subcommands" {
    run "$GPUOP" --help
    commands=$(printf '%s\n' "$output" | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} /^$/{on=0}')
    [ -n "$commands" ]
    for c in $commands; do
        page=$GPUOP_SRC/docs/gpuop-$c.1
        [ -f "$page" ]
        grep -q "^\.BR gpuop-$c (1)" "$GPUOP_SRC/docs/gpuop.1"
        run "$GPUOP" "$c" --help
        # Subcommands are lowercase words; options and PLACEHOLDERS are not.
        for sub in $(printf '%s\n' "$output" | awk '/^Usage:/{print $4; next} /^       gpuop/{print $3}' |
            grep -E '^[a-z][a-z-]*$'); do
            grep -q "^\.B gpuop $c $sub" "$page"
        done
    done
}

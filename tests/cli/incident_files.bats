#!/usr/bin/env bats
# examples/incident/ is the one copy of the incident's files: the dumps there
# are containerd's recorded output, and the lab writes exactly those bytes
# (they are compiled in). Run by ctest with GPUOP, GPUOP_SRC and
# TOML_TEST_DIR (the shared folder's toml-test, beside containerd-cases).

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    : "${GPUOP_SRC:?set GPUOP_SRC to the source tree}"
    : "${TOML_TEST_DIR:?set TOML_TEST_DIR to the shared toml-test folder}"
    incident=$GPUOP_SRC/examples/incident
    cases=$TOML_TEST_DIR/../containerd-cases/1.6.20
    tmp=$(mktemp -d)
    root=$tmp/gpuop
    "$GPUOP" lab init --root "$root" >/dev/null
}

teardown() {
    rm -rf "$tmp"
}

@test "the incident node's dump is containerd 1.6.20's, recorded (case h3, drop-in not loaded)" {
    [ -f "$cases/h3_v2main_v3dropin.toml" ]
    sed -e '2s|.*|imports = ["/etc/containerd/config.toml"]|' \
        -e 's|<dir>|/etc/containerd|g' "$cases/h3_v2main_v3dropin.toml" >"$tmp/want"
    cmp "$tmp/want" "$incident/evidence/containerd-config-dump.toml"
}

@test "the nvidia dump is containerd 1.6.20's of exactly etc/containerd (case lab)" {
    [ -f "$cases/lab.toml" ]
    sed -e 's|<dir>|/etc/containerd|g' "$cases/lab.toml" >"$tmp/want"
    cmp "$tmp/want" "$incident/evidence/containerd-config-dump-nvidia.toml"
    # and case lab's inputs are these two files
    inputs=$TOML_TEST_DIR/../containerd-cases/inputs/lab
    sed -e 's|<dir>|/etc/containerd|g' "$inputs/config.toml" | cmp - "$incident/etc/containerd/config.toml"
    cmp "$inputs/conf.d/99-nvidia.toml" "$incident/etc/containerd/conf.d/99-nvidia.toml"
}

@test "lab init ships the incident's dump byte for byte" {
    cmp "$incident/evidence/containerd-config-dump.toml" \
        "$root/evidence/containerd-config-dump.toml"
}

@test "lab solve 2 writes the incident's drop-in byte for byte" {
    "$GPUOP" lab solve 2 --root "$root" >/dev/null
    cmp "$incident/etc/containerd/conf.d/99-nvidia.toml" \
        "$root/etc/containerd/conf.d/99-nvidia.toml"
}

@test "lab solve 1 writes the incident's main config, only its imports pointed at the workspace" {
    "$GPUOP" lab solve 1 --root "$root" >/dev/null
    run diff "$incident/etc/containerd/config.toml" "$root/etc/containerd/config.toml"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "2c2" ]
    [ "${lines[1]}" = '< imports = ["/etc/containerd/conf.d/*.toml"]' ]
    [ "${lines[3]}" = "> imports = [\"$root/etc/containerd/conf.d/*.toml\"]" ]
    [ "${#lines[@]}" -eq 4 ]
}

@test "the nvidia-cdi dump is containerd 1.6.20's, recorded again by its script" {
    command -v containerd >/dev/null || skip "no containerd installed"
    case "$(containerd --version)" in *" 1.6.20"*) ;; *) skip "not containerd 1.6.20" ;; esac
    "$incident/record-dump-nvidia-cdi.sh" containerd "$tmp/cdi.toml" >/dev/null
    cmp "$tmp/cdi.toml" "$incident/evidence/containerd-config-dump-nvidia-cdi.toml"
}

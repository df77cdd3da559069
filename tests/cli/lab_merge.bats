#!/usr/bin/env bats
# The lab's step 3 answer is `gpuop containerd merge -o lab`'s output: the
# solver renders out/merge.txt with the command's own renderer, so the two
# cannot drift apart (test_lab_files.c checks it for a learner's own files).
# Run by ctest with GPUOP and GPUOP_SRC set.

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    tmp=$(mktemp -d)
    root=$tmp/gpuop
    "$GPUOP" lab init --root "$root" >/dev/null
}

teardown() {
    rm -rf "$tmp"
}

# What the command prints for the workspace: containerd 1.7's rules, as the
# lab judges (grade_files.h says why), and the workspace's evidence.
merge_lab() {
    "$GPUOP" containerd merge --config "$root/etc/containerd/config.toml" --root "$root" \
        --containerd 1.7 -o lab --observed "$root/evidence/containerd-config-dump.toml"
}

@test "lab solve 3 writes what containerd merge -o lab prints for the solver's files" {
    "$GPUOP" lab solve 3 --root "$root" >/dev/null
    run merge_lab
    [ "$status" -eq 1 ] # the incident's files do not hold: the CRI plugin loses runc
    [ "$output" = "$(cat "$root/out/merge.txt")" ]
    [ "${lines[0]}" = "MAIN_RUNTIMES=runc" ]
    [ "${lines[4]}" = "LOADED_RUNTIMES=runc" ]
}

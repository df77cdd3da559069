#!/usr/bin/env bats
# Strategic merge patch (src/kube/smp.c) against the real kubectl: the cases
# in tests/data/smp/ and a batch of generated patches, through
# tests/cli/smp_vs_kubectl.py. kubectl runs as `kubectl patch --local` with
# no kubeconfig (KUBECONFIG=/dev/null) and HOME in a temporary folder, so it
# needs no server and touches nothing of the user's.
#
# The driver is the unit test program test_kube_smp in its --apply mode:
# SMP_TEST_BIN names it, or it is found as tests/test_kube_smp beside the
# gpuop binary that GPUOP names (the build folder's layout).

bats_require_minimum_version 1.5.0

setup() {
    src=${GPUOP_SRC:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
    bin=${SMP_TEST_BIN:-}
    if [ -z "$bin" ]; then
        : "${GPUOP:?set SMP_TEST_BIN to test_kube_smp, or GPUOP to the gpuop binary}"
        bin=$(dirname "$GPUOP")/tests/test_kube_smp
    fi
    [ -x "$bin" ] || {
        echo "test_kube_smp not found at $bin; build it or set SMP_TEST_BIN" >&2
        return 1
    }
}

@test "strategic merge patch: every recorded case agrees with kubectl" {
    run python3 "$src/tests/cli/smp_vs_kubectl.py" "$bin" "$src/tests/data/smp"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *" passed, 0 failed" ]]
}

@test "strategic merge patch: generated patches agree with kubectl live" {
    command -v kubectl >/dev/null || skip "kubectl is not installed"
    run python3 "$src/tests/cli/smp_vs_kubectl.py" "$bin" - --random 150 --seed 20250620
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"ok - random: 150 of 150"* ]]
}

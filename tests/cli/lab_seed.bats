#!/usr/bin/env bats
# A lab drawn with --seed: other numbers, the same story, and answers
# copied from the seeds' lab (lab.md's literal values) fail.

setup_file() {
    export SEED_TMP
    SEED_TMP=$(mktemp -d)
    export HOME="$SEED_TMP/home" KUBECONFIG="$SEED_TMP/kubeconfig" ROOT="$SEED_TMP/gpuop"
    mkdir -p "$HOME"
    "$GPUOP" lab init --root "$ROOT" --seed 7 >/dev/null
    "$GPUOP" lab up --root "$ROOT" --data "$SEED_TMP/data" >/dev/null
}

teardown_file() {
    "$GPUOP" lab down --root "$ROOT" >/dev/null 2>&1 || true
    rm -rf "$SEED_TMP"
}

# A number of the lab's from `lab check -o json`-independent places: the
# params file the workspace keeps.
param() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$ROOT/.gpuop-lab.json" "$1"; }

@test "the seed's numbers differ from the incident's and reach the tasks and the nodes" {
    gpus=$(param gpus_per_node)
    replicas=$(param replicas)
    mem=$(param node_memory_gib)
    req=$(param ds_request_gib)
    [ "$gpus.$replicas.$mem" != "4.5.32" ]
    [ "$req" -gt "$mem" ]
    run "$GPUOP" lab steps 7 --root "$ROOT"
    [[ "$output" == *"replicas: $replicas"* ]]
    [ "$(kubectl get node lab-node-0 -o jsonpath='{.status.allocatable.memory}')" = "${mem}Gi" ]
}

@test "the reference solution passes every step of the seeded lab" {
    run "$GPUOP" lab solve --root "$ROOT"
    [ "$status" -eq 0 ]
    run "$GPUOP" lab check --root "$ROOT"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(sed -n 3p "$ROOT/out/slots.txt")" = "ADVERTISED=$(($(param gpus_per_node) * $(param replicas)))" ]
}

@test "answers copied from the incident's lab fail where the numbers differ" {
    printf 'PHYSICAL_GPUS=4\nREPLICAS=5\nADVERTISED=20\nVRAM_PER_GPU_GIB=40\nVRAM_GUARANTEED_PER_SLOT_GIB=0\nVRAM_SHARED_PER_GPU_GIB=40\nISOLATION=none\n' >"$ROOT/out/slots.txt"
    printf 'NAME         GPU\nlab-node-0   4\nlab-node-1   <none>\nlab-node-2   <none>\n' >"$ROOT/out/node-gpu.txt"
    run "$GPUOP" lab check 7 --root "$ROOT" -o json
    [ "$status" -eq 1 ]
    echo "$output" | python3 -c 'import json,sys
failed = {c["code"] for c in json.load(sys.stdin)["steps"][0]["conditions"] if not c["passed"]}
assert {"out.slots.physical_gpus", "out.slots.replicas", "out.slots.advertised"} <= failed, failed'
    run "$GPUOP" lab check 6 --root "$ROOT"
    [ "$status" -eq 1 ]
    [[ "$output" == *out.node_gpu.lab-node-0* ]]
}

@test "reset keeps the seed" {
    run "$GPUOP" lab reset --root "$ROOT"
    [ "$status" -eq 0 ]
    [ "$(param seed)" = 7 ]
    run "$GPUOP" lab init --root "$ROOT" --seed 8
    [ "$status" -eq 2 ]
}

#!/usr/bin/env bats
# gpuop lab end to end with the real kubectl: init, up, check, solve, the
# grader's verdicts on known-bad answers, reset and down, in a temporary
# root, HOME and kubeconfig (../shared/design/lab.md).

setup_file() {
    export LAB_TMP
    LAB_TMP=$(mktemp -d)
    export HOME="$LAB_TMP/home" KUBECONFIG="$LAB_TMP/kubeconfig" ROOT="$LAB_TMP/gpuop"
    mkdir -p "$HOME"
    "$GPUOP" lab init --root "$ROOT" >/dev/null
    "$GPUOP" lab up --root "$ROOT" --data "$LAB_TMP/data" >/dev/null
}

teardown_file() {
    "$GPUOP" lab down --root "$ROOT" >/dev/null 2>&1 || true
    "$GPUOP" cluster down --data "$LAB_TMP/data" >/dev/null 2>&1 || true
    rm -rf "$LAB_TMP"
}

# The condition `code` of step N in `gpuop lab check N -o json`: "true"/"false".
condition() {
    "$GPUOP" lab check "$1" --root "$ROOT" -o json |
        python3 -c 'import json,sys
doc = json.load(sys.stdin)
for c in doc["steps"][0]["conditions"]:
    if c["code"] == sys.argv[1]:
        print("true" if c["passed"] else "false"); break
else:
    print("absent")' "$2"
}

# Replaces KEY's line in an output file, keeping a copy to restore.
spoil() { cp "$1" "$1.good"; sed -i "s|^$2=.*|$2=$3|" "$1"; }
restore() { mv "$1.good" "$1"; }

@test "a fresh lab: every step fails, each condition says where, what and why" {
    run "$GPUOP" lab check --root "$ROOT" -o json
    [ "$status" -eq 1 ]
    echo "$output" | python3 -c 'import json,sys
doc = json.load(sys.stdin)
assert doc["total"] == 8 and doc["passed"] == 0, doc
for s in doc["steps"]:
    assert s["passed"] is False and s["conditions"], s
    for c in s["conditions"]:
        assert set(c) >= {"code", "passed", "where", "expected", "observed", "hint"}, c
        assert c["where"], c'
    run "$GPUOP" lab check --root "$ROOT"
    [ "$status" -eq 1 ]
    [[ "$output" == *"Result: 0/8 steps passed"* ]]
}

@test "the lab's cluster is what lab.md sets: three Ready nodes, no GPUs, gpu-operator" {
    run kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu,MEM:.status.allocatable.memory --no-headers
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "lab-node-0   <none>   32Gi" ]
    [ "${#lines[@]}" -eq 3 ]
    kubectl wait --for=condition=Ready node --all --timeout=30s
    kubectl get ns gpu-operator
    run kubectl get ns gpu-lab
    [ "$status" -ne 0 ]
}

@test "solve 4 passes the file steps and leaves the cluster steps failing" {
    run "$GPUOP" lab solve 4 --root "$ROOT"
    [ "$status" -eq 0 ]
    run "$GPUOP" lab check --root "$ROOT" -o json
    [ "$status" -eq 1 ]
    echo "$output" | python3 -c 'import json,sys
doc = json.load(sys.stdin)
passed = [s["step"] for s in doc["steps"] if s["passed"]]
assert passed == [1, 2, 3, 4], passed'
}

@test "solve repairs what cannot be patched: a wrong RuntimeClass handler, a wrong pod" {
    kubectl create namespace gpu-lab >/dev/null
    kubectl apply -f - >/dev/null <<'YAML'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: runc
---
apiVersion: v1
kind: Pod
metadata:
  name: cuda-probe
  namespace: gpu-lab
spec:
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: 2
YAML
    run "$GPUOP" lab solve 5 --root "$ROOT"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(kubectl get runtimeclass nvidia -o jsonpath='{.handler}')" = nvidia ]
    [ "$(kubectl get pod -n gpu-lab cuda-probe -o jsonpath='{.spec.runtimeClassName} {.spec.containers[0].resources.limits.nvidia\.com/gpu}')" = "nvidia 1" ]
    run "$GPUOP" lab check 5 --root "$ROOT"
    [ "$status" -eq 0 ]
}

@test "bad roots: empty is refused, a trailing slash is the same workspace, a non-UTF-8 one cannot crash -o json" {
    run "$GPUOP" lab status --root ""
    [ "$status" -eq 2 ]
    run "$GPUOP" lab status --root "$ROOT/"
    # steps 6-8 are not done yet: status says so with 1
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "Workspace: $ROOT (seed 0)" ]]
    bad=$LAB_TMP/$'w\xff'
    "$GPUOP" lab init --root "$bad" >/dev/null
    run "$GPUOP" lab check 1 --root "$bad" -o json
    [ "$status" -eq 2 ]
    [[ "$output" == *"UTF-8"* ]]
}

@test "solve 8 ends with 8/8 and the states kubectl shows" {
    run "$GPUOP" lab solve --root "$ROOT"
    echo "$output"
    [ "$status" -eq 0 ]
    run "$GPUOP" lab check --root "$ROOT"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"Result: 8/8 steps passed"* ]]
    [ "$(kubectl get pod -n gpu-lab cuda-probe -o jsonpath='{.spec.nodeName} {.status.phase}')" = "lab-node-0 Running" ]
    # The unscheduled verdict is the scheduler's own, word for word.
    kubectl get events -n gpu-lab --field-selector reason=FailedScheduling -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' >"$LAB_TMP/msg"
    grep -qxF "$(sed -n 2p "$ROOT/out/unscheduled.txt")" "$LAB_TMP/msg"
    # The node table is what kubectl shows.
    diff <(kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu | tr -s ' ') \
         <(tr -s ' ' <"$ROOT/out/node-gpu.txt") ||
        [ "$(sed -n 3p "$ROOT/out/node-gpu.txt" | tr -s ' ')" = "lab-node-1 <none>" ]
    # The rollout stopped where lab.md says.
    run timeout 5 kubectl rollout status ds/nvidia-container-toolkit -n gpu-operator --watch=false
    [[ "$output" == *"1 out of 3 new pods have been updated"* ]]
    [ "$(cat "$ROOT/out/rollout.txt")" = "$(printf 'DESIRED=3\nUPDATED=1\nREADY=2\nOLD_IMAGE_PODS=2\nMAX_UNAVAILABLE=1\nBLOCKER=insufficient-memory')" ]
    [ "$(cat "$ROOT/out/slots.txt")" = "$(printf 'PHYSICAL_GPUS=4\nREPLICAS=5\nADVERTISED=20\nVRAM_PER_GPU_GIB=40\nVRAM_GUARANTEED_PER_SLOT_GIB=0\nVRAM_SHARED_PER_GPU_GIB=40\nISOLATION=none')" ]
}

@test "known-bad answers fail with the right condition" {
    [ "$(condition 5 out.unscheduled.message)" = true ]
    cp "$ROOT/out/unscheduled.txt" "$ROOT/out/unscheduled.txt.good"
    printf 'Unschedulable\n0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n' >"$ROOT/out/unscheduled.txt"
    [ "$(condition 5 out.unscheduled.message)" = false ]
    restore "$ROOT/out/unscheduled.txt"

    spoil "$ROOT/out/slots.txt" VRAM_GUARANTEED_PER_SLOT_GIB 40
    [ "$(condition 7 out.slots.vram_guaranteed)" = false ]
    restore "$ROOT/out/slots.txt"
    spoil "$ROOT/out/slots.txt" ADVERTISED 16
    [ "$(condition 7 out.slots.advertised)" = false ]
    [ "$(condition 7 out.slots.arithmetic)" = false ]
    restore "$ROOT/out/slots.txt"

    # rollout.txt copied from another lab (another seed's numbers).
    cp "$ROOT/out/rollout.txt" "$ROOT/out/rollout.txt.good"
    printf 'DESIRED=5\nUPDATED=1\nREADY=4\nOLD_IMAGE_PODS=4\nMAX_UNAVAILABLE=1\nBLOCKER=insufficient-memory\n' >"$ROOT/out/rollout.txt"
    [ "$(condition 8 out.rollout.desired)" = false ]
    [ "$(condition 8 out.rollout.ready)" = false ]
    restore "$ROOT/out/rollout.txt"
    spoil "$ROOT/out/rollout.txt" BLOCKER insufficient-cpu
    [ "$(condition 8 out.rollout.blocker)" = false ]
    restore "$ROOT/out/rollout.txt"

    cp "$ROOT/out/node-gpu.txt" "$ROOT/out/node-gpu.txt.good"
    sed -i 's/^lab-node-0 .*/lab-node-0   8/' "$ROOT/out/node-gpu.txt"
    [ "$(condition 6 out.node_gpu.lab-node-0)" = false ]
    restore "$ROOT/out/node-gpu.txt"
    run "$GPUOP" lab check --root "$ROOT"
    [ "$status" -eq 0 ]
}

@test "a grader of one step never needs a later step; a later step keeps an earlier pass" {
    # Step 5 is judged by the scheduler's record: it passes while the pod runs.
    [ "$(kubectl get pod -n gpu-lab cuda-probe -o jsonpath='{.status.phase}')" = Running ]
    run "$GPUOP" lab check 5 --root "$ROOT"
    [ "$status" -eq 0 ]
}

@test "check speaks Korean and Japanese, English by default, with only C.UTF-8 installed" {
    cp "$ROOT/out/slots.txt" "$ROOT/out/slots.txt.good"
    sed -i 's/^ISOLATION=.*/ISOLATION=hardware/' "$ROOT/out/slots.txt"
    run env LANG=ko_KR.UTF-8 "$GPUOP" lab check 7 --root "$ROOT"
    [ "$status" -eq 1 ]
    ko=$output
    run env LANG=ja_JP.UTF-8 "$GPUOP" lab check 7 --root "$ROOT"
    ja=$output
    run env LANG=C.UTF-8 "$GPUOP" lab check 7 --root "$ROOT"
    en=$output
    restore "$ROOT/out/slots.txt"
    [[ "$en" == *"expected: ISOLATION=none"* ]]
    # Hangul and kana, from the catalogues, and the same condition code.
    python3 -c 'import sys; assert any("\uac00" <= ch <= "\ud7a3" for ch in sys.argv[1]), sys.argv[1]' "$ko"
    python3 -c 'import sys; assert any("\u3040" <= ch <= "\u30ff" for ch in sys.argv[1]), sys.argv[1]' "$ja"
    # The step title and the hint come from the catalogues, not only the frame.
    [ "$(echo "$ko" | head -1)" != "$(echo "$en" | head -1)" ]
    [ "$(echo "$ja" | grep -c hint)" -eq 0 ]
    [[ "$ko" == *out.slots.isolation* && "$ja" == *out.slots.isolation* ]]
    # The task texts and the status too.
    for lang in ko_KR.UTF-8 ja_JP.UTF-8; do
        run env LANG=$lang "$GPUOP" lab steps 5 --root "$ROOT"
        [ "$status" -eq 0 ]
        python3 -c 'import sys; assert sum(ord(ch) > 0x3000 for ch in sys.argv[1]) > 20, sys.argv[1]' "$output"
        [[ "$output" == *cuda-probe* ]]
        run env LANG=$lang "$GPUOP" lab status --root "$ROOT"
        [ "$status" -eq 0 ]
        python3 -c 'import sys; assert sum(ord(ch) > 0x3000 for ch in sys.argv[1]) > 20, sys.argv[1]' "$output"
    done
}

@test "the cluster steps' check, in text, JSON and JUnit, and status leave no English in ko or ja" {
    # a mistake in every cluster step, so that each prints what it found and a hint
    for f in unscheduled.txt node-gpu.txt slots.txt rollout.txt; do cp "$ROOT/out/$f" "$ROOT/out/$f.good"; done
    printf 'Pending\n0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n' >"$ROOT/out/unscheduled.txt"
    printf 'lab-node-0,4\nlab-node-1,\nlab-node-2,\n' >"$ROOT/out/node-gpu.txt"
    sed -i 's/^ISOLATION=.*/ISOLATION=hardware/; s/^VRAM_GUARANTEED_PER_SLOT_GIB=.*/VRAM_GUARANTEED_PER_SLOT_GIB=8/' "$ROOT/out/slots.txt"
    sed -i 's/^BLOCKER=.*/BLOCKER=insufficient-cpu/' "$ROOT/out/rollout.txt"
    for lang in ko_KR.UTF-8 ja_JP.UTF-8; do
        short=${lang%%_*}
        for o in text json junit; do
            env LANG=$lang "$GPUOP" lab check --root "$ROOT" -o $o >"$LAB_TMP/$o.$short" || true
        done
        env LANG=$lang "$GPUOP" lab status --root "$ROOT" >>"$LAB_TMP/text.$short" || true
        env LANG=$lang "$GPUOP" lab steps --root "$ROOT" >>"$LAB_TMP/text.$short"
    done
    for f in unscheduled.txt node-gpu.txt slots.txt rollout.txt; do restore "$ROOT/out/$f"; done
    for short in ko ja; do
        for o in text json junit; do
            run python3 "$GPUOP_SRC/tests/cli/untranslated.py" $o "$short" <"$LAB_TMP/$o.$short"
            echo "$output"
            [ "$status" -eq 0 ]
        done
    done
    cp "$LAB_TMP/text.ko" "$LAB_TMP/out.ko"
    # every failed condition printed its hint, in the language asked for
    [ "$(grep -c '힌트:' "$LAB_TMP/out.ko")" -ge 6 ]
}

@test "junit output is well-formed and counts the failures" {
    cp "$ROOT/out/slots.txt" "$ROOT/out/slots.txt.good"
    sed -i 's/^ISOLATION=.*/ISOLATION=hardware/' "$ROOT/out/slots.txt"
    run "$GPUOP" lab check --root "$ROOT" -o junit
    restore "$ROOT/out/slots.txt"
    [ "$status" -eq 1 ]
    echo "$output" | python3 -c 'import sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
assert root.tag == "testsuites" and root.get("failures") == "1", root.attrib
fails = [tc.get("name") for tc in root.iter("testcase") if tc.find("failure") is not None]
assert fails == ["out.slots.isolation"], fails'
}

@test "reset removes the lab's objects, restores the nodes and keeps the old workspace" {
    run "$GPUOP" lab reset --root "$ROOT"
    [ "$status" -eq 0 ]
    backup=$(ls -d "$ROOT".backup-*)
    [ -f "$backup/out/rollout.txt" ]
    [ ! -e "$ROOT/out/rollout.txt" ]
    [ -f "$ROOT/evidence/containerd-config-dump.toml" ]
    run kubectl get ns gpu-lab
    [ "$status" -ne 0 ]
    run kubectl get ds -n gpu-operator
    [[ "$output" != *nvidia-container-toolkit* ]]
    [ -z "$(kubectl get nodes -o jsonpath='{.items[*].status.allocatable.nvidia\.com/gpu}')" ]
    run "$GPUOP" lab check --root "$ROOT" -o json
    [ "$status" -eq 1 ]
    [ "$(echo "$output" | python3 -c 'import json,sys; print(json.load(sys.stdin)["passed"])')" = 0 ]
}

@test "down stops the cluster; status says stopped, check then cannot tell and says why" {
    run "$GPUOP" lab down --root "$ROOT"
    [ "$status" -eq 0 ]
    run "$GPUOP" lab status --root "$ROOT"
    [ "$status" -eq 1 ]
    [[ "$output" == *"Cluster:   stopped (embedded, data in "*"'gpuop lab up' starts it again"* ]]
    [[ "$output" != *"none yet"* ]]
    run "$GPUOP" lab check 6 --root "$ROOT"
    [ "$status" -eq 2 ]
    [[ "$output" == *"is stopped ('gpuop lab down'); 'gpuop lab up' starts it again"* ]]
    run "$GPUOP" lab check 1 --root "$ROOT"
    [ "$status" -eq 1 ]
    run "$GPUOP" lab down --root "$ROOT"
    [ "$status" -eq 0 ]
    [[ "$output" == *"already stopped"* ]]
}

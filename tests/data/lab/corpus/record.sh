#!/usr/bin/env bash
# Records the cluster states the corpus' steps 5-8 cases are graded against
# (recorded/NAME/snapshot.json, by snapshot.py through the real kubectl) and
# the workspace files of each state (recorded/NAME/ws/): gpuop's embedded
# control plane, driven by gpuop's solver and by the kubectl commands a
# learner types. Temporary HOME, KUBECONFIG and workspace; nothing of the
# user's is read or written.
#
# Usage: GPUOP=build/gpuop tests/data/lab/corpus/record.sh
set -euo pipefail
: "${GPUOP:?set GPUOP to the gpuop binary}"
GPUOP=$(realpath "$GPUOP")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
export HOME=$tmp/home KUBECONFIG=$tmp/kubeconfig
R=$tmp/gpuop
mkdir -p "$HOME"
cleanup() {
    "$GPUOP" lab down --root "$R" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

k() { kubectl --request-timeout=20s "$@"; }
ds=(-n gpu-operator daemonset/nvidia-container-toolkit)
image=nvcr.io/nvidia/k8s/container-toolkit
ctr=nvidia-container-toolkit-ctr

record() {
    local dir=$here/recorded/$1
    rm -rf "$dir"
    mkdir -p "$dir/ws"
    python3 "$here/snapshot.py" >"$dir/snapshot.json"
    cp -r "$R/k8s" "$R/out" "$dir/ws/"
    find "$dir/ws" -name '*.gpuop-backup-*' -delete
    echo "recorded $1"
}

# Waits (up to 60 s) until `k ARGS` prints WANT.
until_k() {
    local want=$1
    shift
    for _ in $(seq 1 300); do
        [ "$(k "$@" 2>/dev/null)" = "$want" ] && return 0
        sleep 0.2
    done
    echo "gave up waiting for '$want' from: kubectl $*" >&2
    exit 1
}

rolled_out() { until_k "3 3 3" get "${ds[@]}" -o jsonpath='{.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberReady}'; }
stalled() { until_k "3 1 2" get "${ds[@]}" -o jsonpath='{.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberReady}'; }

# The DaemonSet gone with its pods and revisions, then its first version
# rolled out from the learner's manifest.
fresh_daemonset() {
    k delete "${ds[@]}" --ignore-not-found --wait=true >/dev/null
    until_k "" get pods,controllerrevisions -n gpu-operator -o name
    k apply -f "$R/k8s/toolkit-ds.yaml" >/dev/null
    rolled_out
}

old_manifest() {
    sed -e "s|image: .*|image: $image:v1.16.2|" -e 's|memory: .*|memory: 128Mi|' "$1"
}

"$GPUOP" lab init --root "$R" >/dev/null
"$GPUOP" lab up --root "$R" --data "$tmp/data" >/dev/null
for step in 5 6 7 8; do
    "$GPUOP" lab solve "$step" --root "$R" >/dev/null
    record "step$step"
done

# The learner's files from here on: the first version's manifest.
old_manifest "$R/k8s/toolkit-ds.yaml" >"$tmp/old.yaml"
cp "$tmp/old.yaml" "$R/k8s/toolkit-ds.yaml"
rollout() { "$GPUOP" rollout gpu-operator/nvidia-container-toolkit -o lab >"$R/out/rollout.txt" || true; }

# Issue 17's false pass: the image first, rolled out, then the request.
fresh_daemonset
k set image "${ds[@]}" "$ctr=$image:v1.17.0" >/dev/null
rolled_out
k set resources "${ds[@]}" --requests=memory=64Gi >/dev/null
stalled
rollout
# The issue's learner read the pods' images: none has the old one any more.
sed -i 's/^OLD_IMAGE_PODS=.*/OLD_IMAGE_PODS=0/' "$R/out/rollout.txt"
record step8-image-then-memory

# The other order: the request first (the rollout stalls), then the image.
fresh_daemonset
k set resources "${ds[@]}" --requests=memory=64Gi >/dev/null
stalled
k set image "${ds[@]}" "$ctr=$image:v1.17.0" >/dev/null
until_k "3 1 2 3" get "${ds[@]}" -o jsonpath='{.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberReady} {.status.observedGeneration}'
sleep 2
rollout
record step8-memory-then-image

# Only the image: the rollout completes, nothing stalls.
fresh_daemonset
k set image "${ds[@]}" "$ctr=$image:v1.17.0" >/dev/null
rolled_out
rollout
record step8-image-only

# A half update undone, then both in one change: the last change from the
# first version to the new one is a single update.
fresh_daemonset
k set image "${ds[@]}" "$ctr=$image:v1.17.0" >/dev/null
rolled_out
k rollout undo "${ds[@]}" >/dev/null
until_k "$image:v1.16.2 3" get "${ds[@]}" -o jsonpath='{.spec.template.spec.containers[0].image} {.status.updatedNumberScheduled}'
rolled_out
k set image "${ds[@]}" "$ctr=$image:v1.17.0" --dry-run=client -o yaml |
    sed 's|memory: 128Mi|memory: 64Gi|' | k apply -f - >/dev/null
stalled
sed -e "s|image: .*|image: $image:v1.17.0|" -e 's|memory: .*|memory: 64Gi|' "$tmp/old.yaml" >"$R/k8s/toolkit-ds.yaml"
rollout
record step8-undone-then-both

# Created with the new version straight away: nothing rolled out before.
k delete "${ds[@]}" --ignore-not-found --wait=true >/dev/null
until_k "" get pods,controllerrevisions -n gpu-operator -o name
k apply -f "$R/k8s/toolkit-ds.yaml" >/dev/null
until_k "3" get "${ds[@]}" -o jsonpath='{.status.desiredNumberScheduled}'
sleep 2
rollout
record step8-new-only

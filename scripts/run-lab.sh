#!/usr/bin/env bash
# make run: the GPU incident lab end to end on this machine. Starts the
# embedded control plane, solves the eight steps with gpuop's own field
# tools, grades them, and leaves everything up for the learner.
#   scripts/run-lab.sh [GPUOP]      GPUOP_LAB_ROOT=DIR chooses the workspace
set -euo pipefail
gpuop=${1:-build/gpuop}
# The lab's default workspace is ~/gpuop, which is also where many would
# clone gpuop itself: the lab refuses a folder it did not make, so make run
# would stop there. A source tree at (or under) ~/gpuop gets ~/gpuop-lab.
if [ -z "${GPUOP_LAB_ROOT:-}" ] && [ -n "${HOME:-}" ] && [ -d "$HOME/gpuop" ]; then
    here=$(pwd -P)
    default=$(cd "$HOME/gpuop" && pwd -P)
    case $here/ in
    "$default"/*)
        GPUOP_LAB_ROOT=$HOME/gpuop-lab
        echo "make run: $HOME/gpuop holds gpuop's source; the lab's workspace is $GPUOP_LAB_ROOT"
        ;;
    esac
fi
args=()
[ -n "${GPUOP_LAB_ROOT:-}" ] && args=(--root "$GPUOP_LAB_ROOT")

"$gpuop" lab init "${args[@]}"
"$gpuop" lab up "${args[@]}"
echo
"$gpuop" lab solve "${args[@]}"
echo
status=0
"$gpuop" lab check "${args[@]}" || status=$?
echo
kubectl_line="kubectl get nodes; kubectl describe pod -n gpu-lab cuda-probe"
command -v kubectl >/dev/null 2>&1 ||
    kubectl_line="(kubectl is not installed; the current context 'gpuop' in ~/.kube/config is ready for it)"
root_arg=${GPUOP_LAB_ROOT:+ --root $GPUOP_LAB_ROOT}
cat <<EOF
The lab is up and solved; the cluster keeps running.
  $kubectl_line
  $gpuop lab steps$root_arg            the eight tasks
  $gpuop lab check 5$root_arg          grade one step (-o json, -o junit)
  $gpuop lab reset$root_arg            start over by hand (your workspace is moved aside, not deleted)
  $gpuop lab down$root_arg             stop the cluster
EOF
exit "$status"

# shellcheck shell=bash
# The lab's manifests, shared by the bats files that apply them (`load
# lab_manifests`): the objects of lab steps 5 and 8 (../shared/design/lab.md).

# NAMESPACE: RuntimeClass nvidia first, then the GPU pod cuda-probe.
lab_manifest() {
    cat <<EOF2
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
---
apiVersion: v1
kind: Pod
metadata:
  name: cuda-probe
  namespace: $1
spec:
  runtimeClassName: nvidia
  restartPolicy: Never
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
    command: ["nvidia-smi"]
    resources:
      limits:
        nvidia.com/gpu: 1
EOF2
}

# NAMESPACE IMAGE MEMORY: the toolkit DaemonSet with maxUnavailable 1.
toolkit_manifest() {
    cat <<EOF2
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-container-toolkit
  namespace: $1
spec:
  selector:
    matchLabels:
      app: nvidia-container-toolkit
  updateStrategy:
    rollingUpdate:
      maxUnavailable: 1
  template:
    metadata:
      labels:
        app: nvidia-container-toolkit
    spec:
      containers:
      - name: agent
        image: $2
        resources:
          requests:
            memory: $3
EOF2
}

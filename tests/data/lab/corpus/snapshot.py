#!/usr/bin/env python3
"""Prints the lab grader's view of the cluster kubectl talks to, as JSON.

The same shape as lab_cluster_snapshot() (src/lab/labcluster.h), assembled
here from the real kubectl's answers, so that the corpus' recorded states
are the cluster's word and not gpuop's own reading of it:
  {"nodes": {NAME: Node|null}, "namespace": Namespace|null,
   "runtimeclass": RuntimeClass|null, "pod": Pod|null, "pod_events": [Event],
   "configmap": ConfigMap|null, "daemonset": DaemonSet|null, "ds_pods": [Pod],
   "revisions": [ControllerRevision], "ds_events": [Event],
   "node_pods": [Pod on a lab node]}
"""
import json
import subprocess
import sys

NODES = ["lab-node-0", "lab-node-1", "lab-node-2"]


def kubectl(*args):
    r = subprocess.run(["kubectl", "--request-timeout=20s", *args, "-o", "json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if "NotFound" in r.stderr:
            return None
        sys.exit(f"kubectl {' '.join(args)}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def items(*args):
    doc = kubectl(*args)
    return doc["items"] if doc else []


def owned_by(obj, uid):
    return any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences", []))


def main():
    snap = {"nodes": {n: kubectl("get", "node", n) for n in NODES}}
    snap["node_pods"] = [p for n in NODES
                         for p in items("get", "pods", "-A", "--field-selector", f"spec.nodeName={n}")]
    snap["namespace"] = kubectl("get", "namespace", "gpu-lab")
    snap["runtimeclass"] = kubectl("get", "runtimeclass", "nvidia")
    snap["pod"] = kubectl("get", "pod", "-n", "gpu-lab", "cuda-probe")
    snap["pod_events"] = items("get", "events", "-n", "gpu-lab",
                               "--field-selector", "involvedObject.name=cuda-probe")
    snap["configmap"] = kubectl("get", "configmap", "-n", "gpu-operator", "time-slicing-config")
    ds = kubectl("get", "daemonset", "-n", "gpu-operator", "nvidia-container-toolkit")
    snap["daemonset"] = ds
    uid = ds["metadata"]["uid"] if ds else None
    snap["ds_pods"] = [p for p in items("get", "pods", "-n", "gpu-operator") if owned_by(p, uid)]
    snap["revisions"] = [r for r in items("get", "controllerrevisions", "-n", "gpu-operator")
                         if owned_by(r, uid)]
    snap["ds_events"] = items("get", "events", "-n", "gpu-operator")
    json.dump(snap, sys.stdout, indent=1, sort_keys=True)
    print()


main()

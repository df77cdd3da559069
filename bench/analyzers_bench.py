"""Helper of bench/analyzers_bench.sh: the snapshot it loads, as request files.

  analyzers_bench.py setup OUT TEAMS
      OUT/setup.tsv: the namespaces (gpu-operator, ml, team-00 ...);
      OUT/setup2.tsv: the DaemonSet, created with the old template;
      OUT/setup3.tsv: the DaemonSet patched to the new template (so that the
      server makes it generation 2), the time-slicing ConfigMap and the
      RuntimeClass "nvidia". Each file is sent after the one before.
  analyzers_bench.py snapshot OUT NODES PODS_PER_NODE GPU_EVERY TEAMS DS_UID
      OUT/creates.tsv: every node Ready and without the not-ready taint; GPU
      capacity (status) and GPU Feature Discovery labels
      on every GPU_EVERY-th node (8 GPUs) and on kwok-node-1 (4 GPUs
      time-sliced into 20, as lab step 7 makes lab-node-1), the DaemonSet's
      status and two ControllerRevisions, NODES * PODS_PER_NODE pods bound to
      the nodes (one DaemonSet pod a node, the rest workload pods spread over
      TEAMS namespaces, four of them on each GPU_EVERY-th node asking
      nvidia.com/gpu: 1), the pending GPU pod ml/train-0 and the
      FailedScheduling events.
      Sent after the creates: OUT/status-key.tsv, the statuses the analyzers
      judge (the DaemonSet's pods Running and Ready, its stuck pod and
      ml/train-0 Pending with PodScheduled False), and OUT/status.tsv, the
      workload pods' (Running and Ready: a list body as a live cluster's).
      OUT/snapshot.txt: the counts as KEY=VALUE words.

The request files are anload's input: METHOD <tab> PATH <tab> BODY a line.
Names follow the cluster's --nodes template: kwok-node-0 ... kwok-node-(N-1).
"""

import json
import os
import sys

NODE = "kwok-node-%d"
DS_NS, DS_NAME = "gpu-operator", "nvidia-container-toolkit"
OLD_HASH, NEW_HASH = "76df8ccd8d", "578ffd594"
OLD_IMAGE = "nvcr.io/nvidia/k8s/container-toolkit:v1.16.2"
NEW_IMAGE = "nvcr.io/nvidia/k8s/container-toolkit:v1.17.0"
# The new template asks more memory than node 0 has left (256Gi less the
# workload pods' requests), as lab step 8 does at three nodes: its pod there
# stays Pending and the rollout stalls with maxUnavailable 1 spent.
OLD_MEMORY, NEW_MEMORY = "128Mi", "250Gi"
GPU_POD_SLOTS = 4  # workload pods asking one GPU on each GPU node
GPUS_PER_NODE = "8"
NOW = "2026-11-30T12:00:00Z"
TIME_SLICING = """version: v1
sharing:
  timeSlicing:
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 5"""


def line(out, method, path, body):
    out.write("%s\t%s\t%s\n" % (method, path, json.dumps(body, separators=(",", ":"))))


def template(image, memory):
    return {"metadata": {"labels": {"app": DS_NAME}},
            "spec": {"containers": [{"name": "agent", "image": image,
                                     "resources": {"requests": {"memory": memory}}}]}}


def setup(out_dir, teams):
    with open(os.path.join(out_dir, "setup.tsv"), "w", encoding="utf-8") as out:
        for ns in [DS_NS, "ml"] + ["team-%02d" % t for t in range(teams)]:
            line(out, "POST", "/api/v1/namespaces",
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    with open(os.path.join(out_dir, "setup2.tsv"), "w", encoding="utf-8") as out:
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
              "metadata": {"name": DS_NAME, "namespace": DS_NS},
              "spec": {"selector": {"matchLabels": {"app": DS_NAME}},
                       "updateStrategy": {"type": "RollingUpdate",
                                          "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                       "template": template(OLD_IMAGE, OLD_MEMORY)}}
        line(out, "POST", "/apis/apps/v1/namespaces/%s/daemonsets" % DS_NS, ds)
    with open(os.path.join(out_dir, "setup3.tsv"), "w", encoding="utf-8") as out:
        line(out, "PATCH", "/apis/apps/v1/namespaces/%s/daemonsets/%s" % (DS_NS, DS_NAME),
             {"spec": {"template": template(NEW_IMAGE, NEW_MEMORY)}})
        line(out, "POST", "/api/v1/namespaces/%s/configmaps" % DS_NS,
             {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "time-slicing-config", "namespace": DS_NS},
              "data": {"any": TIME_SLICING}})
        line(out, "POST", "/apis/node.k8s.io/v1/runtimeclasses",
             {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
              "metadata": {"name": "nvidia"}, "handler": "nvidia"})


def ready_node(out, i):
    """What a live node shows: its kubelet's Ready condition, and the
    not-ready taint the API server puts on a new node taken away, as the
    node lifecycle controller does once the node is Ready (the cluster runs
    without controllers, so nothing else would)."""
    path = "/api/v1/nodes/" + NODE % i
    line(out, "STATUS", path, {"status": {"conditions": [{
        "type": "Ready", "status": "True", "reason": "KubeletReady",
        "message": "kubelet is posting ready status", "lastHeartbeatTime": NOW,
        "lastTransitionTime": NOW}]}})
    line(out, "PATCH", path, {"spec": {"taints": None}})


def gpu_node(out, i, gpus=GPUS_PER_NODE, replicas=None):
    """GFD's labels and the device plugin's advertisement (gpus * replicas)."""
    path = "/api/v1/nodes/" + NODE % i
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
              "nvidia.com/gpu.count": gpus, "nvidia.com/gpu.memory": "40960",
              "nvidia.com/cuda.driver-version.full": "550.127.05"}
    if replicas:
        labels["nvidia.com/gpu.replicas"] = replicas
        labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing"
    line(out, "PATCH", path, {"metadata": {"labels": labels}})
    slots = str(int(gpus) * int(replicas or "1"))
    line(out, "STATUS", path, {"status": {"capacity": {"nvidia.com/gpu": slots},
                                          "allocatable": {"nvidia.com/gpu": slots}}})


def owner(kind, api, name, uid):
    return [{"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": True,
             "blockOwnerDeletion": True}]


def workload_pod(i, node, slot, gpu, teams):
    team = "team-%02d" % (i % teams)
    app = "svc-%d" % (i % 200)
    limits = {"memory": "1Gi"}
    requests = {"cpu": "250m", "memory": "1Gi"}
    if gpu:
        limits["nvidia.com/gpu"] = requests["nvidia.com/gpu"] = "1"
    spec = {"nodeName": NODE % node,
            "containers": [{"name": "app", "image": "registry.example.com/%s:1.4.2" % app,
                            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "env": [{"name": "APP", "value": app},
                                    {"name": "SLOT", "value": str(slot)}],
                            "resources": {"limits": limits, "requests": requests}}]}
    if gpu:
        spec["runtimeClassName"] = "nvidia"
    return team, {"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "%s-%d" % (app, i), "namespace": team,
                               "labels": {"app": app, "pod-template-hash": "7c9f8d6b5"},
                               "ownerReferences": owner("ReplicaSet", "apps/v1",
                                                        app + "-7c9f8d6b5",
                                                        "00000000-0000-4000-8000-%012d" % (
                                                            i % 200))},
                  "spec": spec}


def ds_pod(node, uid, new):
    name = "%s-%d" % (DS_NAME, node)
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": [NODE % node]}]}]}}},
        "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                         "effect": "NoSchedule"}]}
    tpl = template(NEW_IMAGE, NEW_MEMORY) if new else template(OLD_IMAGE, OLD_MEMORY)
    spec["containers"] = tpl["spec"]["containers"]
    if not new:
        spec["nodeName"] = NODE % node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": DS_NS,
                         "labels": {"app": DS_NAME,
                                    "controller-revision-hash": NEW_HASH if new else OLD_HASH,
                                    "pod-template-generation": "2" if new else "1"},
                         "ownerReferences": owner("DaemonSet", "apps/v1", DS_NAME, uid)},
            "spec": spec}


def running(i, node, image):
    ip = "10.%d.%d.%d" % (node // 250 % 250, node % 250, i % 250 + 2)
    cond = [{"type": t, "status": "True", "lastTransitionTime": NOW}
            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                      "PodScheduled")]
    return {"status": {
        "phase": "Running", "conditions": cond, "hostIP": "10.89.%d.%d" % (node // 250,
                                                                            node % 250),
        "podIP": ip, "podIPs": [{"ip": ip}], "startTime": NOW,
        "containerStatuses": [{"name": "app", "ready": True, "started": True, "restartCount": 0,
                               "image": image, "imageID": image + "@sha256:" + "ab" * 32,
                               "containerID": "containerd://%064x" % (i + 1),
                               "state": {"running": {"startedAt": NOW}}, "lastState": {}}]}}


def unschedulable(message):
    return {"status": {"phase": "Pending", "conditions": [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": message, "lastTransitionTime": NOW, "lastProbeTime": None}]}}


def event(ns, name, pod, message):
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": ns},
            "reason": "FailedScheduling", "type": "Warning", "message": message,
            "source": {"component": "default-scheduler"}, "reportingComponent":
            "default-scheduler", "count": 1, "firstTimestamp": NOW, "lastTimestamp": NOW}


def snapshot(out_dir, nodes, per_node, gpu_every, teams, uid):
    gpu_nodes = (nodes + gpu_every - 1) // gpu_every
    ds_message = ("0/%d nodes are available: 1 Insufficient memory, %d node(s) didn't satisfy "
                  "plugin(s) [NodeAffinity]. preemption: 0/%d nodes are available: 1 No "
                  "preemption victims found for incoming pod, %d Preemption is not helpful "
                  "for scheduling." % (nodes, nodes - 1, nodes, nodes - 1))
    gpu_message = ("0/%d nodes are available: %d Insufficient nvidia.com/gpu. preemption: 0/%d "
                   "nodes are available: %d No preemption victims found for incoming pod."
                   % (nodes, nodes, nodes, nodes))
    creates = open(os.path.join(out_dir, "creates.tsv"), "w", encoding="utf-8")
    status = open(os.path.join(out_dir, "status.tsv"), "w", encoding="utf-8")
    key_status = open(os.path.join(out_dir, "status-key.tsv"), "w", encoding="utf-8")
    with creates, status, key_status:
        ds_path = "/apis/apps/v1/namespaces/%s/daemonsets/%s" % (DS_NS, DS_NAME)
        line(creates, "STATUS", ds_path, {"status": {
            "observedGeneration": 2, "desiredNumberScheduled": nodes,
            "currentNumberScheduled": nodes, "numberReady": nodes - 1,
            "updatedNumberScheduled": 1, "numberAvailable": nodes - 1,
            "numberUnavailable": 1, "numberMisscheduled": 0}})
        for rev, (h, image, memory) in enumerate(((OLD_HASH, OLD_IMAGE, OLD_MEMORY),
                                                  (NEW_HASH, NEW_IMAGE, NEW_MEMORY)), 1):
            tpl = template(image, memory)
            tpl["$patch"] = "replace"
            line(creates, "POST", "/apis/apps/v1/namespaces/%s/controllerrevisions" % DS_NS, {
                "apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": "%s-%s" % (DS_NAME, h), "namespace": DS_NS,
                             "labels": {"app": DS_NAME, "controller-revision-hash": h},
                             "annotations": {"deprecated.daemonset.template.generation":
                                             str(rev)},
                             "ownerReferences": owner("DaemonSet", "apps/v1", DS_NAME, uid)},
                "data": {"spec": {"template": tpl}}, "revision": rev})
        for node in range(nodes):
            ready_node(creates, node)
        for node in range(0, nodes, gpu_every):
            gpu_node(creates, node)
        if gpu_every > 1 and nodes > 1:
            gpu_node(creates, 1, gpus="4", replicas="5")
            gpu_nodes += 1
        i = gpu_pods = 0
        for node in range(nodes):
            # node 0's old pod was deleted first (maxUnavailable 1); its new
            # pod cannot be placed
            new = node == 0
            pod = ds_pod(node, uid, new)
            path = "/api/v1/namespaces/%s/pods" % DS_NS
            line(creates, "POST", path, pod)
            line(key_status, "STATUS", "%s/%s" % (path, pod["metadata"]["name"]),
                 unschedulable(ds_message) if new else running(i, node, OLD_IMAGE))
            i += 1
            for slot in range(per_node - 1):
                gpu = node % gpu_every == 0 and slot < GPU_POD_SLOTS
                gpu_pods += gpu
                ns, pod = workload_pod(i, node, slot, gpu, teams)
                path = "/api/v1/namespaces/%s/pods" % ns
                line(creates, "POST", path, pod)
                line(status, "STATUS", "%s/%s" % (path, pod["metadata"]["name"]),
                     running(i, node, pod["spec"]["containers"][0]["image"]))
                i += 1
        stuck = "%s-0" % DS_NAME
        line(creates, "POST", "/api/v1/namespaces/%s/events" % DS_NS,
             event(DS_NS, stuck + ".1", stuck, ds_message))
        line(creates, "POST", "/api/v1/namespaces/ml/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train-0", "namespace": "ml"},
            "spec": {"runtimeClassName": "nvidia", "containers": [{
                "name": "train", "image": "nvcr.io/nvidia/pytorch:24.10-py3",
                "resources": {"limits": {"nvidia.com/gpu": GPUS_PER_NODE},
                              "requests": {"nvidia.com/gpu": GPUS_PER_NODE}}}]}})
        line(creates, "POST", "/api/v1/namespaces/ml/events",
             event("ml", "train-0.1", "train-0", gpu_message))
        line(key_status, "STATUS", "/api/v1/namespaces/ml/pods/train-0",
             unschedulable(gpu_message))
    with open(os.path.join(out_dir, "snapshot.txt"), "w", encoding="utf-8") as f:
        f.write("nodes=%d gpu_nodes=%d pods=%d bound_gpu_pods=%d\n" % (
            nodes, gpu_nodes, i + 1, gpu_pods))


def main(argv):
    if len(argv) == 4 and argv[1] == "setup":
        setup(argv[2], int(argv[3]))
        return 0
    if len(argv) == 8 and argv[1] == "snapshot":
        snapshot(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), int(argv[6]), argv[7])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

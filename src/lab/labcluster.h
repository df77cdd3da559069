/* The lab's side of a cluster, through the REST client only, so the same
 * code runs on the embedded control plane, a kwok cluster or a real one.
 *
 * The lab owns exactly: its three nodes (created by it, marked with the
 * annotation gpuop.io/lab-node), namespace gpu-operator when it created
 * it, and the objects its steps name (namespace gpu-lab, RuntimeClass
 * nvidia, ConfigMap gpu-operator/time-slicing-config, DaemonSets
 * gpu-operator/nvidia-container-toolkit and, on simulated nodes,
 * gpu-operator/nvidia-device-plugin-daemonset). Nothing else is read for
 * writing, changed or deleted.
 *
 * Those step objects carry names a real GPU cluster uses too (the GPU
 * Operator makes RuntimeClass nvidia). So `lab up` refuses a cluster where
 * any of them exists before the lab, and leaves a marker, the ConfigMap
 * gpu-operator/gpuop-lab; reset and down act only where the marker is. */
#ifndef GPUOP_LAB_LABCLUSTER_H
#define GPUOP_LAB_LABCLUSTER_H

#include <jansson.h>

#include "client/rest.h"
#include "lab/cluster_shape.h"
#include "lab/lab.h"

#define LAB_NODES 3

/* "lab-node-0".."lab-node-2" */
const char *lab_node_name(int index);

/* Creates what is missing: namespace gpu-operator and the three nodes
 * (kwok's node template: Ready through kwok or the embedded kubelet, cpu,
 * memory and pods from the params, untainted). A node of that name that the
 * lab did not create is an error: the lab never takes over a real node. */
kc_result lab_cluster_prepare(kc_client *c, const lab_params *p, gp_error *err);

/* Back to the start of step 1: the step objects deleted (waiting until
 * they are gone), the nodes' nvidia.com/gpu advertisement removed. */
kc_result lab_cluster_reset(kc_client *c, const lab_params *p, gp_error *err);

/* Reset, then the lab's nodes deleted (for `lab down` on a cluster the lab
 * does not own). */
kc_result lab_cluster_remove(kc_client *c, const lab_params *p, gp_error *err);

/* What the grader judges, read in one go:
 *   {"nodes": {NAME: Node|null}, "namespace": Namespace|null,
 *    "runtimeclass": RuntimeClass|null, "pod": Pod|null,
 *    "pod_events": [Event], "configmap": ConfigMap|null,
 *    "daemonset": DaemonSet|null, "ds_pods": [Pod], "revisions": [ControllerRevision],
 *    "ds_events": [Event], "node_pods": [Pod on a lab node],
 *    "node0_agent": lab-node-0's agent status|null (null: not simulated)} */
kc_result lab_cluster_snapshot(kc_client *c, json_t **snapshot, gp_error *err);

/* Object paths of the step objects. */
#define LAB_PATH_GPU_LAB_NS   "/api/v1/namespaces/gpu-lab"
#define LAB_PATH_OPERATOR_NS  "/api/v1/namespaces/gpu-operator"
#define LAB_PATH_RUNTIMECLASS "/apis/node.k8s.io/v1/runtimeclasses/nvidia"
#define LAB_PATH_POD          "/api/v1/namespaces/gpu-lab/pods/cuda-probe"
#define LAB_PATH_CONFIGMAP    "/api/v1/namespaces/gpu-operator/configmaps/time-slicing-config"
#define LAB_PATH_DAEMONSET                                                                         \
    "/apis/apps/v1/namespaces/gpu-operator/daemonsets/nvidia-container-toolkit"
#define LAB_PATH_MARKER "/api/v1/namespaces/gpu-operator/configmaps/gpuop-lab"
/* Step 6 on simulated nodes: the device plugin's DaemonSet. */
#define LAB_PATH_PLUGIN_DS                                                                         \
    "/apis/apps/v1/namespaces/gpu-operator/daemonsets/nvidia-device-plugin-daemonset"
/* lab-node-0's node agent (`gpuop lab up --node-agents`). */
#define LAB_PATH_NODE0_AGENT "/gpuop/v1/agents/lab-node-0"

#endif

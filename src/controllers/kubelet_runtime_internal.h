/* The fake kubelet over a simulated node (controllers.h: ctl_node_facts):
 * what a real 1.32 kubelet posts about its node from what it finds there.
 * Pure functions of the node object and the facts, as kubelet.c's.
 *
 * Sources, kubernetes/kubernetes:
 * - pkg/kubelet/nodestatus/setters.go ReadyCondition: Ready is True
 *   (KubeletReady, "kubelet is posting ready status") unless the runtime,
 *   the network, storage or the shutdown manager report an error; then
 *   False, reason KubeletNotReady, message the aggregate of the errors
 *   (apimachinery util/errors: one error as it is, several as "[a, b]");
 *   lastTransitionTime moves only when the status changes.
 * - pkg/kubelet/runtime.go runtimeErrors: "container runtime status check
 *   may not have completed yet" before the first Status that worked,
 *   "container runtime is down" once the last one is older than 30 s
 *   (kubelet.go maxWaitForContainerRuntime), and each failing health check
 *   as "NAME is not healthy: ERROR": PLEG's (pleg/generic.go Healthy)
 *   "pleg was last seen active %v ago; threshold is %v" after 3 minutes.
 * - setters.go RuntimeHandlers: status.runtimeHandlers from the runtime's
 *   handlers, name and features, in its order; none (the field absent) when
 *   it reports none, as containerd 1.6 and 1.7 do.
 * - setters.go MachineInfo and the device manager (cm/devicemanager,
 *   gpu-node-facts.md 5 and 6.2): an extended resource's capacity and
 *   allocatable as the manager has them; VersionInfo: nodeInfo's
 *   containerRuntimeVersion "containerd://VERSION", kernelVersion, bootID. */
#ifndef GPUOP_CONTROLLERS_KUBELET_RUNTIME_INTERNAL_H
#define GPUOP_CONTROLLERS_KUBELET_RUNTIME_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controllers/controllers.h"

/* kubelet.go maxWaitForContainerRuntime and pleg/generic.go's threshold. */
#define CTL_KUBELET_RUNTIME_THRESHOLD_MS (30 * 1000)
#define CTL_KUBELET_RELIST_THRESHOLD_MS  (3 * 60 * 1000)

/* The Ready condition's message for the facts at now_ms: "" when Ready,
 * else what ReadyCondition writes. */
void ctl_kubelet_ready_message(const ctl_node_facts *f, int64_t now_ms, char *out, size_t cap);

/* The status patch of a node the kubelet of the facts runs on, or NULL
 * when nothing changed and no heartbeat is due: the five conditions (kwok's
 * order) with Ready from the runtime, the others kept, lastHeartbeatTime
 * now, lastTransitionTime now where the status changed; on a node without
 * a Ready condition yet, what node-initialize adds (addresses with `ip`,
 * daemonEndpoints, phase); nodeInfo's runtime, kernel and boot id;
 * status.runtimeHandlers (null to remove it when none are reported); the
 * extended resources' capacity and allocatable. `heartbeat`: the periodic
 * status is due, send the conditions whatever changed. NULL too for a node
 * the kubelet does not manage, or when memory runs out. */
json_t *ctl_kubelet_runtime_node_status(const json_t *node, const ctl_node_facts *f, const char *ip,
                                        int64_t now_ms, bool heartbeat);

/* The merge patch of the node's labels the facts set or take away (GPU
 * Feature Discovery's and Node Feature Discovery's, published for the node
 * and not by the kubelet): {"metadata": {"labels": {KEY: VALUE or null}}},
 * or NULL when the node has them as they should be. */
json_t *ctl_kubelet_runtime_labels(const json_t *node, const ctl_node_facts *f);

#endif

/* The fake kubelet's decisions (kwok semantics, k8s-semantics section 7), as
 * pure functions over jansson objects in their v1 JSON form: each takes a
 * snapshot of the objects involved and returns the body to send, or NULL
 * when there is nothing to send. The runtime around them watches, decides
 * when (heartbeat every 20 s plus jitter), sends the bodies through the API
 * server and owns what they return.
 *
 * Sources: kwok's stages kustomize/stage/node/fast/node-initialize.yaml,
 * node/heartbeat/node-heartbeat.yaml, pod/fast/pod-ready.yaml and
 * pod-delete.yaml, its NodeConditions table and ipPool
 * (pkg/kwok/controllers/node_controller.go, utils.go); what a real
 * 1.32 kubelet adds to a running pod (conditions PodReadyToStartContainers,
 * imageID, containerID, podIPs, hostIPs). Status patches are strategic merge
 * patches (application/strategic-merge-patch+json) for the /status
 * subresource: conditions merge by type, so PodScheduled stays (kwok PR
 * #1244). Every function returns NULL when memory runs out. */
#ifndef GPUOP_CONTROLLERS_KUBELET_INTERNAL_H
#define GPUOP_CONTROLLERS_KUBELET_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* The annotation kwokctl's node template carries and the kubelet selects. */
#define CTL_KUBELET_NODE_ANNOTATION "kwok.x-k8s.io/node"
/* The port written to status.daemonEndpoints.kubeletEndpoint.Port. */
#define CTL_KUBELET_PORT 10250
/* "kwok-<version>" fills nodeInfo's version fields that a node leaves empty. */
#define CTL_KUBELET_KWOK_VERSION "kwok-v0.6.1"
/* The pod CIDR of a node without spec.podCIDR (kwok's --cidr default). */
#define CTL_KUBELET_DEFAULT_CIDR "10.0.0.1/24"

/* Room for an address as text (INET6_ADDRSTRLEN). */
#define CTL_KUBELET_IP_MAX 46

/* The event the kubelet records when a sandbox cannot be created. */
#define CTL_KUBELET_SANDBOX_EVENT_TYPE   "Warning"
#define CTL_KUBELET_SANDBOX_EVENT_REASON "FailedCreatePodSandBox"

/* A node condition as kwok's NodeConditions write it. */
typedef struct ctl_kubelet_condition {
    const char *type, *status, *reason, *message;
} ctl_kubelet_condition;

/* kwok's five, Ready first, in its order (*count of them). */
const ctl_kubelet_condition *ctl_kubelet_conditions(size_t *count);

/* A node this kubelet manages: annotation kwok.x-k8s.io/node is "fake". */
bool ctl_kubelet_manages(const json_t *node);

/* node-initialize, for a managed node whose Ready condition is not "True":
 * {"status":{...}} with the five kwok conditions in order (Ready,
 * MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable;
 * lastHeartbeatTime now, lastTransitionTime the node's creationTimestamp),
 * addresses InternalIP `ip` (left out when NULL or "") and Hostname when the
 * node has none, daemonEndpoints, allocatable and capacity {cpu: 1k, memory:
 * 1Ti, pods: 1M} each only when the node has none, nodeInfo's empty fields
 * filled only when nodeInfo is present, and phase Running. NULL for an
 * unmanaged or already Ready node.
 *
 * A node the node lifecycle controller found silent is not Ready, so this
 * would bring it straight back: the runtime must not initialize a node while
 * a drill holds its kubelet down. */
json_t *ctl_kubelet_node_init(const json_t *node, const char *ip, time_t now);

/* node-heartbeat, for a managed node that is Ready and Running: re-stamps
 * lastHeartbeatTime of every condition the node has with `now`, leaving
 * status, reason, message and lastTransitionTime as they are. NULL
 * otherwise (a NotReady node is one whose kubelet stopped posting). */
json_t *ctl_kubelet_node_heartbeat(const json_t *node, time_t now);

/* pod-ready, for a pod whose spec.nodeName is `node` (a managed node), with
 * no deletionTimestamp and no status.podIP: {"status":{...}} with conditions
 * PodReadyToStartContainers, Initialized, Ready, ContainersReady and one per
 * spec.readinessGates, all "True" (lastProbeTime null, lastTransitionTime
 * now, stale reason and message removed); containerStatuses in spec order
 * (running since now, ready, started, restartCount 0, lastState {}, imageID
 * "<repository>@sha256:<64 hex>" derived from the image name, containerID
 * "containerd://<64 hex>" derived from the pod uid and container name);
 * initContainerStatuses (a sidecar, restartPolicy Always, runs; any other has
 * terminated, Completed, exit code 0); hostIP and hostIPs from the node's
 * InternalIP; podIP and podIPs, the node IP for hostNetwork pods, else
 * address `ip_index` of the node's spec.podCIDR (CTL_KUBELET_DEFAULT_CIDR when
 * it has none); phase Running; startTime now.
 *
 * Addresses are handed out as kwok's pool does: index 0 is the address the
 * CIDR is written with (10.0.0.1 for "10.0.0.1/24"), or the first host when
 * that is the network address (10.244.1.1 for "10.244.1.0/24"), then one up
 * per index, wrapping inside the CIDR and never giving the network or
 * broadcast address. Choosing an index no live pod on the node uses is the
 * runtime's part. NULL when the pod does not qualify. */
json_t *ctl_kubelet_pod_ready(const json_t *pod, const json_t *node, unsigned ip_index, time_t now);

/* Address `ip_index` of the node's pool for the pod, as pod-ready hands it
 * out (the node's IP for a hostNetwork pod). False when none can be made. */
bool ctl_kubelet_pod_address(const json_t *pod, const json_t *node, unsigned ip_index,
                             char out[CTL_KUBELET_IP_MAX]);

/* The status of a pod bound to `node` (managed) whose sandbox has address
 * `ip` and whose containers were started now: as pod-ready's, except that
 * container `crashed` (NULL: none) exited at once with code 1 and waits
 * for its restart: waiting CrashLoopBackOff with the kubelet's back-off
 * message, lastState terminated Error, restartCount 1, not ready; the pod
 * is then Running but Ready and ContainersReady False (ContainersNotReady,
 * "containers with unready status: [NAME]"). The pod may have an address
 * already (its containers started again after a reboot). NULL when the pod
 * is not on the node or ip is empty. */
json_t *ctl_kubelet_pod_started(const json_t *pod, const json_t *node, const char *ip,
                                const char *crashed, time_t now);

/* A pod bound to `node` (managed), with no address yet, whose sandbox the
 * runtime refuses with `error` (the gRPC error as the kubelet prints it):
 * the stuck status below, or {} when the pod shows it already, and the
 * event note "Failed to create pod sandbox: ERROR" (kuberuntime_manager.go)
 * in *event_note (the caller frees it). NULL, *event_note NULL, for a pod
 * with an address (its sandbox exists) or not on the node. */
json_t *ctl_kubelet_pod_sandbox_failed(const json_t *pod, const json_t *node, const char *error,
                                       time_t now, char **event_note);

/* The gRPC error containerd's CRI answers a sandbox for a handler it does
 * not serve: 1.6 and 1.7 "failed to get sandbox runtime: no runtime for
 * "H" is configured" (pkg/cri/server/sandbox_run.go around helpers.go's
 * getSandboxRuntime), 2.x (`v2`) "unable to get OCI runtime for sandbox
 * "ID": no runtime for "H" is configured" (internal/cri/server/
 * sandbox_run.go; ID a sandbox id of 64 hex digits, one a pod here), each
 * behind "rpc error: code = Unknown desc = ". */
void ctl_kubelet_no_runtime_error(const json_t *pod, const char *handler, bool v2, char *out,
                                  size_t cap);

/* RuntimeClass fidelity (an optional mode): a pod bound to `node` (managed),
 * not being deleted, whose spec.runtimeClassName names `runtimeclass` whose
 * handler is not among the node's status.runtimeHandlers[].name cannot get
 * a sandbox. Returns the status patch of a pod stuck that way (phase Pending,
 * containers waiting ContainerCreating, or all waiting PodInitializing when
 * the pod has init containers, as kubelet_pods.go's default waiting state
 * has it, so `kubectl get` shows Init:0/N; PodReadyToStartContainers False;
 * Ready and ContainersReady False, ContainersNotReady; hostIP; startTime),
 * or {} when the pod already shows it, and sets *event_note (the caller
 * frees it) to the note of the Warning FailedCreatePodSandBox event the
 * kubelet records on every retry:
 *
 *   Failed to create pod sandbox: rpc error: code = Unknown desc = failed to
 *   get sandbox runtime: no runtime for "nvidia" is configured
 *
 * (kubelet kuberuntime_manager.go "Failed to create pod sandbox: %v" around
 * the CRI gRPC error; containerd pkg/cri/server/sandbox_run.go "failed to get
 * sandbox runtime: %w" around helpers.go "no runtime for %q is configured";
 * the same text in NVIDIA/gpu-operator#730 and k8s-device-plugin#479).
 *
 * NULL, with *event_note NULL, when the handler is present; when the pod has
 * its sandbox already (status.podIP: a running pod outlives a containerd
 * restart that loses the handler); when it names no RuntimeClass or another
 * one, or `runtimeclass` is NULL; or when the node reports no
 * status.runtimeHandlers at all (a kubelet over containerd 1.7 reports none,
 * so absence says nothing). Call this before ctl_kubelet_pod_ready. */
json_t *ctl_kubelet_pod_runtime_missing(const json_t *pod, const json_t *node,
                                        const json_t *runtimeclass, time_t now, char **event_note);

/* What a kubelet that is back posts for a pod it runs whose Ready condition
 * the node lifecycle controller set False while it was down
 * (MarkPodsNotReady): its status manager's next sync makes it True again,
 * lastTransitionTime now. NULL unless the pod is bound to `node` (managed,
 * Ready), Running, not being deleted and Ready False. */
json_t *ctl_kubelet_pod_ready_again(const json_t *pod, const json_t *node, time_t now);

/* pod-delete: true for a pod bound to a node (the runtime checks it is a
 * managed one) that has a deletionTimestamp. The kubelet then empties its
 * finalizers (ctl_kubelet_pod_finalizers_patch) and deletes it with
 * gracePeriodSeconds=0. */
bool ctl_kubelet_should_finish_delete(const json_t *pod);

/* The patch that empties an object's finalizers, {"metadata":
 * {"finalizers":null}}: a JSON merge patch (application/merge-patch+json),
 * which a strategic merge patch reads the same way. kwok sends the JSON
 * patch [{"op":"remove","path":"/metadata/finalizers"}] to the same effect.
 * NULL when the object has none. */
json_t *ctl_kubelet_pod_finalizers_patch(const json_t *pod);

#endif

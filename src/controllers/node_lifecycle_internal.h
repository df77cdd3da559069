/* The decisions of kube-controller-manager 1.32's node lifecycle controller
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go, with
 * scheduler/rate_limited_queue.go and pkg/controller/util/node), as
 * functions over jansson objects in their v1 JSON form and a state the
 * caller keeps between calls. Nothing here talks to the API server: the
 * runtime hands in nodes and leases, carries out the actions that come back
 * and calls again.
 *
 * What it decides:
 *   - node health (tryUpdateNodeHealth): a node's heartbeat is its Ready
 *     condition's lastHeartbeatTime and its Lease's renewTime (in
 *     kube-node-lease); the controller notes the time it sees either change.
 *     Once the grace period (--node-monitor-grace-period, 40 s; 60 s for a
 *     node that never posted Ready) passes without one, Ready,
 *     MemoryPressure, DiskPressure and PIDPressure become Unknown with
 *     reason NodeStatusUnknown, "Kubelet stopped posting node status." (one
 *     the node lacks is added as NodeStatusNeverUpdated, "Kubelet never
 *     posted node status."); NetworkUnavailable is left alone. The node gets
 *     the NodeNotReady event and its pods are marked not ready, once, when
 *     Ready stops being True;
 *   - NoSchedule taints (doNoScheduleTaintingPass), on every change of a
 *     node: Ready False -> node.kubernetes.io/not-ready, Unknown ->
 *     node.kubernetes.io/unreachable, MemoryPressure, DiskPressure,
 *     PIDPressure and NetworkUnavailable True -> memory-pressure,
 *     disk-pressure, pid-pressure, network-unavailable, spec.unschedulable ->
 *     unschedulable; those keys' NoSchedule taints that no longer apply go;
 *   - NoExecute taints (processTaintBaseEviction, doNoExecuteTaintingPass):
 *     a node seen NotReady or Unknown is queued in its zone and tainted
 *     not-ready or unreachable NoExecute as the zone's rate limiter allows
 *     (--node-eviction-rate 0.1 nodes a second, a burst of 1; none at all in
 *     a zone where no node is Ready when every zone is so, or where more
 *     than 2 nodes and at least 55 % are not Ready in a cluster of at most
 *     50 nodes, 0.01 a second in a larger one); the two swap at once when
 *     Ready moves between False and Unknown; both go when Ready is True again.
 *     The taint eviction controller (taint_eviction_internal.h) then evicts.
 *
 * The taint that kube-apiserver's NodeTaint admission plugin puts on every
 * new Node (node.kubernetes.io/not-ready NoSchedule) is the API server's;
 * the NoSchedule pass here removes it once the node posts Ready, or keeps
 * it while the node posts Ready False.
 *
 * Actions come back as JSON objects appended to an array:
 *   {"op":"status","node":N,"resourceVersion":RV,"patch":P}
 *       P a strategic merge patch for nodes/N/status (conditions by type);
 *   {"op":"taints","node":N,"add":[...],"remove":[...]}
 *       SwapNodeControllerTaint: the taints to add (timeAdded now) and to
 *       remove (by key and effect); ctl_nlc_apply_taints makes the list;
 *   {"op":"event","node":N,"uid":U,"type":T,"reason":R,"message":M}
 *       an event on the Node, from node-controller;
 *   {"op":"pods-not-ready","node":N}
 *       MarkPodsNotReady for the pods bound to N (ctl_nlc_pod_not_ready_patch).
 *
 * Not thread-safe: the controllers' thread owns the state. */
#ifndef GPUOP_CONTROLLERS_NODE_LIFECYCLE_INTERNAL_H
#define GPUOP_CONTROLLERS_NODE_LIFECYCLE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* kube-controller-manager's defaults. */
#define CTL_NLC_GRACE_MS          40000 /* --node-monitor-grace-period */
#define CTL_NLC_STARTUP_GRACE_MS  60000 /* --node-startup-grace-period */
#define CTL_NLC_MONITOR_PERIOD_MS 5000  /* --node-monitor-period */
#define CTL_NLC_EVICTION_QPS      0.1   /* --node-eviction-rate */
#define CTL_NLC_SECONDARY_QPS     0.01  /* --secondary-node-eviction-rate */
#define CTL_NLC_LARGE_CLUSTER     50    /* --large-cluster-size-threshold */
#define CTL_NLC_UNHEALTHY_ZONE    0.55  /* --unhealthy-zone-threshold */
#define CTL_NLC_EVICTION_BURST    1     /* scheduler.EvictionRateLimiterBurst */
#define CTL_NLC_RETRY_MS          50    /* a node the NoExecute pass cannot read now */

#define CTL_TAINT_NOT_READY   "node.kubernetes.io/not-ready"
#define CTL_TAINT_UNREACHABLE "node.kubernetes.io/unreachable"
#define CTL_NLC_COMPONENT     "node-controller"

typedef struct ctl_nlc ctl_nlc;

/* grace_ms: the node monitor grace period (CTL_NLC_GRACE_MS by default). */
ctl_nlc *ctl_nlc_new(int64_t grace_ms, int64_t now_ms);
void ctl_nlc_free(ctl_nlc *c);

/* How often the health of every node is looked at: the monitor period, or
 * a quarter of a shorter grace period (not below 250 ms). */
int64_t ctl_nlc_monitor_period_ms(const ctl_nlc *c);

/* doNoScheduleTaintingPass for one node: true, with *add and *remove (new
 * arrays, the caller's), when its NoSchedule condition taints are not what
 * its conditions and spec.unschedulable say; false (nothing set) when they
 * are. Added taints carry timeAdded now_ms. */
bool ctl_nlc_noschedule_diff(const json_t *node, int64_t now_ms, json_t **add, json_t **remove);

/* The taints `taints` become with `add` (AddOrUpdateTaint: one of the same
 * key and effect is replaced, else it goes last) and then `remove` (by key
 * and effect) applied: a new array. */
json_t *ctl_nlc_apply_taints(const json_t *taints, const json_t *add, const json_t *remove);

typedef struct ctl_nlc_node {
    const json_t *node;
    /* spec.renewTime of the node's Lease in kube-node-lease; NULL when it
     * has none */
    const char *lease_renew;
} ctl_nlc_node;

/* monitorNodeHealth: one round over every node at now_ms (the runtime calls
 * it every ctl_nlc_monitor_period_ms). Nodes gone since the last round are
 * forgotten; a node seen for the first time has any NoExecute taint of this
 * controller taken off, as markNodeAsReachable does then. */
void ctl_nlc_monitor(ctl_nlc *c, const ctl_nlc_node *nodes, size_t n, int64_t now_ms,
                     json_t *actions);

/* The node named `name` as the NoExecute pass needs it, or NULL with *busy
 * false when there is no such node, or NULL with *busy true when it cannot
 * be looked at now (a write of it is on its way): then it is tried again in
 * CTL_NLC_RETRY_MS. */
typedef const json_t *ctl_nlc_lookup_fn(void *ud, const char *name, bool *busy);

/* doNoExecuteTaintingPass at now_ms: the queued nodes whose turn their
 * zone's rate limiter allows get their NoExecute taint (a "taints" action). */
void ctl_nlc_noexecute_pass(ctl_nlc *c, ctl_nlc_lookup_fn *lookup, void *ud, int64_t now_ms,
                            json_t *actions);

/* Whether the NoExecute queue has a node waiting (the runtime then runs the
 * pass again soon). */
bool ctl_nlc_noexecute_pending(const ctl_nlc *c);

/* MarkPodsNotReady for one pod: the strategic merge patch of pods/N/status
 * that sets its Ready condition False (lastTransitionTime now_ms), with its
 * resourceVersion as the precondition; NULL when it has no Ready condition
 * or it is False already (then nothing is written and no event recorded). */
json_t *ctl_nlc_pod_not_ready_patch(const json_t *pod, int64_t now_ms);

/* The zone key of a node (nodetopology.GetZoneKey): "" when it has neither
 * a region nor a zone label, else REGION ":\0:" ZONE (here with the NUL as
 * "\x1f"). Written into buf. */
void ctl_nlc_zone_key(const json_t *node, char *buf, size_t size);

#endif

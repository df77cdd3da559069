/* `gpuop rollout NAMESPACE/DAEMONSET`: why a DaemonSet rolling update is
 * where it is (k8s-semantics.md 6; gpu-node-facts.md 6.5).
 *
 *   an_rollout *b = an_rollout_new(daemonset, &err);
 *   ... add revisions, nodes, pods, events in any order ...
 *   json_t *report = an_rollout_finish(b, &err);
 *
 * Pods of other owners are reduced to per-node request sums; the
 * DaemonSet's own pods (one or two per node) are kept as small records.
 * Events read: warnings on the DaemonSet's pods (FailedScheduling,
 * FailedCreatePodSandBox) and the controller's FailedCreate on the
 * DaemonSet (sched_message.h names their blockers).
 *
 * Report (`-o json`):
 *   {"schema": "gpuop/rollout/1", "daemonset": "ns/name",
 *    "strategy": "RollingUpdate"|"OnDelete",
 *    "generation", "observed_generation", "template_generation",
 *    "current_revision": {"name", "revision", "hash"} or null,
 *    "status": {"desired", "current", "updated", "ready", "available",
 *               "unavailable", "misscheduled"},       (.status, 0 when absent)
 *    "old_pods": pods whose template is not the current one,
 *    "old_image_pods": pods with a container whose image is not the
 *                      template's (the lab's OLD_IMAGE_PODS),
 *    "budget": {"max_unavailable", "max_unavailable_spec", "max_surge",
 *               "max_surge_spec", "spent", "nodes_without_pod",
 *               "spent_by": [{"node", "state", "pod"}]},
 *    "requests": {"memory": "64Gi", ...}              (the new template's),
 *    "fit": [{"node", "ready", "resources": [{"name", "allocatable",
 *             "requested", "free", "request", "fits"}], "fits"}],
 *    "stuck": [{"pod", "node", "updated", "status", "blocker", "message",
 *               "detail"}],
 *    "create_failure": {"reason": "FailedCreate", "message", "count",
 *                       "blocker", "runtime_class"} or null  (the latest
 *                       FailedCreate event on the DaemonSet),
 *    "blocker": the create failure's blocker while nodes have no pod, else
 *               the first stuck pod's, "none" when nothing is stuck,
 *    "verdict": {"state": "complete"|"stalled"|"progressing"|"waiting-observe"
 *                |"on-delete", "text": "rollout stalled: ..."},
 *    "evidence": ["daemonset ns/name .status.desiredNumberScheduled = 3", ...],
 *    "warnings": [...]}
 *
 * Rules followed: a pod is updated when its controller-revision-hash is the
 * newest ControllerRevision's hash or its pod-template-generation is the
 * DaemonSet's template generation (6.3); maxUnavailable and maxSurge are
 * scaled from the desired count rounding up, and both 0 means
 * maxUnavailable 1 (6.4); a node spends budget as update.go counts it
 * (no pod, old and new together, or its only pod not available). The fit
 * table compares the new template's requests with allocatable minus the
 * requests of the other non-terminated pods bound to the node (with
 * maxSurge 0 the node's old DaemonSet pod goes first, so it is not
 * counted; with surge it is). */
#ifndef GPUOP_ANALYZE_ROLLOUT_H
#define GPUOP_ANALYZE_ROLLOUT_H

#include <jansson.h>
#include <time.h>

#include "analyze/analyze.h"
#include "util/error.h"

typedef struct an_rollout an_rollout;

/* NULL with err set when `daemonset` is not a DaemonSet object. */
an_rollout *an_rollout_new(const json_t *daemonset, gp_error *err);
/* ControllerRevisions, Nodes, Pods, Events of any owner: what is not this
 * DaemonSet's is summed or skipped. */
void an_rollout_add_revision(an_rollout *b, const json_t *revision);
void an_rollout_add_node(an_rollout *b, const json_t *node);
void an_rollout_add_pod(an_rollout *b, const json_t *pod);
void an_rollout_add_event(an_rollout *b, const json_t *event);
/* The clock for minReadySeconds; without it (or with 0) a Ready pod is
 * available at once. */
void an_rollout_set_now(an_rollout *b, time_t now);
json_t *an_rollout_finish(an_rollout *b, gp_error *err);
void an_rollout_free(an_rollout *b);

/* AN_LAB: the six lines of lab step 8 (DESIRED, UPDATED, READY,
 * OLD_IMAGE_PODS, MAX_UNAVAILABLE, BLOCKER). malloc'd; NULL when out of
 * memory. */
char *an_rollout_render(const json_t *report, an_format fmt);

#endif

/* The decisions of kube-controller-manager 1.32's taint eviction controller
 * (pkg/controller/tainteviction/taint_eviction.go), as functions over
 * jansson objects in their v1 JSON form: a pod bound to a node with
 * NoExecute taints is deleted once the shortest tolerationSeconds of the
 * tolerations that let it stay have passed, at once when one of the taints
 * is not tolerated, never when every one is tolerated without a limit.
 * The runtime keeps one ctl_te_work per pod of such a node, and when one
 * is due records the TaintManagerEviction event ("Marking for deletion Pod
 * NS/NAME"), adds the DisruptionTarget condition and deletes the pod with
 * the default grace period; a deletion the taints no longer call for is
 * cancelled with "Cancelling deletion of Pod NS/NAME". */
#ifndef GPUOP_CONTROLLERS_TAINT_EVICTION_INTERNAL_H
#define GPUOP_CONTROLLERS_TAINT_EVICTION_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define CTL_TE_COMPONENT "taint-eviction-controller"
/* What ctl_te_toleration_ms says of a pod that may stay for good, and of one
 * that must go now. */
#define CTL_TE_FOREVER     INT64_MAX
#define CTL_TE_UNTOLERATED (-1)

/* The node's NoExecute taints, in order (a new array, maybe empty). */
json_t *ctl_te_noexecute_taints(const json_t *node);

/* GetMatchingTolerations and getMinTolerationTime: for the NoExecute taints
 * `taints` (not empty) and a pod's tolerations, CTL_TE_UNTOLERATED when some
 * taint has no toleration; else the shortest tolerationSeconds of the
 * tolerations used (the first that tolerates each taint), in milliseconds
 * (0 for one of 0 or less), or CTL_TE_FOREVER when none of them has one. */
int64_t ctl_te_toleration_ms(const json_t *taints, const json_t *tolerations);

/* A pod's scheduled deletion (TimedWorkerQueue's worker for it). */
typedef struct ctl_te_work {
    bool pending; /* scheduled and not yet carried out */
    bool done;    /* carried out (the worker left as nil) */
    int64_t created_ms, fire_ms;
} ctl_te_work;

/* processPodOnNode at now_ms with what ctl_te_toleration_ms said: an
 * untolerated taint replaces any scheduled deletion with one now, a pod
 * tolerating for good has its deletion cancelled, and otherwise a deletion
 * is scheduled toleration_ms from now unless one is scheduled already (it
 * is kept as it is). True when a pending deletion was cancelled (the caller
 * records the cancelling event). */
bool ctl_te_process(ctl_te_work *w, int64_t toleration_ms, int64_t now_ms);

/* CancelWork: true when a deletion was pending (and is not any more). */
bool ctl_te_cancel(ctl_te_work *w);

/* Whether the deletion is due at now_ms. */
bool ctl_te_due(const ctl_te_work *w, int64_t now_ms);

/* The strategic merge patch of pods/N/status that adds the DisruptionTarget
 * condition (True, DeletionByTaintManager, "Taint manager: deleting due to
 * NoExecute taint"), or NULL when the pod has it so already. */
json_t *ctl_te_disruption_patch(const json_t *pod, int64_t now_ms);

#endif

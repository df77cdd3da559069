/* The decisions of kube-scheduler 1.32 (default profile), as pure functions
 * over jansson objects: which pods to try, which node a pod goes to, and the
 * exact FitError text when it goes nowhere.
 *
 * Nothing here touches the store, the clock or a thread: the caller hands in
 * one consistent snapshot (every Node and, per node, the non-terminal pods
 * bound to it) and writes the outcome itself (Binding, PodScheduled
 * condition, FailedScheduling event, nominatedNodeName, victim deletion).
 *
 * What is followed (pkg/scheduler v1.32):
 *   - PreFilter NodeAffinity: when every required term names nodes through
 *     matchFields metadata.name In, only those nodes are filtered; the others
 *     count as "node(s) didn't satisfy plugin(s) [NodeAffinity]";
 *   - Filters, stopping at the first failing plugin per node: NodeUnschedulable,
 *     NodeName, TaintToleration, NodeAffinity (nodeSelector and required
 *     terms), NodePorts (regular containers' hostPorts, as 1.32 does: sidecar
 *     ports count only from 1.33.x/1.34 on), NodeResourcesFit (pods, cpu,
 *     memory, ephemeral-storage, extended/hugepages resources; requests summed
 *     over containers, maxed with init containers under the sidecar rules,
 *     plus spec.overhead);
 *   - a pod with status.nominatedNodeName is tried on that node first;
 *   - DefaultPreemption (PostFilter) with its message, victim selection with
 *     reprieve, and the candidate choice (pickOneNodeForPreemption without
 *     PodDisruptionBudgets);
 *   - FitError.Error() in its v1.31+ form.
 * Simplified: scoring is NodeResourcesFit LeastAllocated over cpu and memory
 * only (no BalancedAllocation, taint or affinity preferences, image
 * locality), ties go to the first node in rotated order instead of a random
 * one; filtering stops at numFeasibleNodesToFind (percentageOfNodesToScore
 * unset: adaptive past 100 nodes) and resumes where it stopped, as in 1.32;
 * nominated pods of other pods are not counted on nodes; volume,
 * topology-spread and inter-pod affinity plugins do not exist. */
#ifndef GPUOP_CONTROLLERS_SCHEDULER_H
#define GPUOP_CONTROLLERS_SCHEDULER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/quantity.h"
#include "util/error.h"

/* Whether the scheduler should try this pod: spec.nodeName empty,
 * spec.schedulerName "default-scheduler" (or absent/empty), no
 * metadata.deletionTimestamp, no spec.schedulingGates, and status.phase
 * neither Succeeded nor Failed. */
bool ctl_sched_wants(const json_t *pod);

typedef struct ctl_sched_node {
    const json_t *node;        /* a Node object */
    const json_t *const *pods; /* the non-terminal pods bound (spec.nodeName) to it */
    size_t pod_count;
} ctl_sched_node;

typedef struct ctl_sched_result {
    /* Index into nodes of the node to bind to, or -1. */
    int chosen;
    /* When chosen is -1: the PodScheduled condition message (malloc'd), i.e.
     * the whole FitError with its preemption part, or the error text when
     * `error` is set. NULL when a node was chosen. */
    char *message;
    /* A non-fit error: the condition reason is SchedulerError, not
     * Unschedulable (a quantity that does not parse, say). */
    bool error;
    /* Preemption found a node: index into nodes, else -1. kube-scheduler then
     * sets status.nominatedNodeName to that node and deletes `victims`; the
     * pod stays unschedulable for this attempt, and `message` is the FitError
     * without a "preemption:" part (DefaultPreemption succeeded, so it adds
     * no text). The next attempt tries the nominated node first. */
    int nominated;
    /* The pods to delete for `nominated`, most important first: borrowed
     * pointers into the caller's pod arrays (the array itself is malloc'd). */
    const json_t **victims;
    size_t victim_count;
    /* The pod's status.nominatedNodeName should be cleared: preemption ran and
     * found no candidate, or there are no nodes at all. */
    bool clear_nominated;
} ctl_sched_result;

/* One scheduling attempt for `pod` (the caller checks ctl_sched_wants) over the
 * n nodes of a snapshot. Among feasible nodes the highest least-allocated
 * score wins; ties go to the first in the order tie_break % n,
 * tie_break % n + 1, ... (wrapping), so a caller can vary tie_break to spread
 * equal nodes. With n == 0 the message is kube-scheduler's "no nodes
 * available to schedule pods" (reason Unschedulable).
 *
 * Returns 0 with out filled (a node chosen, or chosen -1 with message), or -1
 * with out->error set and out->message the error text (NULL only when memory
 * ran out). Free out with ctl_sched_result_free either way. */
int ctl_sched_schedule(const json_t *pod, const ctl_sched_node *nodes, size_t n, unsigned tie_break,
                       ctl_sched_result *out);

void ctl_sched_result_free(ctl_sched_result *r);

/* The same decision for many pods against one state of the cluster: the
 * nodes and their pods are parsed once (ctl_sched_schedule parses them on
 * every call, which at 1,000 nodes costs tens of milliseconds). A pod bound
 * by the caller is added with ctl_sched_cluster_assume, as kube-scheduler
 * assumes a pod on its node before the binding is seen. Victims returned by
 * ctl_sched_schedule_in point into the caller's pod objects. */
typedef struct ctl_sched_cluster ctl_sched_cluster;
ctl_sched_cluster *ctl_sched_cluster_new(const ctl_sched_node *nodes, size_t n, gp_error *err);
/* The same, with the bound pods' parse kept in `memo` from one call to the
 * next: at thousands of bound pods that parse is most of a build. Settled
 * pods are told to it (ctl_sched_memo_prime); other bound pods are parsed at
 * the first build that reads them and kept (with a reference) until builds
 * stop reading that object. */
typedef struct ctl_sched_memo ctl_sched_memo;
ctl_sched_memo *ctl_sched_memo_new(void);
void ctl_sched_memo_free(ctl_sched_memo *m);
/* Tells the memo what `pod` requests (its containers, init containers,
 * overhead, priority, host ports, start time), to be found under `key`, an
 * object the caller may then strip of those fields: a settled pod kept
 * with only what else it is read for. -1 with err for a quantity that does
 * not parse. */
int ctl_sched_memo_prime(ctl_sched_memo *m, const json_t *key, const json_t *pod, gp_error *err);
/* Forgets the pods only the memo still holds, once they could be a fifth
 * of what it keeps (`live`: how many pods the caller holds). A build trims
 * with the pods it was given. */
void ctl_sched_memo_trim(ctl_sched_memo *m, size_t live);
ctl_sched_cluster *ctl_sched_cluster_new_memo(const ctl_sched_node *nodes, size_t n,
                                              ctl_sched_memo *memo, gp_error *err);
int ctl_sched_cluster_assume(ctl_sched_cluster *c, size_t node, const json_t *pod, gp_error *err);
int ctl_sched_schedule_in(ctl_sched_cluster *c, const json_t *pod, unsigned tie_break,
                          ctl_sched_result *out);
void ctl_sched_cluster_free(ctl_sched_cluster *c);

/* The PodScheduled=False condition, in the API's member order:
 * {type, status: "False", lastProbeTime: null, lastTransitionTime: now,
 *  reason: "Unschedulable" (or "SchedulerError"), message}. NULL when out of
 * memory. */
json_t *ctl_sched_unschedulable_condition(const char *message, const char *now_rfc3339);
json_t *ctl_sched_error_condition(const char *message, const char *now_rfc3339);

/* The FailedScheduling event note: the message, cut to 1024 bytes with a
 * trailing " ..." when longer (truncateMessage; bytes, as Go slices them).
 * malloc'd; NULL when out of memory. */
char *ctl_sched_event_note(const char *message);

#endif

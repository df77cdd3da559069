/* kube-scheduler's FitError text, read back into numbers and blocker codes.
 *
 * The text is what the scheduler writes into the PodScheduled condition and
 * the FailedScheduling event (k8s-semantics.md 5.3-5.4; src/controllers/scheduler.c
 * writes the same):
 *
 *   0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't
 *   satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available:
 *   1 No preemption victims found for incoming pod, 2 Preemption is not
 *   helpful for scheduling.
 *
 * Blocker codes name what keeps a pod off a node in words a report can sort
 * on: insufficient-memory, insufficient-cpu, insufficient-<resource>
 * (insufficient-nvidia.com/gpu, insufficient-pods for "Too many pods"),
 * untolerated-taint, node-affinity, node-not-ready, unschedulable-node, and,
 * from container states rather than the scheduler, image-pull and
 * crash-loop; from the kubelet's and the controllers' events,
 * runtime-handler-missing, sandbox-failed, runtimeclass-missing,
 * pod-create-forbidden and pod-create-failed; anything else is unknown. */
#ifndef GPUOP_ANALYZE_SCHED_MESSAGE_H
#define GPUOP_ANALYZE_SCHED_MESSAGE_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

/* The longest blocker code, with its NUL ("insufficient-" + a resource name
 * of at most 253 + 1 + 63 characters). */
#define AN_BLOCKER_MAX 336

/* Parses a FitError. The report:
 *   {"total": 3,
 *    "reasons": [{"count": 1, "reason": "Insufficient memory",
 *                 "blocker": "insufficient-memory"}, ...],   (message order)
 *    "prefilter": "...",           (instead of reasons, when a PreFilter said no)
 *    "preemption": {"total": 3, "reasons": [...]}  or  {"text": "not eligible ..."},
 *    "truncated": true,            (only when the event note was cut: " ...")
 *    "blocker": "insufficient-memory"}
 * "blocker" is the primary one (an_sched_primary_blocker). The message
 * "no nodes available to schedule pods" gives total 0 and no reasons.
 * NULL with `err` set when the text is not a FitError. */
json_t *an_sched_message_parse(const char *message, gp_error *err);

/* The blocker code of one reason string ("Insufficient memory",
 * "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"), written
 * into buf; returns buf. */
const char *an_sched_blocker(const char *reason, char buf[AN_BLOCKER_MAX]);

/* What keeps the pod from running, from a parsed message: the most frequent
 * reason, ties broken by the scheduler's filter order. The NodeAffinity
 * PreFilter's absent-node reason counts only when nothing else is there: for
 * a DaemonSet pod the other nodes were never candidates, and the verdict on
 * its own node is what matters. "unknown" when there is no reason. Borrowed
 * from `parsed`. */
const char *an_sched_primary_blocker(const json_t *parsed);

/* The blocker a container's waiting reason means (ErrImagePull,
 * ImagePullBackOff, InvalidImageName -> image-pull; CrashLoopBackOff ->
 * crash-loop), or NULL. */
const char *an_waiting_blocker(const char *waiting_reason);

/* The blocker an event means, or NULL:
 *   FailedCreatePodSandBox `... no runtime for "<handler>" is configured`
 *     (the kubelet: containerd did not load the RuntimeClass's handler)
 *     -> runtime-handler-missing; any other sandbox failure -> sandbox-failed;
 *   FailedCreate `Error creating: pods "<name>" is forbidden: pod rejected:
 *     RuntimeClass "<name>" not found` (the DaemonSet controller, refused by
 *     the API server; k8s-cases/real-1.32.13/lifecycle-and-backoff.txt)
 *     -> runtimeclass-missing; another "is forbidden" (quota, admission)
 *     -> pod-create-forbidden; any other FailedCreate -> pod-create-failed.
 * When `name` is not NULL it receives the handler or RuntimeClass named
 * (size bytes; "" when none). */
const char *an_event_blocker(const char *reason, const char *message, char *name, size_t size);

#endif

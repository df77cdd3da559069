/* `gpuop why-pending NAMESPACE/POD`: where the chain from device plugin to
 * running GPU pod breaks, read top-down (gpu-node-facts.md 6):
 *
 *   scheduler           the pod is not bound and the resource it wants is
 *                       advertised somewhere: taints, affinity, free slots;
 *   node-advertisement  no node advertises the resource and no device plugin
 *                       pod is visibly failing (registration, socket mount);
 *   device-plugin       no node advertises it and a plugin pod is not Ready
 *                       (CrashLoopBackOff, Init:..., ContainerCreating);
 *   runtime-handler     a sandbox cannot start: FailedCreatePodSandBox
 *                       `no runtime for "nvidia" is configured`, or the node
 *                       reports status.runtimeHandlers without the handler;
 *   kubelet-admission   the kubelet refused the bound pod
 *                       (UnexpectedAdmissionError);
 *   none                the pod is scheduled and nothing above is wrong.
 *
 *   an_why_pending *b = an_why_pending_new(pod, &err);
 *   ... add nodes, pods, events, runtimeclasses in any order ...
 *   json_t *report = an_why_pending_finish(b, &err);
 *
 * Other pods are reduced to per-node request sums, except device plugin pods
 * (name or a label value containing "nvidia-device-plugin"), kept as small
 * records.
 *
 * Report (`-o json`):
 *   {"pod": "ns/name", "resource": "nvidia.com/gpu" or null,
 *    "requests": {"nvidia.com/gpu": "1", ...}, "node": bound node or null,
 *    "scheduler": {"condition": {"status", "reason", "message"} or null,
 *                  "event": latest FailedScheduling message or null,
 *                  "parsed": an_sched_message_parse() or null, "blocker"},
 *    "nodes": [{"name", "ready", "capacity", "allocatable" (null = absent),
 *               "requested", "free", "runtime_handlers": [...] or null}],
 *    "advertising": number of nodes with allocatable above 0,
 *    "device_plugin_pods": [{"pod", "node", "phase", "status", "ready",
 *                            "event"}],
 *    "runtime_class": {"name", "handler" (null: RuntimeClass not found),
 *                      "nodes_with", "nodes_without", "nodes_unknown"} or null,
 *    "kubelet_events": [{"reason", "message"}],
 *    "layer": one of the codes above,
 *    "next": [{"code", "target", "text"}],
 *    "verdict": "...", "evidence": [...], "warnings": [...]} */
#ifndef GPUOP_ANALYZE_WHY_PENDING_H
#define GPUOP_ANALYZE_WHY_PENDING_H

#include <jansson.h>

#include "analyze/analyze.h"
#include "util/error.h"

typedef struct an_why_pending an_why_pending;

/* NULL with err set when `pod` is not a Pod object. */
an_why_pending *an_why_pending_new(const json_t *pod, gp_error *err);
void an_why_pending_add_node(an_why_pending *b, const json_t *node);
void an_why_pending_add_pod(an_why_pending *b, const json_t *pod);
void an_why_pending_add_event(an_why_pending *b, const json_t *event);
void an_why_pending_add_runtimeclass(an_why_pending *b, const json_t *runtimeclass);
json_t *an_why_pending_finish(an_why_pending *b, gp_error *err);
void an_why_pending_free(an_why_pending *b);

/* AN_LAB prints LAYER=<code> and BLOCKER=<code> lines. malloc'd; NULL when
 * out of memory. */
char *an_why_pending_render(const json_t *report, an_format fmt);

#endif

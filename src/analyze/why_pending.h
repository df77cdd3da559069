/* `gpuop why-pending NAMESPACE/POD`: where the chain from device plugin to
 * running GPU pod breaks, read top-down (gpu-node-facts.md 6):
 *
 *   scheduler           the pod is not bound and the resource it wants is
 *                       advertised somewhere: taints, affinity, free slots
 *                       (with the pod's selection against the nodes' labels
 *                       and taints, and a fix, when the scheduler names a
 *                       taint or a selector: see placement.h);
 *   resource-name       no node advertises the resource, but nodes serve it
 *                       under another name: <name>.shared (renameByDefault,
 *                       1.4) or, for nvidia.com/gpu, MIG devices (2.3);
 *   node-advertisement  no node advertises the resource and no device plugin
 *                       pod is visibly failing (registration, socket mount);
 *   device-plugin       no node advertises it and a plugin pod is not Ready
 *                       (CrashLoopBackOff, Init:..., ContainerCreating);
 *   runtime-handler     a sandbox cannot start: FailedCreatePodSandBox
 *                       `no runtime for "<handler>" is configured`, or the
 *                       node reports status.runtimeHandlers without the
 *                       handler;
 *   kubelet-admission   the kubelet refused the bound pod
 *                       (UnexpectedAdmissionError);
 *   none                the pod is scheduled and nothing above is wrong.
 *
 *   an_why_pending *b = an_why_pending_new(pod, &err);
 *   ... add nodes, pods, events, runtimeclasses in any order ...
 *   json_t *report = an_why_pending_finish(b, &err);
 *
 * Other pods are reduced to per-node request sums, except device plugin pods
 * (an_is_device_plugin_pod), kept as small records. Events kept are the
 * warnings (and FailedScheduling) on pods, matched by uid: the CLI lists
 * those of the pod's namespace and of the device plugin pods' namespaces.
 *
 * Report (`-o json`):
 *   {"schema": "gpuop/why-pending/1", "pod": "ns/name",
 *    "resource": "nvidia.com/gpu" or null,
 *    "requests": {"nvidia.com/gpu": "1", ...}, "node": bound node or null,
 *    "scheduler": {"condition": {"status", "reason", "message"} or null,
 *                  "event": latest FailedScheduling message or null,
 *                  "parsed": an_sched_message_parse() or null, "blocker"},
 *    "nodes": [{"name", "ready", "unschedulable", "capacity", "allocatable"
 *               (null = absent), "requested", "free",
 *               "other_resources": {"nvidia.com/gpu.shared": "16"},
 *               "runtime_handlers": [...] or null}],
 *    "advertising": number of nodes with allocatable above 0,
 *    "device_plugin_pods": [{"pod", "node", "phase", "status", "ready",
 *                            "event"}],
 *    "runtime_class": {"name", "handler" (null: RuntimeClass not found),
 *                      "nodes_with", "nodes_without", "nodes_unknown"} or null,
 *    "kubelet_events": [{"reason", "message"}],
 *    "placement": see placement.h (only for a taint or selector blocker),
 *    "layer": one of the codes above,
 *    "next": [{"code", "target", "args", "text"}],
 *    "verdict": "...", "evidence": [...], "warnings": [...]}
 *
 * Next-step codes: scheduler, fix-spec, kubelet-log, plugin-log (kubectl
 * logs -n NS POD), plugin-events (kubectl describe pod, for a pod that
 * never started), socket-mount, containerd-check (names the handler
 * missing), admission, none, gpus-lost (the resource reads 0: registered,
 * then gone), never-registered (absent), resource-renamed, resource-mig. */
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
/* The namespaces of the device plugin pods added so far (a new array):
 * their events say why a plugin does not run. */
json_t *an_why_pending_plugin_namespaces(const an_why_pending *b);

/* AN_LAB prints LAYER=<code> and BLOCKER=<code> lines. malloc'd; NULL when
 * out of memory. */
char *an_why_pending_render(const json_t *report, an_format fmt);

/* ---- every Pending GPU pod at once (`why-pending --all`) ----
 *
 * A target is every pod in phase Pending that asks for an nvidia.com/
 * resource; nodes, pods, events and RuntimeClasses are added as for one
 * pod, in any order, and read once for all targets.
 *
 * Report (`-o json`):
 *   {"schema": "gpuop/why-pending-all/1", "pods": number of targets,
 *    "groups": [{"layer", "blocker", "resource", "count", "verdict" (the
 *                first pod's), "pods": ["ns/name", ...], "next": the first
 *                pod's next steps}],     largest group first
 *    "reports": [{"pod", "layer", "blocker", "verdict", "next"}],
 *    "warnings": [...]}
 * AN_LAB prints one "LAYER=... BLOCKER=... PODS=n" line per group. */
typedef struct an_pending_all an_pending_all;
an_pending_all *an_pending_all_new(gp_error *err);
void an_pending_all_add_node(an_pending_all *b, const json_t *node);
void an_pending_all_add_pod(an_pending_all *b, const json_t *pod);
void an_pending_all_add_event(an_pending_all *b, const json_t *event);
void an_pending_all_add_runtimeclass(an_pending_all *b, const json_t *runtimeclass);
json_t *an_pending_all_finish(an_pending_all *b, gp_error *err);
void an_pending_all_free(an_pending_all *b);
char *an_pending_all_render(const json_t *report, an_format fmt);

#endif

/* `gpuop nodes`: what each node advertises of one extended resource
 * (default nvidia.com/gpu) and of every other GPU resource (gpu.shared,
 * mig-*), what pods on it request, what is free to a new pod, its GPU
 * Feature Discovery labels, status, device plugin pod and GPU Operator
 * state, and the nodes to worry about (gpu-node-facts.md 1.4, 1.6, 2.3,
 * 2.4, 5 and 6.1).
 *
 *   an_nodes *b = an_nodes_new("nvidia.com/gpu", &err);
 *   ... an_nodes_add_node(b, node) / an_nodes_add_pod(b, pod), any order ...
 *   json_t *report = an_nodes_finish(b, &err);
 *   char *text = an_nodes_render(report, AN_TEXT);
 *
 * The builder keeps per node only its summary and the sum of requests; a
 * pod is read once and forgotten (device plugin pods leave their status on
 * their node, Pending pods refused for want of the resource a count).
 *
 * Report (`-o json`):
 *   {"schema": "gpuop/nodes/1", "resource": "nvidia.com/gpu",
 *    "nodes": [{"name", "status" (kubectl's: Ready, NotReady, Unknown,
 *                ",SchedulingDisabled" when cordoned),
 *               "ready" ("True"|"False"|"Unknown"|""), "ready_reason",
 *               "ready_message", "unschedulable": bool,
 *               "taints": ["key=value:effect"], "seen": bool (false: only
 *               pods named it), "schedulable": Ready and not cordoned,
 *               "capacity", "allocatable": quantity text or null (absent),
 *               "advertisement": "advertised"|"zero"|"absent",
 *               "other_resources": {"nvidia.com/gpu.shared": {"capacity",
 *                                   "allocatable"}},
 *               "requested", "idle" (allocatable - requested),
 *               "free" (idle, 0 when not schedulable): quantity text,
 *               "pods": pods requesting it,
 *               "labels": {"product","memory","count","replicas",
 *                          "sharing_strategy","driver_version"} (null = absent),
 *               "operator": {"labels": {nvidia.com/gpu.deploy.*,
 *                            mig.config, mig.config.state,
 *                            gpu-driver-upgrade-state}, "mig_config",
 *                            "mig_config_state", "driver_upgrade_state",
 *                            "device_plugin": {"pod", "status", "ready"}
 *                            or null},
 *               "flags": [{"code", "severity": "error"|"warning",
 *                          "args": [...], "message"}]}],   sorted by name
 *    "summary": {"nodes", "advertising", "allocatable", "requested", "free",
 *                "flagged" (nodes with an error), "warned" (only warnings),
 *                "device_plugin_pods", "pending"},
 *    "warnings": ["pod gpu-lab/x: ..."], "evidence": [...]}
 *
 * Errors: not-ready (a GPU node whose Ready is not True), gpus-lost (Ready,
 * the resource reads 0: the plugin registered and is gone; not when the
 * node serves it renamed or as MIG devices), never-registered (GPU labels,
 * no GPU resource at all), unhealthy-devices (capacity above allocatable),
 * driver-label-missing (nvidia.com/cuda.driver-version.full absent while
 * the node still takes GPU pods), plain-requests-pending (Pending pods the
 * scheduler refused for want of the resource that a renamed or MIG node
 * serves under another name), gate-off (gpu.deploy.device-plugin or
 * operands false), gate-paused (paused-for-mig-change while
 * mig.config.state is not pending or rebooting), mig-config-failed,
 * driver-upgrade (upgrade-failed). Warnings: cordoned, renamed
 * (renameByDefault: <resource>.shared), mig-resources, gate-off (any other
 * operand, the driver among them), gate-paused (during a MIG change),
 * driver-upgrade (in progress), no-device-plugin (GPU labels, no plugin
 * pod for the node while plugin pods run elsewhere, no gate to say why),
 * device-plugin-not-ready.
 *
 * Renderings: AN_TEXT a verdict line, the table, the GPU Operator lines,
 * the flags and the evidence; AN_LAB the table of lab step 6 as `kubectl
 * get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable.
 * nvidia\.com/gpu` prints it. */
#ifndef GPUOP_ANALYZE_NODES_H
#define GPUOP_ANALYZE_NODES_H

#include <jansson.h>

#include "analyze/analyze.h"
#include "analyze/common.h"
#include "util/error.h"

typedef struct an_nodes an_nodes;

/* resource NULL means nvidia.com/gpu. */
an_nodes *an_nodes_new(const char *resource, gp_error *err);
void an_nodes_add_node(an_nodes *b, const json_t *node);
void an_nodes_add_pod(an_nodes *b, const json_t *pod);
/* NULL with err set when memory ran out while adding or finishing. */
json_t *an_nodes_finish(an_nodes *b, gp_error *err);
void an_nodes_free(an_nodes *b);
/* malloc'd text; NULL when out of memory. */
char *an_nodes_render(const json_t *report, an_format fmt);

#endif

/* Why a pod's node selection keeps it off the nodes that have what it asks
 * for, and the change that would let it on (why-pending's scheduler layer,
 * when the blocker is a taint or a selector: a spec mismatch).
 *
 * The pod's Node-Selectors and Tolerations are shown as `kubectl describe
 * pod` prints them, its required node affinity as label requirements
 * ("key in (a,b)", "!key", "key>5"), and each candidate node's Labels (the
 * ones the pod's selection names), Taints and Unschedulable as `kubectl
 * describe node` does. The rules are kube/'s: kube_node_affinity_matches,
 * kube_requirement_matches, kube_untolerated_taint (NoSchedule and
 * NoExecute, as the TaintToleration filter reads them).
 *
 * The section (JSON):
 *   {"pod": {"node_selector": {...}, "affinity": ["term 1: a in (b)", ...],
 *            "tolerations": ["key=value:effect op=Exists for 300s", ...]},
 *    "nodes": [{"name", "labels": {key: value or null}, "taints": [...],
 *               "unschedulable", "selector_matches": bool,
 *               "mismatches": ["nodeSelector nvidia.com/gpu.product=A100:
 *                               the node has NVIDIA-A100-SXM4-40GB", ...],
 *               "untolerated": ["nvidia.com/gpu=present:NoSchedule"]}],
 *    "fix": {"yaml": "...", "where": "...", "command": "..." or null} or null}
 *
 * The fix tolerates the untolerated taints of the candidates (not the node
 * lifecycle's node.kubernetes.io/ taints: those say the node is down, and
 * the fix is the node) and sets each nodeSelector key the candidates do
 * not satisfy to the first candidate's value; "where" is the pod template
 * of the pod's controller, or the pod itself (only tolerations can be added
 * to a live pod: `kubectl patch` then, else re-create it). */
#ifndef GPUOP_ANALYZE_PLACEMENT_H
#define GPUOP_ANALYZE_PLACEMENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct an_placement_node {
    const char *name;
    const json_t *labels; /* metadata.labels */
    const json_t *taints; /* spec.taints */
    bool unschedulable;
} an_placement_node;

/* Sets keys[key] = true for every label key the pod spec's node selection
 * names (nodeSelector, required node affinity): the node labels the
 * section reads. */
void an_placement_label_keys(const json_t *pod_spec, json_t *keys);

/* A new reference; NULL when out of memory. */
json_t *an_placement(const json_t *pod, const an_placement_node *nodes, size_t n);

/* The section in text, indented by two. */
void an_placement_render(const json_t *placement, FILE *out);

#endif

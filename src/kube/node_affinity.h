/* Whether a pod's node selection lets it onto a node: nodeaffinity.
 * GetRequiredNodeAffinity(pod).Match(node) of
 * k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go
 * (v0.32), which kube-scheduler's NodeAffinity filter and the DaemonSet
 * controller's NodeShouldRunDaemonPod both call.
 *
 * spec.nodeSelector must match exactly (every pair, as
 * labels.SelectorFromSet); then, when the pod has a required node affinity,
 * one of its nodeSelectorTerms must match (LazyErrorNodeSelector: terms are
 * ORed, an empty term selects nothing, and a term that does not parse is
 * skipped). A term's matchExpressions are label requirements
 * (kube/label_selector.h, with Gt and Lt); its matchFields are In or NotIn
 * with exactly one value against the node's fields, of which there is one,
 * metadata.name (another key reads as ""). A node without a name has no
 * fields, and then matchFields are not checked.
 *
 * The pieces are passed in already looked up, so that the scheduler reads
 * a pod's fields once per decision and a node's once per pass. */
#ifndef GPUOP_KUBE_NODE_AFFINITY_H
#define GPUOP_KUBE_NODE_AFFINITY_H

#include <jansson.h>
#include <stdbool.h>

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
 * of a pod spec (the v1.NodeSelector), or NULL. */
const json_t *kube_required_node_affinity(const json_t *pod_spec);

/* LazyErrorNodeSelector.Match over a v1.NodeSelector, for a node with
 * these labels (an object or NULL) and this name. */
bool kube_node_selector_matches(const json_t *node_selector, const json_t *labels,
                                const char *node_name);

/* RequiredNodeAffinity.Match: `node_selector` is the pod's
 * spec.nodeSelector (object or NULL), `required` its required node affinity
 * (NULL when none). */
bool kube_node_affinity_matches(const json_t *node_selector, const json_t *required,
                                const json_t *labels, const char *node_name);

#endif

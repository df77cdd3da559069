/* Label requirements in their JSON form: a matchExpressions element
 * ({key, operator, values}) of a metav1.LabelSelector or of a
 * v1.NodeSelectorTerm, and a whole LabelSelector (matchLabels and
 * matchExpressions).
 *
 * Checked as labels.NewRequirement checks them (k8s.io/apimachinery
 * pkg/labels/selector.go, v0.32): the key is a qualified name; every value
 * is a label value (also for Gt and Lt, so "-1" is refused); In and NotIn
 * need values, Exists and DoesNotExist none, Gt and Lt exactly one that
 * strconv.ParseInt reads. Matched as Requirement.Matches: a missing label
 * fails In, Exists, Gt and Lt and passes NotIn and DoesNotExist; Gt and Lt
 * compare the label as an int64 (a label that is not one fails).
 *
 * The operators a LabelSelector takes are In, NotIn, Exists and
 * DoesNotExist (metav1.LabelSelectorAsSelector); a node selector also takes
 * Gt and Lt (nodeSelectorRequirementsAsSelector in component-helpers
 * scheduling/corev1/nodeaffinity). */
#ifndef GPUOP_KUBE_LABEL_SELECTOR_H
#define GPUOP_KUBE_LABEL_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>

/* Which operator list a requirement is read against. */
typedef enum kube_requirement_kind {
    KUBE_REQ_LABEL_SELECTOR, /* In, NotIn, Exists, DoesNotExist */
    KUBE_REQ_NODE_SELECTOR,  /* and Gt, Lt */
} kube_requirement_kind;

/* The operator is one the kind takes and NewRequirement accepts the key and
 * values. */
bool kube_requirement_valid(const json_t *req, kube_requirement_kind kind);

/* Requirement.Matches(labels) of a valid requirement; false for one that
 * is not valid (the selector it is part of does not parse, and then
 * matches nothing). `labels` is an object of strings or NULL; a label whose
 * value is not a string is absent. */
bool kube_requirement_matches(const json_t *req, const json_t *labels, kube_requirement_kind kind);

/* LabelSelectorAsSelector(selector).Matches(labels): a missing (NULL or
 * null) selector matches nothing, an empty one everything; matchLabels
 * pairs and matchExpressions are ANDed. *invalid is set (and false
 * returned) when the conversion would fail: a key, value or operator it
 * refuses. */
bool kube_label_selector_object_matches(const json_t *selector, const json_t *labels,
                                        bool *invalid);

#endif

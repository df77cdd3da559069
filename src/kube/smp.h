/* Kubernetes strategic merge patch over jansson values.
 *
 * What `kubectl patch` (the default type), `kubectl apply`, `set image`,
 * `set resources`, `taint`, `cordon` and `rollout restart` send for built-in
 * kinds (application/strategic-merge-patch+json). The algorithm is
 * k8s.io/apimachinery's strategicpatch (v0.32, the library kubectl 1.32 and the
 * 1.32 API server run), checked case by case against `kubectl patch --local`:
 *
 * - objects merge key by key; a null member deletes the key;
 * - a list whose field has patch strategy "merge" and a merge key (containers
 *   by name, conditions by type, ...) merges element by element; one with
 *   strategy "merge" and no key (metadata.finalizers) is a set union; every
 *   other list is replaced whole;
 * - directives: "$patch": "replace" / "delete" in an object and in a keyed
 *   list's element, "$setElementOrder/<field>", "$deleteFromPrimitiveList/
 *   <field>" and "$retainKeys";
 * - order: server-only elements keep their order, a patched element stays
 *   where it was, a new one goes right after the patch element before it,
 *   and new elements at the head of the patch go to the front.
 *
 * No "$..." key of the patch reaches the result: where the Go library copies
 * a part of the patch through unchanged (an atomic list, a new keyed-list
 * element, a "$patch": "replace" object) the result holds what the API server
 * stores after decoding it into the typed object, which drops the unknown
 * "$..." members and the null ones.
 *
 * Where the Go library's answer is not fixed this one is: a list and its
 * "$deleteFromPrimitiveList" in the same object (Go applies the two in random
 * order) get the deletion last. Where Go refuses a field its struct lacks
 * (when target and patch both hold an object or a list there), this merges
 * the objects and replaces the list. */
#ifndef GPUOP_KUBE_SMP_H
#define GPUOP_KUBE_SMP_H

#include <jansson.h>

#include "util/error.h"

/* Applies `patch` to `target` and returns the result, a new value the caller
 * owns; neither input is modified and the result shares nothing with them.
 * `kind` picks the schema: "Pod", "Node", "Namespace", "ConfigMap", "Event",
 * "ServiceAccount", "DaemonSet", "ControllerRevision", "RuntimeClass",
 * "Lease". Any other kind (or NULL) has no schema: objects still merge and
 * directives still apply, but every list is replaced whole, as in a JSON
 * merge patch. A NULL target is treated as {}.
 *
 * Returns NULL with `err` set when the patch is not an object, the target is
 * not an object, or the patch is one the API server refuses: a "$patch" value
 * other than "replace" or "delete" (the library accepts "merge" nowhere), an
 * element of a keyed list without its merge key, a "$setElementOrder" list
 * whose order disagrees with the patch list, a member missing from
 * "$retainKeys", elements of different types in a merged list, a malformed
 * directive name. */
json_t *kube_strategic_merge_patch(const json_t *target, const json_t *patch, const char *kind,
                                   gp_error *err);

#endif

/* The garbage collector and the namespace controller's decisions, as pure
 * functions over a snapshot of every stored object (k8s-semantics 2.12):
 * given what exists now they return the requests to send; the runtime sends
 * them through the API server and calls again on the next snapshot, so each
 * call makes one step of progress and a later one sees its effect.
 *
 * A snapshot is an array of {"resource": "pods", "group": "", "object":
 * {...}}, one per stored object of every resource. It must be complete: an
 * owner missing from it counts as deleted, and its dependents are collected.
 *
 * Every action names its target the same way: "resource", "group",
 * "namespace" ("" for a cluster-scoped object), "name" and "uid" (to send as
 * a precondition, as the real controllers do). The operations:
 *
 *   {"op": "delete", ..., "propagationPolicy": "Background"|"Foreground"|
 *    "Orphan"}
 *   {"op": "patch-owner-references", ..., "patchType":
 *    "application/strategic-merge-patch+json", "patch": {"metadata":
 *    {"ownerReferences": [{"$patch": "delete", "uid": "<owner>"}, ...],
 *    "uid": "<dependent>"}}}     (garbagecollector/patch.go's body)
 *   {"op": "patch-finalizers", ..., "patchType":
 *    "application/merge-patch+json", "patch": {"metadata":
 *    {"resourceVersion": "<rv>", "finalizers": [<the rest>] or null}}}
 *   {"op": "patch-status", ..., "patchType":
 *    "application/strategic-merge-patch+json", "patch": {"status": {...}}}
 *   {"op": "finalize", ..., "body": <the namespace, spec.finalizers without
 *    "kubernetes">}                              (PUT .../namespaces/NAME/finalize)
 *
 * Both return a new array (empty when there is nothing to do), or NULL when
 * memory runs out. */
#ifndef GPUOP_CONTROLLERS_GARBAGE_COLLECTOR_INTERNAL_H
#define GPUOP_CONTROLLERS_GARBAGE_COLLECTOR_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

/* pkg/controller/garbagecollector, attemptToDeleteItem and its neighbours.
 * An object's owners (metadata.ownerReferences, matched by uid; an owner in
 * another namespace, or a namespaced owner of a cluster-scoped object, is
 * absent) are each
 *   absent ("dangling"),
 *   waiting: being deleted with the "foregroundDeletion" finalizer, or
 *   solid: any other.
 * For an object that is not being deleted:
 *   - with a solid owner and dangling or waiting ones: patch-owner-references
 *     dropping those;
 *   - with waiting owners and dependents of its own: delete, Foreground;
 *   - otherwise (every owner absent or waiting): delete with the policy its
 *     own finalizers ask for ("orphan": Orphan, "foregroundDeletion":
 *     Foreground), else Background.
 * For an object being deleted:
 *   - "orphan" finalizer: patch-owner-references on every dependent still
 *     naming it; once none does, patch-finalizers dropping "orphan";
 *   - "foregroundDeletion" finalizer: once no dependent names it with
 *     blockOwnerDeletion true, patch-finalizers dropping it. Its dependents
 *     are deleted by the rule above meanwhile.
 * A dependent already being deleted gets no new delete; it still blocks a
 * foreground owner until it is gone. Actions come in snapshot order. */
json_t *ctl_gc_collect(const json_t *snapshot);

/* The same for a snapshot that may leave out objects that are neither being
 * deleted nor held by finalizers and own nothing it knows of: an owner
 * reference whose uid is not in the snapshot is solid when
 * exists(ud, dependent, ref) says the owner is there (as the collector's
 * isDangling looks it up), dangling otherwise. */
typedef bool ctl_gc_owner_exists_fn(void *ud, const json_t *dependent, const json_t *ref);
json_t *ctl_gc_collect_with(const json_t *snapshot, ctl_gc_owner_exists_fn *exists, void *ud);

/* pkg/controller/namespace (namespaced_resources_deleter.go) for one
 * namespace `ns` that is being deleted (deletionTimestamp set or phase
 * Terminating; otherwise the array is empty):
 *   - delete (Background) every object of the snapshot in it that is not
 *     being deleted already;
 *   - patch-status: phase Terminating if it is not, and the five deletion
 *     conditions (NamespaceDeletionDiscoveryFailure,
 *     NamespaceDeletionGroupVersionParsingFailure,
 *     NamespaceDeletionContentFailure, NamespaceContentRemaining,
 *     NamespaceFinalizersRemaining) with the controller's reasons and
 *     messages, e.g. "Some resources are remaining: pods. has 2 resource
 *     instances". What remains is what these deletes leave behind: objects
 *     with finalizers or already deleting, and bound pods that are not
 *     Succeeded or Failed (they get a grace period). Only new or changed
 *     conditions are sent; lastTransitionTime is `now` for a new status;
 *   - finalize, once the snapshot holds nothing in the namespace and its
 *     spec.finalizers has "kubernetes". The API server removes the
 *     namespace when the finalizers are gone. */
json_t *ctl_ns_actions(const json_t *ns, const json_t *snapshot, time_t now);

#endif

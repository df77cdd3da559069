/* The namespace controller's decisions, as a pure function over a snapshot
 * of every stored object, as garbage_collector_internal.h describes it: it
 * returns the actions (actions_internal.h) that make one step of progress. */
#ifndef GPUOP_CONTROLLERS_NAMESPACE_INTERNAL_H
#define GPUOP_CONTROLLERS_NAMESPACE_INTERNAL_H

#include <jansson.h>
#include <time.h>

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

/* The garbage collector's decisions, as pure functions over a snapshot of
 * every stored object (k8s-semantics 2.12): given what exists now they return
 * the requests to send (actions_internal.h); the runtime sends them through
 * the API server and calls again on the next snapshot, so each call makes one
 * step of progress and a later one sees its effect.
 *
 * A snapshot is an array of {"resource": "pods", "group": "", "object":
 * {...}}, one per stored object of every resource. It must be complete: an
 * owner missing from it counts as deleted, and its dependents are collected. */
#ifndef GPUOP_CONTROLLERS_GARBAGE_COLLECTOR_INTERNAL_H
#define GPUOP_CONTROLLERS_GARBAGE_COLLECTOR_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

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

#endif

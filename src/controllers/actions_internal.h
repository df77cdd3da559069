/* The actions the garbage collector and the namespace controller decide on
 * (garbage_collector.c, namespace.c), and the helpers that build them.
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
 * The decisions return a new array of them (empty when there is nothing to
 * do), or NULL when memory runs out. The builders below take `ok` and leave
 * it false once memory has run out, so a decision checks it once at the end. */
#ifndef GPUOP_CONTROLLERS_ACTIONS_INTERNAL_H
#define GPUOP_CONTROLLERS_ACTIONS_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#define CTL_PATCH_STRATEGIC "application/strategic-merge-patch+json"
#define CTL_PATCH_MERGE     "application/merge-patch+json"

/* A snapshot entry's object, or NULL when it has none. */
const json_t *ctl_action_object(const json_t *entry);

/* json_array_append_new / json_object_set_new that clear *ok on failure. */
void ctl_push(bool *ok, json_t *array, json_t *value);
void ctl_put(bool *ok, json_t *obj, const char *key, json_t *value);

/* {"op", "resource", "group", "namespace", "name", "uid"} for an entry. */
json_t *ctl_action(const char *op, const json_t *entry);

/* Appends a delete with the propagation policy. */
void ctl_action_delete(bool *ok, json_t *actions, const json_t *entry, const char *policy);

/* Appends a patch action; takes `patch` (NULL when memory ran out). */
void ctl_action_patch(bool *ok, json_t *actions, const char *op, const json_t *entry,
                      const char *type, json_t *patch);

#endif

/* The garbage collector: one pass over a snapshot, producing the requests
 * the real one would send next. The real one keeps a dependency graph
 * between passes; here the snapshot is indexed afresh each time (by uid, and
 * which uids are owners), which costs a hash table per call and leaves
 * nothing to go stale. */
#include "controllers/garbage_collector_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/actions_internal.h"
#include "kube/json.h"

#define FINALIZER_ORPHAN     "orphan"
#define FINALIZER_FOREGROUND "foregroundDeletion"

static bool nonempty(const char *s)
{
    return s && *s;
}

static bool has_finalizer(const json_t *obj, const char *finalizer)
{
    return kube_has_string(json_object_get(kube_obj(obj, "metadata"), "finalizers"), finalizer);
}

/* garbagecollector/patch.go deleteOwnerRefStrategicMergePatch. */
static void emit_drop_owners(bool *ok, json_t *actions, const json_t *entry, const json_t *uids)
{
    json_t *refs = json_array();
    size_t i;
    const json_t *uid;
    json_array_foreach(uids, i, uid)
    {
        if (refs) ctl_push(ok, refs, json_pack("{s:s, s:O}", "$patch", "delete", "uid", uid));
    }
    const char *self = kube_str(kube_obj(ctl_action_object(entry), "metadata"), "uid");
    ctl_action_patch(ok, actions, "patch-owner-references", entry, CTL_PATCH_STRATEGIC,
                     json_pack("{s:{s:o, s:s}}", "metadata", "ownerReferences", refs, "uid", self));
}

/* The finalizers without `drop_a` and `drop_b` (either may be NULL), as
 * removeFinalizer's JSON merge patch sends them: the resourceVersion it read,
 * and null for none left. */
static void emit_drop_finalizers(bool *ok, json_t *actions, const json_t *entry, const char *drop_a,
                                 const char *drop_b)
{
    const json_t *m = kube_obj(ctl_action_object(entry), "metadata");
    json_t *rest = json_array();
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(m, "finalizers"), i, f)
    {
        const char *name = json_string_value(f);
        if ((drop_a && name && !strcmp(name, drop_a)) || (drop_b && name && !strcmp(name, drop_b)))
            continue;
        if (rest) ctl_push(ok, rest, json_incref((json_t *)f));
    }
    if (rest && json_array_size(rest) == 0) {
        json_decref(rest);
        rest = json_null();
    }
    json_t *md = json_object();
    if (md && nonempty(kube_str_or_null(m, "resourceVersion")))
        ctl_put(ok, md, "resourceVersion", json_string(kube_str_or_null(m, "resourceVersion")));
    if (md)
        ctl_put(ok, md, "finalizers", rest);
    else
        json_decref(rest);
    ctl_action_patch(ok, actions, "patch-finalizers", entry, CTL_PATCH_MERGE,
                     md ? json_pack("{s:o}", "metadata", md) : NULL);
}

/* ---- the garbage collector ---- */

typedef struct ctl_gc_index {
    const json_t *snapshot;
    ctl_gc_owner_exists_fn *exists; /* for owners the snapshot leaves out */
    void *exists_ud;
    json_t *by_uid; /* uid -> position in the snapshot */
    json_t *owners; /* uids some object names as its owner -> true */
} ctl_gc_index;

static void index_free(ctl_gc_index *ix)
{
    json_decref(ix->by_uid);
    json_decref(ix->owners);
}

static bool index_build(ctl_gc_index *ix, const json_t *snapshot)
{
    ix->snapshot = snapshot;
    ix->by_uid = json_object();
    ix->owners = json_object();
    bool ok = ix->by_uid && ix->owners;
    size_t i;
    const json_t *entry;
    json_array_foreach(snapshot, i, entry)
    {
        const json_t *m = kube_obj(ctl_action_object(entry), "metadata");
        const char *uid = kube_str_or_null(m, "uid");
        if (ok && nonempty(uid)) ctl_put(&ok, ix->by_uid, uid, json_integer((json_int_t)i));
        size_t j;
        const json_t *ref;
        json_array_foreach(json_object_get(m, "ownerReferences"), j, ref)
        {
            const char *owner = kube_str_or_null(ref, "uid");
            if (ok && nonempty(owner)) ctl_put(&ok, ix->owners, owner, json_true());
        }
    }
    if (!ok) index_free(ix);
    return ok;
}

static const json_t *lookup(const ctl_gc_index *ix, const char *uid)
{
    const json_t *pos = uid ? json_object_get(ix->by_uid, uid) : NULL;
    return pos ? ctl_action_object(json_array_get(ix->snapshot, (size_t)json_integer_value(pos)))
               : NULL;
}

typedef enum { OWNER_SOLID, OWNER_DANGLING, OWNER_WAITING } owner_state;

/* classifyReferences for one reference of `dependent`. */
static owner_state classify(const ctl_gc_index *ix, const json_t *dependent, const json_t *ref)
{
    const json_t *owner = lookup(ix, kube_str_or_null(ref, "uid"));
    /* left out of the snapshot (an object nothing else needs, neither
     * deleted nor finalized): asked for, as the collector's isDangling
     * looks an owner up */
    if (!owner)
        return ix->exists && ix->exists(ix->exists_ud, dependent, ref) ? OWNER_SOLID
                                                                       : OWNER_DANGLING;
    /* A namespaced owner exists only for dependents of its own namespace
     * (the collector reports OwnerRefInvalidNamespace and treats it as
     * absent). */
    const char *owner_ns = kube_str_or_null(kube_obj(owner, "metadata"), "namespace");
    const char *dep_ns = kube_str_or_null(kube_obj(dependent, "metadata"), "namespace");
    if (nonempty(owner_ns) && (!nonempty(dep_ns) || strcmp(owner_ns, dep_ns) != 0))
        return OWNER_DANGLING;
    if (kube_deleting(owner) && has_finalizer(owner, FINALIZER_FOREGROUND)) return OWNER_WAITING;
    return OWNER_SOLID;
}

/* attemptToDeleteItem for an object that is not being deleted. */
static void collect_dependent(bool *ok, json_t *actions, const ctl_gc_index *ix,
                              const json_t *entry)
{
    const json_t *obj = ctl_action_object(entry);
    const json_t *refs = json_object_get(kube_obj(obj, "metadata"), "ownerReferences");
    if (json_array_size(refs) == 0) return;
    json_t *drop = json_array();
    if (!drop) {
        *ok = false;
        return;
    }
    size_t solid = 0, waiting = 0, i;
    const json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        owner_state s = classify(ix, obj, ref);
        if (s == OWNER_SOLID) {
            solid++;
            continue;
        }
        waiting += s == OWNER_WAITING;
        const json_t *uid = json_object_get(ref, "uid");
        if (json_is_string(uid)) ctl_push(ok, drop, json_incref((json_t *)uid));
    }
    if (solid > 0) {
        if (json_array_size(drop) > 0) emit_drop_owners(ok, actions, entry, drop);
    } else if (waiting > 0 &&
               json_object_get(ix->owners, kube_str(kube_obj(obj, "metadata"), "uid"))) {
        /* Its own dependents go first, so the owner waits for them too. */
        ctl_action_delete(ok, actions, entry, "Foreground");
    } else if (has_finalizer(obj, FINALIZER_ORPHAN)) {
        ctl_action_delete(ok, actions, entry, "Orphan");
    } else if (has_finalizer(obj, FINALIZER_FOREGROUND)) {
        ctl_action_delete(ok, actions, entry, "Foreground");
    } else {
        ctl_action_delete(ok, actions, entry, "Background");
    }
    json_decref(drop);
}

/* Whether `obj` names `uid` as an owner (with blockOwnerDeletion, when
 * `blocking`). */
static bool names_owner(const json_t *obj, const char *uid, bool blocking)
{
    size_t i;
    const json_t *ref;
    json_array_foreach(json_object_get(kube_obj(obj, "metadata"), "ownerReferences"), i, ref)
    {
        if (kube_str_is(ref, "uid", uid) &&
            (!blocking || json_is_true(json_object_get(ref, "blockOwnerDeletion"))))
            return true;
    }
    return false;
}

/* attemptToOrphan and processDeletingDependentsItem for an object being
 * deleted. */
static void collect_deleting(bool *ok, json_t *actions, const ctl_gc_index *ix, const json_t *entry)
{
    const json_t *obj = ctl_action_object(entry);
    const char *uid = kube_str_or_null(kube_obj(obj, "metadata"), "uid");
    bool orphan = has_finalizer(obj, FINALIZER_ORPHAN);
    bool foreground = has_finalizer(obj, FINALIZER_FOREGROUND);
    if (!nonempty(uid) || (!orphan && !foreground)) return;

    json_t *self = json_pack("[s]", uid);
    if (!self) {
        *ok = false;
        return;
    }
    bool named = false, blocked = false;
    size_t i;
    const json_t *other;
    json_array_foreach(ix->snapshot, i, other)
    {
        const json_t *dep = ctl_action_object(other);
        if (!dep || !names_owner(dep, uid, false)) continue;
        named = true;
        blocked = blocked || names_owner(dep, uid, true);
        if (orphan) emit_drop_owners(ok, actions, other, self);
    }
    json_decref(self);
    /* The orphan finalizer goes once no dependent names the owner; the real
     * collector patches and finalizes in one go, but a failed dependent patch
     * must not let the owner go, so here the finalizer waits a round. */
    const char *drop_a = orphan && !named ? FINALIZER_ORPHAN : NULL;
    const char *drop_b = foreground && !blocked ? FINALIZER_FOREGROUND : NULL;
    if (drop_a || drop_b) emit_drop_finalizers(ok, actions, entry, drop_a, drop_b);
}

json_t *ctl_gc_collect(const json_t *snapshot)
{
    return ctl_gc_collect_with(snapshot, NULL, NULL);
}

json_t *ctl_gc_collect_with(const json_t *snapshot, ctl_gc_owner_exists_fn *exists, void *ud)
{
    ctl_gc_index ix;
    if (!index_build(&ix, snapshot)) return NULL;
    ix.exists = exists;
    ix.exists_ud = ud;
    json_t *actions = json_array();
    bool ok = actions != NULL;
    size_t i;
    const json_t *entry;
    json_array_foreach(snapshot, i, entry)
    {
        const json_t *obj = ctl_action_object(entry);
        if (!ok || !obj) continue;
        if (kube_deleting(obj))
            collect_deleting(&ok, actions, &ix, entry);
        else
            collect_dependent(&ok, actions, &ix, entry);
    }
    index_free(&ix);
    if (ok) return actions;
    json_decref(actions);
    return NULL;
}

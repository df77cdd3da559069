/* Garbage collector and namespace controller: one pass over a snapshot,
 * producing the requests the real controllers would send next. The real
 * ones keep a dependency graph between passes; here the snapshot is indexed
 * afresh each time (by uid, and which uids are owners), which costs a hash
 * table per call and leaves nothing to go stale. */
#include "controllers/garbage_collector_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define FINALIZER_ORPHAN     "orphan"
#define FINALIZER_FOREGROUND "foregroundDeletion"
#define FINALIZER_NAMESPACE  "kubernetes"
#define PATCH_STRATEGIC      "application/strategic-merge-patch+json"
#define PATCH_MERGE          "application/merge-patch+json"

/* ---- reading objects ---- */

static const char *str_of(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static bool nonempty(const char *s)
{
    return s && *s;
}

static bool str_is(const json_t *obj, const char *key, const char *want)
{
    const char *s = str_of(obj, key);
    return s && strcmp(s, want) == 0;
}

static const json_t *meta(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static const json_t *object_of(const json_t *entry)
{
    const json_t *obj = json_object_get(entry, "object");
    return json_is_object(obj) ? obj : NULL;
}

static bool being_deleted(const json_t *obj)
{
    const json_t *ts = json_object_get(meta(obj), "deletionTimestamp");
    return ts && !json_is_null(ts);
}

static bool in_list(const json_t *list, const char *value)
{
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), value) == 0) return true;
    }
    return false;
}

static bool has_finalizer(const json_t *obj, const char *finalizer)
{
    return in_list(json_object_get(meta(obj), "finalizers"), finalizer);
}

static void push(bool *ok, json_t *array, json_t *value)
{
    if (json_array_append_new(array, value) != 0) *ok = false;
}

static void put(bool *ok, json_t *obj, const char *key, json_t *value)
{
    if (json_object_set_new(obj, key, value) != 0) *ok = false;
}

/* ---- actions ---- */

/* {"op", "resource", "group", "namespace", "name", "uid"} for an entry. */
static json_t *action(const char *op, const json_t *entry)
{
    const json_t *m = meta(object_of(entry));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "op", op, "resource",
                     or_empty(str_of(entry, "resource")), "group", or_empty(str_of(entry, "group")),
                     "namespace", or_empty(str_of(m, "namespace")), "name",
                     or_empty(str_of(m, "name")), "uid", or_empty(str_of(m, "uid")));
}

static void emit_delete(bool *ok, json_t *actions, const json_t *entry, const char *policy)
{
    json_t *a = action("delete", entry);
    if (a) put(ok, a, "propagationPolicy", json_string(policy));
    push(ok, actions, a);
}

static void emit_patch(bool *ok, json_t *actions, const char *op, const json_t *entry,
                       const char *type, json_t *patch)
{
    json_t *a = action(op, entry);
    if (a) {
        put(ok, a, "patchType", json_string(type));
        put(ok, a, "patch", patch);
    } else {
        json_decref(patch);
    }
    push(ok, actions, a);
}

/* garbagecollector/patch.go deleteOwnerRefStrategicMergePatch. */
static void emit_drop_owners(bool *ok, json_t *actions, const json_t *entry, const json_t *uids)
{
    json_t *refs = json_array();
    size_t i;
    const json_t *uid;
    json_array_foreach(uids, i, uid)
    {
        if (refs) push(ok, refs, json_pack("{s:s, s:O}", "$patch", "delete", "uid", uid));
    }
    const char *self = or_empty(str_of(meta(object_of(entry)), "uid"));
    emit_patch(ok, actions, "patch-owner-references", entry, PATCH_STRATEGIC,
               json_pack("{s:{s:o, s:s}}", "metadata", "ownerReferences", refs, "uid", self));
}

/* The finalizers without `drop_a` and `drop_b` (either may be NULL), as
 * removeFinalizer's JSON merge patch sends them: the resourceVersion it read,
 * and null for none left. */
static void emit_drop_finalizers(bool *ok, json_t *actions, const json_t *entry, const char *drop_a,
                                 const char *drop_b)
{
    const json_t *m = meta(object_of(entry));
    json_t *rest = json_array();
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(m, "finalizers"), i, f)
    {
        const char *name = json_string_value(f);
        if ((drop_a && name && !strcmp(name, drop_a)) || (drop_b && name && !strcmp(name, drop_b)))
            continue;
        if (rest) push(ok, rest, json_incref((json_t *)f));
    }
    if (rest && json_array_size(rest) == 0) {
        json_decref(rest);
        rest = json_null();
    }
    json_t *md = json_object();
    if (md && nonempty(str_of(m, "resourceVersion")))
        put(ok, md, "resourceVersion", json_string(str_of(m, "resourceVersion")));
    if (md)
        put(ok, md, "finalizers", rest);
    else
        json_decref(rest);
    emit_patch(ok, actions, "patch-finalizers", entry, PATCH_MERGE,
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
        const json_t *m = meta(object_of(entry));
        const char *uid = str_of(m, "uid");
        if (ok && nonempty(uid)) put(&ok, ix->by_uid, uid, json_integer((json_int_t)i));
        size_t j;
        const json_t *ref;
        json_array_foreach(json_object_get(m, "ownerReferences"), j, ref)
        {
            const char *owner = str_of(ref, "uid");
            if (ok && nonempty(owner)) put(&ok, ix->owners, owner, json_true());
        }
    }
    if (!ok) index_free(ix);
    return ok;
}

static const json_t *lookup(const ctl_gc_index *ix, const char *uid)
{
    const json_t *pos = uid ? json_object_get(ix->by_uid, uid) : NULL;
    return pos ? object_of(json_array_get(ix->snapshot, (size_t)json_integer_value(pos))) : NULL;
}

typedef enum { OWNER_SOLID, OWNER_DANGLING, OWNER_WAITING } owner_state;

/* classifyReferences for one reference of `dependent`. */
static owner_state classify(const ctl_gc_index *ix, const json_t *dependent, const json_t *ref)
{
    const json_t *owner = lookup(ix, str_of(ref, "uid"));
    /* left out of the snapshot (an object nothing else needs, neither
     * deleted nor finalized): asked for, as the collector's isDangling
     * looks an owner up */
    if (!owner)
        return ix->exists && ix->exists(ix->exists_ud, dependent, ref) ? OWNER_SOLID
                                                                       : OWNER_DANGLING;
    /* A namespaced owner exists only for dependents of its own namespace
     * (the collector reports OwnerRefInvalidNamespace and treats it as
     * absent). */
    const char *owner_ns = str_of(meta(owner), "namespace");
    const char *dep_ns = str_of(meta(dependent), "namespace");
    if (nonempty(owner_ns) && (!nonempty(dep_ns) || strcmp(owner_ns, dep_ns) != 0))
        return OWNER_DANGLING;
    if (being_deleted(owner) && has_finalizer(owner, FINALIZER_FOREGROUND)) return OWNER_WAITING;
    return OWNER_SOLID;
}

/* attemptToDeleteItem for an object that is not being deleted. */
static void collect_dependent(bool *ok, json_t *actions, const ctl_gc_index *ix,
                              const json_t *entry)
{
    const json_t *obj = object_of(entry);
    const json_t *refs = json_object_get(meta(obj), "ownerReferences");
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
        if (json_is_string(uid)) push(ok, drop, json_incref((json_t *)uid));
    }
    if (solid > 0) {
        if (json_array_size(drop) > 0) emit_drop_owners(ok, actions, entry, drop);
    } else if (waiting > 0 && json_object_get(ix->owners, or_empty(str_of(meta(obj), "uid")))) {
        /* Its own dependents go first, so the owner waits for them too. */
        emit_delete(ok, actions, entry, "Foreground");
    } else if (has_finalizer(obj, FINALIZER_ORPHAN)) {
        emit_delete(ok, actions, entry, "Orphan");
    } else if (has_finalizer(obj, FINALIZER_FOREGROUND)) {
        emit_delete(ok, actions, entry, "Foreground");
    } else {
        emit_delete(ok, actions, entry, "Background");
    }
    json_decref(drop);
}

/* Whether `obj` names `uid` as an owner (with blockOwnerDeletion, when
 * `blocking`). */
static bool names_owner(const json_t *obj, const char *uid, bool blocking)
{
    size_t i;
    const json_t *ref;
    json_array_foreach(json_object_get(meta(obj), "ownerReferences"), i, ref)
    {
        if (str_is(ref, "uid", uid) &&
            (!blocking || json_is_true(json_object_get(ref, "blockOwnerDeletion"))))
            return true;
    }
    return false;
}

/* attemptToOrphan and processDeletingDependentsItem for an object being
 * deleted. */
static void collect_deleting(bool *ok, json_t *actions, const ctl_gc_index *ix, const json_t *entry)
{
    const json_t *obj = object_of(entry);
    const char *uid = str_of(meta(obj), "uid");
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
        const json_t *dep = object_of(other);
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
        const json_t *obj = object_of(entry);
        if (!ok || !obj) continue;
        if (being_deleted(obj))
            collect_deleting(&ok, actions, &ix, entry);
        else
            collect_dependent(&ok, actions, &ix, entry);
    }
    index_free(&ix);
    if (ok) return actions;
    json_decref(actions);
    return NULL;
}

/* ---- the namespace controller ---- */

/* What is still there after this pass's deletes: objects held by finalizers
 * or deleting already, and pods that get a grace period (bound and not
 * finished; the API server removes the others at once). */
static bool survives_delete(const json_t *entry, const json_t *obj)
{
    if (being_deleted(obj) || json_array_size(json_object_get(meta(obj), "finalizers")) > 0)
        return true;
    if (!str_is(entry, "resource", "pods") || nonempty(str_of(entry, "group"))) return false;
    const char *phase = str_of(json_object_get(obj, "status"), "phase");
    bool finished = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    return nonempty(str_of(json_object_get(obj, "spec"), "nodeName")) && !finished;
}

static void count(bool *ok, json_t *counts, const char *key)
{
    json_int_t n = json_integer_value(json_object_get(counts, key));
    put(ok, counts, key, json_integer(n + 1));
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "<key><infix><n> resource instances" for each count, sorted, joined by
 * ", " (ProcessContentTotals). NULL when memory runs out. */
static char *summary(const json_t *counts, const char *infix)
{
    size_t n = json_object_size(counts), k = 0;
    char **parts = calloc(n ? n : 1, sizeof *parts);
    if (!parts) return NULL;
    const char *key;
    const json_t *v;
    bool ok = true;
    json_object_foreach((json_t *)counts, key, v)
    {
        parts[k] =
            gp_format("%s%s%lld resource instances", key, infix, (long long)json_integer_value(v));
        if (!parts[k]) {
            ok = false;
            break;
        }
        k++;
    }
    char *out = NULL;
    if (ok) {
        qsort(parts, k, sizeof *parts, compare_strings);
        gp_buf b = {0};
        gp_buf_join(&b, (const char *const *)parts, k, ", ");
        out = gp_buf_take(&b);
    }
    for (size_t i = 0; i < k; i++)
        free(parts[i]);
    free(parts);
    return out;
}

typedef struct ns_condition {
    const char *type, *status, *reason, *message;
} ns_condition;

/* The condition to send for `want`, or json_null() when the namespace shows
 * it already. A changed status gets a new lastTransitionTime; a changed text
 * alone keeps the old one (updateConditions). */
static json_t *condition_change(const json_t *ns, const ns_condition *want, const char *now)
{
    const json_t *have = NULL;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(ns, "status"), "conditions"), i, c)
    {
        if (str_is(c, "type", want->type)) have = c;
    }
    bool same_status = have && str_is(have, "status", want->status);
    if (same_status && str_is(have, "reason", want->reason) &&
        str_is(have, "message", want->message))
        return json_null();
    /* A null would delete the old time in the merge, so the key is left out. */
    if (same_status)
        return json_pack("{s:s, s:s, s:s, s:s}", "type", want->type, "status", want->status,
                         "reason", want->reason, "message", want->message);
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", want->type, "status", want->status,
                     "lastTransitionTime", now, "reason", want->reason, "message", want->message);
}

static void format_time(time_t t, char buf[32])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "<prefix><summary>", or NULL when memory runs out. */
static char *message(const char *prefix, const json_t *counts, const char *infix)
{
    char *text = summary(counts, infix);
    if (!text) return NULL;
    size_t size = strlen(prefix) + strlen(text) + 1;
    char *out = malloc(size);
    if (out) snprintf(out, size, "%s%s", prefix, text);
    free(text);
    return out;
}

/* {"status": {...}} with what changed, or json_null() when nothing did. */
static json_t *ns_status_patch(const json_t *ns, const char *left_msg, const char *held_msg,
                               time_t now)
{
    const ns_condition wanted[] = {
        {"NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
         "All resources successfully discovered"},
        {"NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
         "All legacy kube types successfully parsed"},
        {"NamespaceDeletionContentFailure", "False", "ContentDeleted",
         "All content successfully deleted, may be waiting on finalization"},
        left_msg
            ? (ns_condition){"NamespaceContentRemaining", "True", "SomeResourcesRemain", left_msg}
            : (ns_condition){"NamespaceContentRemaining", "False", "ContentRemoved",
                             "All content successfully removed"},
        held_msg ? (ns_condition){"NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                                  held_msg}
                 : (ns_condition){"NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                                  "All content-preserving finalizers finished"},
    };
    char now_s[32];
    format_time(now, now_s);
    json_t *st = json_object(), *conds = json_array();
    bool ok = st && conds;
    for (size_t i = 0; ok && i < sizeof wanted / sizeof wanted[0]; i++) {
        json_t *c = condition_change(ns, &wanted[i], now_s);
        if (!json_is_null(c)) push(&ok, conds, c);
    }
    if (ok && !str_is(json_object_get(ns, "status"), "phase", "Terminating"))
        put(&ok, st, "phase", json_string("Terminating"));
    if (ok && json_array_size(conds) > 0) put(&ok, st, "conditions", json_incref(conds));
    json_decref(conds);
    json_t *patch = !ok                        ? NULL
                    : json_object_size(st) > 0 ? json_pack("{s:O}", "status", st)
                                               : json_null();
    json_decref(st);
    return patch;
}

static void emit_ns_status(bool *ok, json_t *actions, const json_t *ns_entry, const json_t *left,
                           const json_t *held, time_t now)
{
    char *left_msg = NULL, *held_msg = NULL;
    if (json_object_size(left) > 0)
        left_msg = message("Some resources are remaining: ", left, " has ");
    if (json_object_size(held) > 0)
        held_msg =
            message("Some content in the namespace has finalizers remaining: ", held, " in ");
    json_t *patch = NULL;
    if ((left_msg || json_object_size(left) == 0) && (held_msg || json_object_size(held) == 0))
        patch = ns_status_patch(object_of(ns_entry), left_msg, held_msg, now);
    if (!patch)
        *ok = false;
    else if (!json_is_null(patch))
        emit_patch(ok, actions, "patch-status", ns_entry, PATCH_STRATEGIC, patch);
    free(left_msg);
    free(held_msg);
}

/* The body finalizeNamespace PUTs: the namespace with spec.finalizers as a
 * sorted set (sets.String.List) without "kubernetes". */
static json_t *finalize_body(const json_t *ns)
{
    const json_t *have = json_object_get(json_object_get(ns, "spec"), "finalizers");
    size_t n = 0, i;
    const char **names = calloc(json_array_size(have) + 1, sizeof *names);
    json_t *body = json_deep_copy(ns), *rest = json_array();
    bool ok = names && body && rest;
    const json_t *f;
    json_array_foreach(have, i, f)
    {
        const char *name = json_string_value(f);
        if (ok && name && strcmp(name, FINALIZER_NAMESPACE) != 0) names[n++] = name;
    }
    if (ok) qsort(names, n, sizeof *names, compare_strings);
    for (i = 0; ok && i < n; i++)
        if (i == 0 || strcmp(names[i - 1], names[i]) != 0) push(&ok, rest, json_string(names[i]));
    free(names);
    json_t *spec = json_object_get(body, "spec");
    if (ok && !json_is_object(spec)) {
        spec = json_object();
        put(&ok, body, "spec", spec);
    }
    if (ok)
        put(&ok, spec, "finalizers", rest);
    else
        json_decref(rest);
    if (ok) return body;
    json_decref(body);
    return NULL;
}

json_t *ctl_ns_actions(const json_t *ns, const json_t *snapshot, time_t now)
{
    json_t *actions = json_array();
    if (!actions) return NULL;
    const char *name = str_of(meta(ns), "name");
    bool deleting =
        being_deleted(ns) || str_is(json_object_get(ns, "status"), "phase", "Terminating");
    if (!nonempty(name) || !deleting) return actions;

    json_t *ns_entry =
        json_pack("{s:s, s:s, s:O}", "resource", "namespaces", "group", "", "object", ns);
    json_t *left = json_object(), *held = json_object();
    bool ok = ns_entry && left && held;
    size_t contents = 0, i;
    const json_t *entry;
    json_array_foreach(snapshot, i, entry)
    {
        const json_t *obj = object_of(entry);
        if (!ok || !obj || !str_is(meta(obj), "namespace", name)) continue;
        contents++;
        if (!being_deleted(obj)) emit_delete(&ok, actions, entry, "Background");
        if (!survives_delete(entry, obj)) continue;
        char key[512];
        snprintf(key, sizeof key, "%s.%s", or_empty(str_of(entry, "resource")),
                 or_empty(str_of(entry, "group")));
        count(&ok, left, key);
        size_t j;
        const json_t *f;
        json_array_foreach(json_object_get(meta(obj), "finalizers"), j, f)
        {
            if (json_is_string(f)) count(&ok, held, json_string_value(f));
        }
    }
    if (ok) emit_ns_status(&ok, actions, ns_entry, left, held, now);
    const json_t *finalizers = json_object_get(json_object_get(ns, "spec"), "finalizers");
    if (ok && contents == 0 && in_list(finalizers, FINALIZER_NAMESPACE)) {
        json_t *a = action("finalize", ns_entry);
        if (a) put(&ok, a, "body", finalize_body(ns));
        push(&ok, actions, a);
    }
    json_decref(ns_entry);
    json_decref(left);
    json_decref(held);
    if (ok) return actions;
    json_decref(actions);
    return NULL;
}

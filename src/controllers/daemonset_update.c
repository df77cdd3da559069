/* ControllerRevisions (constructHistory, snapshot, dedupCurHistories,
 * cleanupHistory) and the rolling update (rollingUpdate) of update.go. */
#include "controllers/daemonset_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemonset.h"

/* ---- history ---- */

/* getPatch: {"spec":{"template":{...,"$patch":"replace"}}}. */
static json_t *revision_data(const ctl_ds_ctx *c)
{
    json_t *tmpl = json_deep_copy(c->tmpl);
    if (!tmpl || json_object_set_new(tmpl, "$patch", json_string("replace")) != 0) {
        json_decref(tmpl);
        return NULL;
    }
    return json_pack("{s:{s:o}}", "spec", "template", tmpl);
}

static long long revision_of(const json_t *cr)
{
    return kube_int(cr, "revision");
}

static const char *revision_name(const json_t *cr)
{
    return kube_str(kube_obj(cr, "metadata"), "name");
}

/* The hash a revision stands for: its label, or its name as the real
 * controller would label a revision that lacks one. */
static const char *revision_hash(const json_t *cr)
{
    const char *h =
        kube_str_or_null(kube_obj(kube_obj(cr, "metadata"), "labels"), CTL_DS_HASH_LABEL);
    return h ? h : revision_name(cr);
}

/* ControllerRevisions controlled by this DaemonSet that its selector
 * matches (ClaimControllerRevisions without adoption or release, which
 * only matter after someone edits a revision by hand). */
static bool owns_revision(const ctl_ds_ctx *c, const json_t *cr, bool *invalid)
{
    const json_t *owner = kube_controller_of(cr);
    const json_t *meta = kube_obj(cr, "metadata");
    if (!owner || !ctl_ds_streq(kube_str_or_null(owner, "uid"), c->uid)) return false;
    const char *ns = kube_str_or_null(meta, "namespace");
    if (ns && c->ns && strcmp(ns, c->ns) != 0) return false;
    return kube_label_selector_object_matches(kube_obj(c->spec, "selector"),
                                              kube_obj(meta, "labels"), invalid);
}

static json_t *new_revision(const ctl_ds_ctx *c, const char *name, const char *hash,
                            json_t *data_new, long long revision)
{
    const json_t *given = kube_obj(kube_obj(c->tmpl, "metadata"), "labels");
    json_t *labels = given ? json_deep_copy(given) : json_object();
    /* "o" hands labels to the pack even when it fails. */
    json_t *meta = json_pack("{s:s,s:o}", "name", name, "labels", labels);
    const json_t *ann = kube_obj(kube_obj(c->ds, "metadata"), "annotations");
    if (!meta || json_object_set_new(labels, CTL_DS_HASH_LABEL, json_string(hash)) != 0 ||
        (c->ns && json_object_set_new(meta, "namespace", json_string(c->ns)) != 0) ||
        (ann && json_object_set_new(meta, "annotations", json_deep_copy(ann)) != 0) ||
        json_object_set_new(meta, "ownerReferences", json_pack("[o]", ctl_ds_controller_ref(c)))) {
        json_decref(meta);
        json_decref(data_new);
        return NULL;
    }
    return json_pack("{s:s,s:s,s:o,s:o,s:I}", "apiVersion", "apps/v1", "kind", "ControllerRevision",
                     "metadata", meta, "data", data_new, "revision", (json_int_t)revision);
}

static const json_t *find_revision_named(const ctl_ds_ctx *c, const char *name)
{
    size_t i;
    const json_t *cr;
    json_array_foreach(c->revisions, i, cr)
    {
        if (!strcmp(revision_name(cr), name)) return cr;
    }
    return NULL;
}

/* The hash collided with a revision of other content: the real controller
 * bumps status.collisionCount and fails the sync; the next sync hashes with
 * the new count. */
static int plan_collision(ctl_ds_ctx *c, const char *name)
{
    json_t *st = c->status ? json_deep_copy(c->status) : json_object();
    long long count = kube_int(c->status, "collisionCount") + 1;
    if (!st || json_object_set_new(st, "collisionCount", json_integer(count)) != 0) {
        json_decref(st);
        return -1;
    }
    c->plan->status = st;
    gp_error_set(c->err, NULL, 0, 0, "hash collision with ControllerRevision %s", name);
    return 1;
}

/* snapshot: a new revision numbered `revision`, or the one already under
 * that name when it holds the same template. */
static int snapshot(ctl_ds_ctx *c, json_t *data, long long revision)
{
    const json_t *cc = json_object_get(c->status, "collisionCount");
    char hash[16], name[320];
    ctl_ds_hash(c->tmpl, json_is_integer(cc) ? (long long)json_integer_value(cc) : -1, hash);
    snprintf(name, sizeof name, "%s-%s", c->name, hash);
    const json_t *existing = find_revision_named(c, name);
    if (existing && !json_equal(json_object_get(existing, "data"), data))
        return plan_collision(c, name);
    c->hash = strdup(existing ? revision_hash(existing) : hash);
    if (!c->hash) return -1;
    if (!existing)
        ctl_ds_append(c, c->plan->create_revisions,
                      new_revision(c, name, hash, json_incref(data), revision));
    return c->oom ? -1 : 0;
}

/* dedupCurHistories: several revisions hold the current template (after a
 * race); the highest-numbered one stays, pods carrying another hash are
 * relabelled to it, and the rest are deleted. */
static const json_t *dedup_current(ctl_ds_ctx *c, const json_t **cur, size_t n, const json_t *pods)
{
    const json_t *keep = cur[0];
    for (size_t i = 1; i < n; i++)
        if (revision_of(cur[i]) >= revision_of(keep)) keep = cur[i];
    if (n == 1) return keep;
    const char *hash = revision_hash(keep);
    size_t i;
    const json_t *pod;
    bool invalid = false;
    json_array_foreach(pods, i, pod)
    {
        const json_t *meta = kube_obj(pod, "metadata");
        bool ours = ctl_ds_streq(kube_str_or_null(kube_controller_of(pod), "uid"), c->uid);
        if (!ours || !kube_label_selector_object_matches(kube_obj(c->spec, "selector"),
                                                         kube_obj(meta, "labels"), &invalid))
            continue;
        if (ctl_ds_streq(ctl_ds_pod_label(pod, CTL_DS_HASH_LABEL), hash)) continue;
        ctl_ds_append(c, c->plan->patch_pods,
                      json_pack("{s:s,s:s,s:{s:{s:{s:s}}}}", "name", kube_str(meta, "name"),
                                "patchType", "application/merge-patch+json", "patch", "metadata",
                                "labels", CTL_DS_HASH_LABEL, hash));
    }
    for (size_t k = 0; k < n; k++)
        if (cur[k] != keep)
            ctl_ds_append(c, c->plan->delete_revisions, json_string(revision_name(cur[k])));
    return keep;
}

/* Splits the owned revisions into current ones and old ones. */
static int split_revisions(ctl_ds_ctx *c, const json_t *data, const json_t ***cur, size_t *ncur)
{
    size_t n = json_array_size(c->revisions);
    *cur = calloc(n ? n : 1, sizeof **cur);
    c->old = calloc(n ? n : 1, sizeof *c->old);
    if (!*cur || !c->old) return -1;
    size_t i;
    const json_t *cr;
    bool invalid = false;
    json_array_foreach(c->revisions, i, cr)
    {
        if (!owns_revision(c, cr, &invalid)) continue;
        if (json_equal(json_object_get(cr, "data"), data))
            (*cur)[(*ncur)++] = cr;
        else
            c->old[c->nold++] = cr;
    }
    if (invalid) {
        gp_error_set(c->err, NULL, 0, 0, "DaemonSet %s has an invalid selector", c->name);
        return 1;
    }
    return 0;
}

int ctl_ds_construct_history(ctl_ds_ctx *c, const json_t *pods)
{
    json_t *data = revision_data(c);
    const json_t **cur = NULL;
    size_t ncur = 0;
    int rc = data ? split_revisions(c, data, &cur, &ncur) : -1;
    if (rc != 0) goto done;
    long long next = 0;
    for (size_t i = 0; i < c->nold; i++)
        if (revision_of(c->old[i]) > next) next = revision_of(c->old[i]);
    next++;
    if (ncur == 0) {
        rc = snapshot(c, data, next);
        goto done;
    }
    const json_t *keep = dedup_current(c, cur, ncur, pods);
    c->hash = strdup(revision_hash(keep));
    if (!c->hash) {
        rc = -1;
        goto done;
    }
    /* A rollback: the matching old revision becomes the newest. */
    if (revision_of(keep) < next)
        ctl_ds_append(
            c, c->plan->update_revisions,
            json_pack("{s:s,s:I}", "name", revision_name(keep), "revision", (json_int_t)next));
    rc = c->oom ? -1 : 0;
done:
    free(cur);
    json_decref(data);
    return rc;
}

static int by_revision(const void *a, const void *b)
{
    long long ra = revision_of(*(const json_t *const *)a);
    long long rb = revision_of(*(const json_t *const *)b);
    return ra < rb ? -1 : ra > rb;
}

static bool hash_is_live(const ctl_ds_ctx *c, const char *hash)
{
    for (size_t i = 0; i < c->nclaimed; i++) {
        const json_t *pod = c->claimed[i];
        const char *h = ctl_ds_pod_label(pod, CTL_DS_HASH_LABEL);
        if (h && *h && !strcmp(h, hash) && kube_ds_target_node(pod)) return true;
    }
    return false;
}

void ctl_ds_cleanup_history(ctl_ds_ctx *c)
{
    const json_t *limit_v = json_object_get(c->spec, "revisionHistoryLimit");
    long long limit = json_is_integer(limit_v) ? (long long)json_integer_value(limit_v) : 10;
    long long to_kill = (long long)c->nold - limit;
    if (to_kill <= 0) return;
    qsort(c->old, c->nold, sizeof *c->old, by_revision);
    for (size_t i = 0; i < c->nold && to_kill > 0; i++) {
        const char *h = kube_str_or_null(kube_obj(kube_obj(c->old[i], "metadata"), "labels"),
                                         CTL_DS_HASH_LABEL);
        if (h && hash_is_live(c, h)) continue;
        ctl_ds_append(c, c->plan->delete_revisions, json_string(revision_name(c->old[i])));
        to_kill--;
    }
}

/* ---- rolling update ---- */

/* findUpdatedPodsOnNode: at most one new and one old pod among those not
 * being deleted; false when there are more. */
static bool split_node_pods(const ctl_ds_ctx *c, const ctl_ds_slot *s, const json_t **new_pod,
                            const json_t **old_pod)
{
    *new_pod = *old_pod = NULL;
    for (size_t i = 0; i < s->npods; i++) {
        const json_t *pod = s->pods[i];
        if (kube_deleting(pod)) continue;
        const json_t **slot = ctl_ds_pod_updated(c, pod) ? new_pod : old_pod;
        if (*slot) return false;
        *slot = pod;
    }
    return true;
}

static const char *pod_name_of(const json_t *pod)
{
    return kube_str(kube_obj(pod, "metadata"), "name");
}

/* The nodes rollingUpdate walks: those with pods, and those where a pod
 * should run (updatedDesiredNodeCounts adds them with no pods). */
static bool in_update_map(const ctl_ds_slot *s)
{
    return s->npods > 0 || (s->node && s->should_run);
}

typedef struct str_list {
    const char **v;
    size_t n;
} str_list;

/* maxSurge 0: delete old pods while no more than maxUnavailable nodes are
 * unavailable; unavailable old pods go regardless. */
static void update_no_surge(ctl_ds_ctx *c, long long max_unavailable, str_list *del)
{
    long long num_unavailable = 0;
    const char **allowed = del->v, **candidates = del->v + c->nslots;
    size_t nallowed = 0, ncandidates = 0;
    for (size_t i = 0; i < c->nslots; i++) {
        const ctl_ds_slot *s = &c->slots[i];
        const json_t *new_pod, *old_pod;
        if (!in_update_map(s)) continue;
        if (!split_node_pods(c, s, &new_pod, &old_pod) || (!new_pod) == (!old_pod)) {
            num_unavailable++;
        } else if (new_pod) {
            num_unavailable += !kube_pod_available(new_pod, c->min_ready_seconds, c->now);
        } else if (!kube_pod_available(old_pod, c->min_ready_seconds, c->now)) {
            allowed[nallowed++] = pod_name_of(old_pod);
            num_unavailable++;
        } else if (num_unavailable < max_unavailable) {
            candidates[ncandidates++] = pod_name_of(old_pod);
        }
    }
    long long remaining = max_unavailable - num_unavailable;
    if (remaining < 0) remaining = 0;
    if (remaining > (long long)ncandidates) remaining = (long long)ncandidates;
    memmove(allowed + nallowed, candidates, (size_t)remaining * sizeof *candidates);
    del->n = nallowed + (size_t)remaining;
}

typedef struct surge_state {
    str_list del, create, should_not_run, candidates;
    long long num_surge, num_available;
} surge_state;

/* One node of the maxSurge > 0 walk. Returns -1 for a node that does not
 * exist, which the real controller's node lister fails on. */
static int surge_node(ctl_ds_ctx *c, const ctl_ds_slot *s, long long max_surge, surge_state *st)
{
    const json_t *new_pod, *old_pod;
    if (!split_node_pods(c, s, &new_pod, &old_pod)) {
        st->num_surge++;
        return 0;
    }
    const json_t *counted = old_pod ? old_pod : new_pod;
    if (counted && kube_pod_available(counted, c->min_ready_seconds, c->now)) st->num_available++;
    if (!old_pod) return 0;
    if (new_pod) {
        if (!kube_pod_available(new_pod, c->min_ready_seconds, c->now))
            st->num_surge++;
        else
            st->del.v[st->del.n++] = pod_name_of(old_pod);
        return 0;
    }
    if (!s->node) return -1;
    if (!kube_pod_available(old_pod, c->min_ready_seconds, c->now)) {
        if (!s->should_run)
            st->del.v[st->del.n++] = pod_name_of(old_pod);
        else
            st->create.v[st->create.n++] = s->name;
    } else if (!s->should_run) {
        st->should_not_run.v[st->should_not_run.n++] = pod_name_of(old_pod);
    } else if (st->num_surge < max_surge) {
        st->candidates.v[st->candidates.n++] = s->name;
    }
    return 0;
}

/* maxSurge > 0: new pods next to available old ones (up to maxSurge at a
 * time), at once where the old pod is unavailable; an old pod goes when the
 * new one is available. */
static int update_surge(ctl_ds_ctx *c, long long max_surge, long long desired)
{
    size_t n = c->nslots ? c->nslots : 1;
    const char **buf = calloc(4 * n, sizeof *buf);
    if (!buf) return -1;
    surge_state st = {.del = {buf, 0},
                      .create = {buf + n, 0},
                      .should_not_run = {buf + 2 * n, 0},
                      .candidates = {buf + 3 * n, 0}};
    for (size_t i = 0; i < c->nslots; i++) {
        if (!in_update_map(&c->slots[i]) || surge_node(c, &c->slots[i], max_surge, &st) == 0)
            continue;
        gp_error_set(c->err, NULL, 0, 0, "couldn't get node for nodeName \"%s\": not found",
                     c->slots[i].name);
        free(buf);
        return 1;
    }
    /* Pods on nodes that no longer qualify go only as pods elsewhere become
     * available, so that availability never drops. */
    long long deletable = st.num_available - desired;
    if (deletable > (long long)st.should_not_run.n) deletable = (long long)st.should_not_run.n;
    for (long long i = 0; i < deletable; i++)
        st.del.v[st.del.n++] = st.should_not_run.v[i];
    long long remaining = max_surge - st.num_surge;
    if (remaining < 0) remaining = 0;
    if (remaining > (long long)st.candidates.n) remaining = (long long)st.candidates.n;
    for (long long i = 0; i < remaining; i++)
        st.create.v[st.create.n++] = st.candidates.v[i];
    ctl_ds_sync_nodes(c, st.del.v, st.del.n, st.create.v, st.create.n);
    free(buf);
    return 0;
}

int ctl_ds_rolling_update(ctl_ds_ctx *c)
{
    int64_t desired = 0, max_unavailable, max_surge;
    for (size_t i = 0; i < c->nslots; i++)
        desired += c->slots[i].node && c->slots[i].should_run;
    if (kube_ds_update_limits(c->spec, desired, &max_unavailable, &max_surge, c->err) != 0)
        return 1;
    if (max_surge > 0) return update_surge(c, max_surge, desired);
    str_list del = {calloc(2 * (c->nslots ? c->nslots : 1), sizeof *del.v), 0};
    if (!del.v) return -1;
    update_no_surge(c, max_unavailable, &del);
    ctl_ds_sync_nodes(c, del.v, del.n, NULL, 0);
    free(del.v);
    return 0;
}

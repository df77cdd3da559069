/* One sync of a DaemonSet (syncDaemonSet): group the claimed pods by node,
 * manage() creations and deletions, then the status. History and the
 * rolling update are in daemonset_update.c, node fitness in
 * daemonset_node.c, pods and claiming in daemonset_pods.c. */
#include "controllers/daemonset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/daemonset_internal.h"
#include "kube/daemonset.h"
#include "kube/intstr.h"

/* ---- plan and event plumbing ---- */

void ctl_ds_append(ctl_ds_ctx *c, json_t *arr, json_t *item_new)
{
    if (!item_new || json_array_append_new(arr, item_new) != 0) c->oom = true;
}

void ctl_ds_event(ctl_ds_ctx *c, const char *type, const char *reason, const char *message)
{
    ctl_ds_append(c, c->plan->events,
                  json_pack("{s:s,s:s,s:s}", "type", type, "reason", reason, "message", message));
}

json_t *ctl_ds_controller_ref(const ctl_ds_ctx *c)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion", "apps/v1", "kind", "DaemonSet",
                     "name", c->name, "uid", c->uid, "controller", 1, "blockOwnerDeletion", 1);
}

size_t ctl_ds_next_batch(size_t sent, size_t last, size_t total)
{
    if (sent >= total) return 0;
    size_t left = total - sent, next = last ? 2 * last : 1;
    return next < left ? next : left;
}

void ctl_ds_plan_free(ctl_ds_plan *plan)
{
    if (!plan) return;
    json_decref(plan->create_revisions);
    json_decref(plan->update_revisions);
    json_decref(plan->patch_pods);
    json_decref(plan->create_pods);
    json_decref(plan->delete_pods);
    json_decref(plan->delete_revisions);
    json_decref(plan->status);
    json_decref(plan->events);
    memset(plan, 0, sizeof *plan);
}

static int plan_init(ctl_ds_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    json_t **arrays[] = {
        &plan->create_revisions, &plan->update_revisions, &plan->patch_pods, &plan->create_pods,
        &plan->delete_pods,      &plan->delete_revisions, &plan->events};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        *arrays[i] = json_array();
        if (!*arrays[i]) return -1;
    }
    return 0;
}

/* ---- nodeToDaemonPods ---- */

static int slot_order(const void *a, const void *b)
{
    return strcmp(((const ctl_ds_slot *)a)->name, ((const ctl_ds_slot *)b)->name);
}

ctl_ds_slot *ctl_ds_slot_find(const ctl_ds_ctx *c, const char *node_name)
{
    ctl_ds_slot key = {.name = node_name};
    if (!c->nslots) return NULL;
    return bsearch(&key, c->slots, c->nslots, sizeof *c->slots, slot_order);
}

static void slot_add_pod(ctl_ds_ctx *c, ctl_ds_slot *s, const json_t *pod)
{
    if (s->npods == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 2;
        const json_t **grown = realloc(s->pods, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        s->pods = grown;
        s->cap = cap;
    }
    s->pods[s->npods++] = pod;
}

/* One slot per node and per node name a claimed pod targets, sorted by
 * name; then each claimed pod (terminal ones being deleted left out, as
 * getNodesToDaemonPods(includeDeletedTerminal=false) does) into its slot. */
static int build_slots(ctl_ds_ctx *c, const json_t *tolerations)
{
    size_t max = json_array_size(c->nodes) + c->nclaimed;
    c->slots = calloc(max ? max : 1, sizeof *c->slots);
    if (!c->slots) return -1;
    size_t i;
    const json_t *node;
    json_array_foreach(c->nodes, i, node)
    {
        const char *name = kube_str_or_null(kube_obj(node, "metadata"), "name");
        if (!name) continue;
        ctl_ds_slot *s = &c->slots[c->nslots++];
        s->name = name;
        s->node = node;
        s->should_run = ctl_ds_should_run_spec(kube_obj(c->tmpl, "spec"), tolerations, node,
                                               &s->should_continue);
    }
    qsort(c->slots, c->nslots, sizeof *c->slots, slot_order);
    for (i = 0; i < c->nclaimed; i++) {
        const char *target = kube_ds_target_node(c->claimed[i]);
        if (!target || ctl_ds_slot_find(c, target)) continue;
        c->slots[c->nslots++] = (ctl_ds_slot){.name = target};
        qsort(c->slots, c->nslots, sizeof *c->slots, slot_order);
    }
    for (i = 0; i < c->nclaimed; i++) {
        const json_t *pod = c->claimed[i];
        const char *target = kube_ds_target_node(pod);
        if (!target || (kube_pod_terminal(pod) && kube_deleting(pod))) continue;
        slot_add_pod(c, ctl_ds_slot_find(c, target), pod);
    }
    return c->oom ? -1 : 0;
}

/* ---- creating and deleting (syncNodes) ---- */

/* ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become the
 * single matchFields term; the rest of the affinity stays. */
static int set_node_affinity(json_t *spec, const char *node_name)
{
    json_t *affinity = json_object_get(spec, "affinity");
    if (!json_is_object(affinity)) {
        affinity = json_object();
        if (json_object_set_new(spec, "affinity", affinity) != 0) return -1;
    }
    json_t *node_affinity = json_object_get(affinity, "nodeAffinity");
    if (!json_is_object(node_affinity)) {
        node_affinity = json_object();
        if (json_object_set_new(affinity, "nodeAffinity", node_affinity) != 0) return -1;
    }
    static const char req_key[] = "requiredDuringSchedulingIgnoredDuringExecution";
    json_t *required = json_object_get(node_affinity, req_key);
    if (!json_is_object(required)) {
        required = json_object();
        if (json_object_set_new(node_affinity, req_key, required) != 0) return -1;
    }
    return json_object_set_new(required, "nodeSelectorTerms",
                               json_pack("[{s:[{s:s,s:s,s:[s]}]}]", "matchFields", "key",
                                         "metadata.name", "operator", "In", "values", node_name));
}

/* The template's labels plus pod-template-generation and
 * controller-revision-hash (CreatePodTemplate). */
static json_t *new_pod_labels(const ctl_ds_ctx *c)
{
    const json_t *given = kube_obj(kube_obj(c->tmpl, "metadata"), "labels");
    json_t *labels = given ? json_deep_copy(given) : json_object();
    if (!labels) return NULL;
    char generation[32];
    snprintf(generation, sizeof generation, "%lld", c->template_generation);
    if (c->has_template_generation &&
        json_object_set_new(labels, CTL_DS_GENERATION_LABEL, json_string(generation)) != 0)
        goto fail;
    if (c->hash && *c->hash && json_object_set_new(labels, CTL_DS_HASH_LABEL, json_string(c->hash)))
        goto fail;
    return labels;
fail:
    json_decref(labels);
    return NULL;
}

/* GetPodFromTemplate's metadata: generateName, labels, the template's
 * annotations and finalizers, the controller reference. */
static json_t *new_pod_meta(const ctl_ds_ctx *c)
{
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s-", c->name);
    json_t *meta = json_pack("{s:s}", "generateName", prefix);
    if (!meta || (c->ns && json_object_set_new(meta, "namespace", json_string(c->ns)) != 0)) {
        json_decref(meta);
        return NULL;
    }
    const json_t *tmeta = kube_obj(c->tmpl, "metadata");
    const json_t *ann = kube_obj(tmeta, "annotations");
    const json_t *fin = kube_arr(tmeta, "finalizers");
    if (json_object_set_new(meta, "labels", new_pod_labels(c)) != 0 ||
        (ann && json_object_set_new(meta, "annotations", json_deep_copy(ann)) != 0) ||
        (fin && json_object_set_new(meta, "finalizers", json_deep_copy(fin)) != 0) ||
        json_object_set_new(meta, "ownerReferences", json_pack("[o]", ctl_ds_controller_ref(c)))) {
        json_decref(meta);
        return NULL;
    }
    return meta;
}

/* CreatePodTemplate + GetPodFromTemplate + the node affinity. */
static json_t *new_pod(const ctl_ds_ctx *c, const char *node_name)
{
    const json_t *tspec = kube_obj(c->tmpl, "spec");
    json_t *spec = tspec ? json_deep_copy(tspec) : json_object();
    if (!spec) return NULL;
    if (json_object_set_new(spec, "tolerations", ctl_ds_daemon_tolerations(tspec)) != 0 ||
        set_node_affinity(spec, node_name) != 0) {
        json_decref(spec);
        return NULL;
    }
    json_t *meta = new_pod_meta(c);
    if (!meta) {
        json_decref(spec);
        return NULL;
    }
    return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", meta,
                     "spec", spec);
}

void ctl_ds_sync_nodes(ctl_ds_ctx *c, const char *const *delete_names, size_t ndelete,
                       const char *const *create_nodes, size_t ncreate)
{
    if (ncreate > CTL_DS_BURST_REPLICAS) ncreate = CTL_DS_BURST_REPLICAS;
    if (ndelete > CTL_DS_BURST_REPLICAS) ndelete = CTL_DS_BURST_REPLICAS;
    for (size_t i = 0; i < ncreate; i++) {
        ctl_ds_append(c, c->plan->create_pods, new_pod(c, create_nodes[i]));
        ctl_ds_event(c, "Normal", "SuccessfulCreate", "Created pod: ");
    }
    char message[512];
    for (size_t i = 0; i < ndelete; i++) {
        ctl_ds_append(c, c->plan->delete_pods, json_string(delete_names[i]));
        snprintf(message, sizeof message, "Deleted pod: %s", delete_names[i]);
        ctl_ds_event(c, "Normal", "SuccessfulDelete", message);
    }
}

/* ---- manage() ---- */

typedef struct name_list {
    const char **v;
    size_t n, cap;
} name_list;

static void names_add(ctl_ds_ctx *c, name_list *l, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        const char **grown = realloc(l->v, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = name;
}

/* With surge, at most one old and one new pod stay: the oldest of each, and
 * of those the old one goes once it is not ready or the new one is
 * available. */
static void prune_surge(ctl_ds_ctx *c, const json_t **running, size_t n, name_list *del)
{
    const json_t *oldest_new = NULL, *oldest_old = NULL;
    for (size_t i = 0; i < n; i++) {
        bool is_new = ctl_ds_streq(ctl_ds_pod_label(running[i], CTL_DS_HASH_LABEL), c->hash);
        const json_t **slot = is_new ? &oldest_new : &oldest_old;
        if (!*slot) {
            *slot = running[i];
            continue;
        }
        names_add(c, del, ctl_ds_pod_name(running[i]));
    }
    if (oldest_new && oldest_old &&
        (!kube_pod_ready(oldest_old) ||
         kube_pod_available(oldest_new, c->min_ready_seconds, c->now)))
        names_add(c, del, ctl_ds_pod_name(oldest_old));
}

/* The shouldContinueRunning branch of podsShouldBeOnNode. Failed pods are
 * deleted at every sync: the real controller's per-node backoff lives in
 * process memory, which a pure function does not have. */
static void keep_running(ctl_ds_ctx *c, const ctl_ds_slot *s, bool surge, name_list *create,
                         name_list *del)
{
    const json_t **running = calloc(s->npods ? s->npods : 1, sizeof *running);
    if (!running) {
        c->oom = true;
        return;
    }
    size_t n = 0;
    char message[1024];
    for (size_t i = 0; i < s->npods; i++) {
        const json_t *pod = s->pods[i];
        const char *phase = kube_str(kube_obj(pod, "status"), "phase");
        if (kube_deleting(pod)) continue;
        if (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded")) {
            bool failed = !strcmp(phase, "Failed");
            snprintf(message, sizeof message,
                     failed ? "Found failed daemon pod %s/%s on node %s, will try to kill it"
                            : "Found succeeded daemon pod %s/%s on node %s, will try to delete it",
                     c->ns ? c->ns : "", ctl_ds_pod_name(pod), s->name);
            ctl_ds_event(c, failed ? "Warning" : "Normal",
                         failed ? "FailedDaemonPod" : "SucceededDaemonPod", message);
            names_add(c, del, ctl_ds_pod_name(pod));
            continue;
        }
        running[n++] = pod;
    }
    ctl_ds_sort_pods(running, n);
    if (!surge) {
        for (size_t i = 1; i < n; i++)
            names_add(c, del, ctl_ds_pod_name(running[i]));
    } else if (n == 0 && s->should_run) {
        names_add(c, create, s->name);
    } else if (n > 1) {
        prune_surge(c, running, n, del);
    }
    free(running);
}

/* manage(): per node, then unscheduled pods of vanished nodes. Returns the
 * number of creates and deletes it asked for. */
static size_t manage(ctl_ds_ctx *c)
{
    int64_t surge_count = 0;
    bool surge = kube_ds_surge_count(c->spec, 1, &surge_count, NULL) == 0 && surge_count > 0;
    name_list create = {0}, del = {0};
    for (size_t i = 0; i < c->nslots; i++) {
        const ctl_ds_slot *s = &c->slots[i];
        if (!s->node) continue;
        if (s->should_run && s->npods == 0) {
            names_add(c, &create, s->name);
        } else if (s->should_continue) {
            keep_running(c, s, surge, &create, &del);
        } else {
            for (size_t j = 0; j < s->npods; j++)
                if (!kube_deleting(s->pods[j])) names_add(c, &del, ctl_ds_pod_name(s->pods[j]));
        }
    }
    for (size_t i = 0; i < c->nslots; i++) {
        const ctl_ds_slot *s = &c->slots[i];
        if (s->node) continue;
        for (size_t j = 0; j < s->npods; j++)
            if (!*kube_str(kube_obj(s->pods[j], "spec"), "nodeName"))
                names_add(c, &del, ctl_ds_pod_name(s->pods[j]));
    }
    ctl_ds_sync_nodes(c, del.v, del.n, create.v, create.n);
    size_t actions = create.n + del.n;
    free(create.v);
    free(del.v);
    return actions;
}

/* ---- status (updateDaemonSetStatus / storeDaemonSetStatus) ---- */

typedef struct ds_counts {
    long long desired, current, misscheduled, ready, updated, available, unavailable;
} ds_counts;

static ds_counts count_status(ctl_ds_ctx *c)
{
    ds_counts k = {0};
    for (size_t i = 0; i < c->nslots; i++) {
        ctl_ds_slot *s = &c->slots[i];
        if (!s->node) continue;
        if (!s->should_run) {
            k.misscheduled += s->npods > 0;
            continue;
        }
        k.desired++;
        if (s->npods == 0) continue;
        k.current++;
        ctl_ds_sort_pods(s->pods, s->npods);
        const json_t *oldest = s->pods[0];
        if (kube_pod_ready(oldest)) {
            k.ready++;
            k.available += kube_pod_available(oldest, c->min_ready_seconds, c->now);
        }
        k.updated += ctl_ds_pod_updated(c, oldest);
    }
    k.unavailable = k.desired - k.available;
    return k;
}

/* The new status in apps/v1 member order; the four counters without
 * omitempty are always written, the others only when non-zero. */
static json_t *status_object(const ctl_ds_ctx *c, const ds_counts *k, long long observed)
{
    json_t *st =
        json_pack("{s:I,s:I,s:I,s:I}", "currentNumberScheduled", (json_int_t)k->current,
                  "numberMisscheduled", (json_int_t)k->misscheduled, "desiredNumberScheduled",
                  (json_int_t)k->desired, "numberReady", (json_int_t)k->ready);
    if (!st) return NULL;
    const struct {
        const char *key;
        long long v;
    } optional[] = {{"observedGeneration", observed},
                    {"updatedNumberScheduled", k->updated},
                    {"numberAvailable", k->available},
                    {"numberUnavailable", k->unavailable}};
    int rc = 0;
    for (size_t i = 0; i < sizeof optional / sizeof *optional; i++)
        if (optional[i].v)
            rc |= json_object_set_new(st, optional[i].key, json_integer(optional[i].v));
    /* Members the controller does not compute (collisionCount, conditions)
     * are kept as stored. */
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)c->status, key, value)
    {
        if (!json_object_get(st, key) && strcmp(key, "observedGeneration") != 0 &&
            strcmp(key, "updatedNumberScheduled") != 0 && strcmp(key, "numberAvailable") != 0 &&
            strcmp(key, "numberUnavailable") != 0)
            rc |= json_object_set(st, key, value);
    }
    if (rc != 0) {
        json_decref(st);
        return NULL;
    }
    return st;
}

static void plan_status(ctl_ds_ctx *c, bool raise_observed)
{
    ds_counts k = count_status(c);
    const json_t *st = c->status;
    long long observed = kube_int(st, "observedGeneration");
    if (kube_int(st, "desiredNumberScheduled") == k.desired &&
        kube_int(st, "currentNumberScheduled") == k.current &&
        kube_int(st, "numberMisscheduled") == k.misscheduled &&
        kube_int(st, "numberReady") == k.ready &&
        kube_int(st, "updatedNumberScheduled") == k.updated &&
        kube_int(st, "numberAvailable") == k.available &&
        kube_int(st, "numberUnavailable") == k.unavailable && observed >= c->generation)
        return;
    json_t *next = status_object(c, &k, raise_observed ? c->generation : observed);
    if (!next) {
        c->oom = true;
        return;
    }
    /* A PUT of what is stored changes nothing (the server does not persist
     * it), so it is left out. */
    if (json_equal(next, c->status)) {
        json_decref(next);
        return;
    }
    c->plan->status = next;
}

/* ---- the sync ---- */

static int ctx_init(ctl_ds_ctx *c, const json_t *ds, ctl_ds_plan *plan, gp_error *err)
{
    memset(c, 0, sizeof *c);
    const json_t *meta = kube_obj(ds, "metadata");
    c->ds = ds;
    c->name = kube_str_or_null(meta, "name");
    c->ns = kube_str_or_null(meta, "namespace");
    c->uid = kube_str(meta, "uid");
    c->spec = kube_obj(ds, "spec");
    c->tmpl = kube_obj(c->spec, "template");
    c->status = kube_obj(ds, "status");
    c->generation = kube_int(meta, "generation");
    c->min_ready_seconds = kube_int(c->spec, "minReadySeconds");
    int64_t template_generation;
    c->has_template_generation = kube_parse_int64(
        kube_str_or_null(kube_obj(meta, "annotations"), CTL_DS_GENERATION_ANNOTATION),
        &template_generation);
    c->template_generation = c->has_template_generation ? template_generation : 0;
    c->plan = plan;
    c->err = err;
    if (!c->name || !c->tmpl) {
        gp_error_set(err, NULL, 0, 0, "DaemonSet has no metadata.name or spec.template");
        return -1;
    }
    return 0;
}

static void ctx_free(ctl_ds_ctx *c)
{
    for (size_t i = 0; i < c->nslots; i++)
        free(c->slots[i].pods);
    free(c->slots);
    free(c->claimed);
    free(c->old);
    free(c->hash);
}

/* Everything after the history: claim, manage, rolling update, cleanup,
 * status. Returns 0, 1 (a controller error after partial work) or -1. */
static int sync_pods(ctl_ds_ctx *c, const json_t *pods, bool expectations_pending)
{
    bool invalid = false;
    ctl_ds_claim_pods(c, pods, &invalid);
    if (invalid) {
        gp_error_set(c->err, NULL, 0, 0, "DaemonSet %s has an invalid selector", c->name);
        return 1;
    }
    json_t *tols = ctl_ds_daemon_tolerations(kube_obj(c->tmpl, "spec"));
    int rc = tols ? build_slots(c, tols) : -1;
    json_decref(tols);
    if (rc != 0 || c->oom) return -1;
    if (expectations_pending) {
        plan_status(c, false);
        return 0;
    }
    int result = 0;
    if (manage(c) == 0) {
        const char *strategy = kube_str(kube_obj(c->spec, "updateStrategy"), "type");
        if (!strcmp(strategy, "RollingUpdate")) result = ctl_ds_rolling_update(c);
        if (result == 0) ctl_ds_cleanup_history(c);
    } else {
        ctl_ds_cleanup_history(c);
    }
    plan_status(c, true);
    return result;
}

int ctl_ds_sync(const json_t *ds, const json_t *nodes, const json_t *pods, const json_t *revisions,
                time_t now, bool expectations_pending, ctl_ds_plan *plan, gp_error *err)
{
    if (plan_init(plan) != 0) {
        ctl_ds_plan_free(plan);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    ctl_ds_ctx c;
    if (ctx_init(&c, ds, plan, err) != 0) {
        ctl_ds_plan_free(plan);
        plan_init(plan);
        return -1;
    }
    c.now = now;
    c.nodes = nodes;
    c.revisions = revisions;
    const json_t *selector = json_object_get(c.spec, "selector");
    if (json_is_object(selector) && json_object_size(selector) == 0) {
        ctl_ds_event(&c, "Warning", "SelectingAll",
                     "This daemon set is selecting all pods. A non-empty selector is required.");
        return c.oom ? -1 : 0;
    }
    /* A DaemonSet being deleted may already have lost its history. */
    if (kube_deleting(ds)) return 0;
    bool invalid = false;
    kube_label_selector_object_matches(selector, NULL, &invalid);
    if (invalid) {
        gp_error_set(err, NULL, 0, 0, "DaemonSet %s has an invalid selector", c.name);
        return 1;
    }
    int rc = ctl_ds_construct_history(&c, pods);
    if (rc == 0) rc = sync_pods(&c, pods, expectations_pending);
    if (c.oom) rc = -1;
    ctx_free(&c);
    if (rc < 0) {
        ctl_ds_plan_free(plan);
        plan_init(plan);
        gp_error_set(err, NULL, 0, 0, "out of memory");
    }
    return rc;
}

/* The node lifecycle and taint eviction controllers in the controllers'
 * loop: what node_lifecycle.c and taint_eviction.c decide, carried out
 * through the in-process client.
 *
 * A pass: the health of every node when the monitor period has passed
 * (statuses written first, so that taints wait for the node's next
 * version); the NoSchedule taints of every node whose version says they are
 * off; the NoExecute queue; then one taint patch a node, with its
 * resourceVersion as the precondition. The pods of a node that is not Ready
 * are marked not ready, each once (a settled pod's snapshot keeps no
 * conditions: the pod is read whole first). The pods of a node with
 * NoExecute taints get their deletion scheduled, and deleted when it is due. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/controllers_internal.h"
#include "controllers/kubelet_internal.h"
#include "controllers/taint_eviction_internal.h"
#include "kube/time.h"
#include "util/hash.h"

/* kube-controller-manager's scheduler.NodeEvictionPeriod: how often the
 * NoExecute queue is looked at while it holds a node. */
#define NOEXECUTE_PERIOD_MS 100

/* A pod marked not ready: at which version, on which node. */
typedef struct pod_mark {
    uint64_t rv;
    char node[256];
    unsigned long long seen;
} pod_mark;

/* The taint eviction controller's work for one pod. */
typedef struct eviction {
    ctl_te_work work;
    char node[256];
    uint64_t taints_fp, pod_rv;
    unsigned long long seen;
} eviction;

int ctl_nlc_loop_init(ctl_loop *c, int64_t now_ms)
{
    c->nlc = ctl_nlc_new(c->grace_ms, now_ms);
    c->noschedule_seen = ctl_lru_new(0, free);
    c->not_ready_marks = ctl_lru_new(0, free);
    c->evictions = ctl_lru_new(0, free);
    c->next_monitor_ms = 0; /* the first pass looks */
    return c->nlc && c->noschedule_seen && c->not_ready_marks && c->evictions ? 0 : -1;
}

void ctl_nlc_loop_fini(ctl_loop *c)
{
    ctl_nlc_free(c->nlc);
    ctl_lru_free(c->noschedule_seen);
    ctl_lru_free(c->not_ready_marks);
    ctl_lru_free(c->evictions);
}

static const char *name_of(const json_t *obj)
{
    return kube_str_or_null(kube_obj(obj, "metadata"), "name");
}

static bool node_waiting(ctl_loop *c, const snapshot *s, const json_t *node)
{
    return ctl_waiting_at(c, s, "nodes", NULL, name_of(node), rv_of(node));
}

/* ---- node health ---- */

/* monitorNodeHealth over the snapshot's nodes, with their Leases. */
static void monitor(ctl_loop *c, const snapshot *s, int64_t now_ms, json_t *actions)
{
    size_t n = json_array_size(s->nodes);
    ctl_nlc_node *in = calloc(n ? n : 1, sizeof *in);
    if (!in) return;
    for (size_t i = 0; i < n; i++) {
        in[i].node = json_array_get(s->nodes, i);
        const json_t *lease = ctl_node_lease(s, s->node_sums[i]->name);
        in[i].lease_renew = kube_str_or_null(kube_obj(lease, "spec"), "renewTime");
    }
    ctl_nlc_monitor(c->nlc, in, n, now_ms, actions);
    free(in);
}

/* The "status" actions, sent now; the others are kept in `rest`. */
static int send_statuses(ctl_loop *c, const snapshot *s, json_t *actions, json_t *rest)
{
    int writes = 0;
    size_t i;
    json_t *a;
    json_array_foreach(actions, i, a)
    {
        if (!kube_str_is(a, "op", "status")) {
            json_array_append(rest, a);
            continue;
        }
        const json_t *node = ctl_node_named(s, kube_str(a, "node"));
        if (!node || node_waiting(c, s, node)) continue; /* the next round sees again */
        char path[400];
        ctl_object_path(path, sizeof path, "", "nodes", NULL, kube_str(a, "node"), "status");
        writes += ctl_send_tracked(c,
                                   ctl_wq_write_new("PATCH", path, NULL, CTL_SMP,
                                                    json_incref(json_object_get(a, "patch"))),
                                   "nodes", node, NULL, NULL);
    }
    return writes;
}

/* ---- taints ---- */

/* doNoScheduleTaintingPass for the nodes whose version needs it, once a
 * version: appended to `taints` first, so they come before NoExecute ones. */
static void noschedule(ctl_loop *c, const snapshot *s, int64_t now_ms, json_t *taints)
{
    size_t i;
    json_t *node;
    json_array_foreach(s->nodes, i, node)
    {
        const node_summary *n = s->node_sums[i];
        if (n->noschedule_ok || !n->name || node_waiting(c, s, node)) continue;
        const uint64_t *seen = ctl_lru_peek(c->noschedule_seen, n->name);
        if (seen && *seen == n->rv) continue;
        json_t *add, *remove;
        if (!ctl_nlc_noschedule_diff(node, now_ms, &add, &remove)) continue;
        json_array_append_new(taints, json_pack("{s:s, s:s, s:o, s:o}", "op", "taints", "node",
                                                n->name, "add", add, "remove", remove));
        uint64_t *rv = malloc(sizeof *rv);
        if (rv) *rv = n->rv;
        if (rv) ctl_lru_put(c->noschedule_seen, n->name, rv);
    }
}

typedef struct lookup_ctx {
    ctl_loop *c;
    const snapshot *s;
} lookup_ctx;

static const json_t *lookup_node(void *ud, const char *name, bool *busy)
{
    lookup_ctx *x = ud;
    const json_t *node = ctl_node_named(x->s, name);
    *busy = node && node_waiting(x->c, x->s, node);
    return *busy ? NULL : node;
}

/* One patch a node with every taint change of the pass, in order. */
static int send_taints(ctl_loop *c, const snapshot *s, const json_t *actions)
{
    json_t *done = json_object();
    int writes = 0;
    size_t i;
    const json_t *a;
    json_array_foreach(actions, i, a)
    {
        const char *name = kube_str(a, "node");
        if (!kube_str_is(a, "op", "taints") || json_object_get(done, name)) continue;
        json_object_set_new(done, name, json_true());
        const json_t *node = ctl_node_named(s, name);
        if (!node || node_waiting(c, s, node)) continue;
        const json_t *before = json_object_get(kube_obj(node, "spec"), "taints");
        json_t *taints = json_is_array(before) ? json_deep_copy(before) : json_array();
        for (size_t k = i; k < json_array_size(actions); k++) {
            const json_t *b = json_array_get(actions, k);
            if (!kube_str_is(b, "op", "taints") || strcmp(kube_str(b, "node"), name) != 0) continue;
            json_t *next = ctl_nlc_apply_taints(taints, json_object_get(b, "add"),
                                                json_object_get(b, "remove"));
            json_decref(taints);
            taints = next;
        }
        bool same = taints && (json_is_array(before) ? json_equal(taints, before)
                                                     : json_array_size(taints) == 0);
        if (taints && !same) {
            /* no taints left: the member goes, as a client's two-way patch
             * takes it out (jsonpath then prints nothing, not "[]") */
            json_t *patch =
                json_pack("{s:{s:s}, s:{s:O}}", "metadata", "resourceVersion",
                          kube_str(kube_obj(node, "metadata"), "resourceVersion"), "spec", "taints",
                          json_array_size(taints) ? taints : json_null());
            char path[400];
            ctl_object_path(path, sizeof path, "", "nodes", NULL, name, NULL);
            writes += ctl_send_tracked(c, ctl_wq_write_new("PATCH", path, NULL, CTL_MERGE, patch),
                                       "nodes", node, NULL, NULL);
        }
        json_decref(taints);
    }
    json_decref(done);
    return writes;
}

/* ---- events and pods not ready ---- */

static int node_events(ctl_loop *c, const json_t *actions, int64_t now_ms)
{
    int writes = 0;
    size_t i;
    const json_t *a;
    json_array_foreach(actions, i, a)
    {
        if (!kube_str_is(a, "op", "event")) continue;
        ctl_event_in in = {.kind = "Node",
                           .api_version = "v1",
                           .name = kube_str(a, "node"),
                           .uid = kube_str_or_null(a, "uid"),
                           .type = kube_str(a, "type"),
                           .reason = kube_str(a, "reason"),
                           .message = kube_str(a, "message"),
                           .component = CTL_NLC_COMPONENT};
        writes += ctl_record(c, &in, now_ms);
    }
    return writes;
}

static void pod_key(const pod_summary *p, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", p->ns ? p->ns : "", p->name ? p->name : "");
}

static json_t *get_pod(ctl_loop *c, const pod_summary *p)
{
    char path[600];
    ctl_object_path(path, sizeof path, "", "pods", p->ns, p->name, NULL);
    return ctl_get(c, path);
}

/* MarkPodsNotReady of one pod: its Ready condition False, and the
 * NodeNotReady event. */
static int mark_not_ready(ctl_loop *c, const pod_summary *p, int64_t now_ms)
{
    json_t *pod = get_pod(c, p);
    json_t *patch = pod ? ctl_nlc_pod_not_ready_patch(pod, now_ms) : NULL;
    int writes = 0;
    if (patch) {
        char path[620];
        ctl_object_path(path, sizeof path, "", "pods", p->ns, p->name, "status");
        writes += ctl_send_tracked(c, ctl_wq_write_new("PATCH", path, NULL, CTL_SMP, patch), "pods",
                                   pod, NULL, NULL);
        writes += ctl_record_event(c, pod, "Pod", "v1", "Warning", "NodeNotReady",
                                   "Node is not ready", CTL_NLC_COMPONENT, now_ms);
    }
    json_decref(pod);
    return writes;
}

typedef struct marks_ctx {
    ctl_loop *c;
    const snapshot *s;
    int64_t now_ms;
    int writes;
} marks_ctx;

/* A pod marked not ready whose node is not in that state any more is
 * forgotten; when its kubelet is back (the node Ready), the kubelet's next
 * status sync makes it Ready again. */
static bool mark_seen(void *ud, const char *key, void *value)
{
    marks_ctx *x = ud;
    const pod_mark *m = value;
    if (m->seen == x->c->pass) return true;
    const json_t *node = ctl_node_named(x->s, m->node);
    if (!node || !ctl_kubelet_manages(node) || ctl_node_held_down(node)) return false;
    char path[700];
    const char *slash = strchr(key, '/');
    if (!slash) return false;
    char ns[300];
    snprintf(ns, sizeof ns, "%.*s", (int)(slash - key), key);
    ctl_object_path(path, sizeof path, "", "pods", ns, slash + 1, NULL);
    json_t *pod = ctl_get(x->c, path);
    json_t *patch = pod ? ctl_kubelet_pod_ready_again(pod, node, (time_t)(x->now_ms / 1000)) : NULL;
    if (patch) {
        strcat(path, "/status");
        x->writes += ctl_send_tracked(x->c, ctl_wq_write_new("PATCH", path, NULL, CTL_SMP, patch),
                                      "pods", pod, NULL, NULL);
    }
    json_decref(pod);
    return false;
}

/* The pods of the nodes named by "pods-not-ready" actions (a monitor
 * round's): each marked once a version of it. */
static int pods_not_ready(ctl_loop *c, const snapshot *s, const json_t *actions, int64_t now_ms)
{
    json_t *nodes = json_object();
    size_t i;
    const json_t *a;
    json_array_foreach(actions, i, a) if (kube_str_is(a, "op", "pods-not-ready"))
        json_object_set_new(nodes, kube_str(a, "node"), json_true());
    int writes = 0;
    for (i = 0; json_object_size(nodes) && i < json_array_size(s->pods); i++) {
        const pod_summary *p = s->pod_sums[i];
        if (!p->node || !json_object_get(nodes, p->node) || ctl_pod_waiting(c, s, p)) continue;
        char key[600];
        pod_key(p, key, sizeof key);
        pod_mark *m = ctl_lru_peek(c->not_ready_marks, key);
        if (m && m->rv == p->rv && strcmp(m->node, p->node) == 0) {
            m->seen = c->pass;
            continue;
        }
        writes += mark_not_ready(c, p, now_ms);
        if (!m && (m = calloc(1, sizeof *m)) != NULL && ctl_lru_put(c->not_ready_marks, key, m))
            m = NULL;
        if (!m) continue;
        m->rv = p->rv;
        snprintf(m->node, sizeof m->node, "%s", p->node);
        m->seen = c->pass;
    }
    json_decref(nodes);
    marks_ctx x = {c, s, now_ms, 0};
    ctl_lru_sweep(c->not_ready_marks, mark_seen, &x);
    return writes + x.writes;
}

static bool node_listed(void *ud, const char *key, void *value)
{
    (void)value;
    const snapshot *s = ud;
    return json_object_get(s->node_index, key) != NULL;
}

/* ---- taint eviction ---- */

static uint64_t taints_fingerprint(const json_t *taints)
{
    uint64_t h = GP_HASH_SEED;
    size_t i;
    const json_t *t;
    json_array_foreach(taints, i, t)
    {
        h = gp_hash_str(h, kube_str(t, "key"));
        h = gp_hash_str(gp_hash_u64(h, 1), kube_str(t, "value"));
        h = gp_hash_str(gp_hash_u64(h, 2), kube_str(t, "effect"));
    }
    return h;
}

/* "Marking for deletion Pod NS/NAME" or "Cancelling deletion of Pod
 * NS/NAME", about the pod by name alone (emitPodDeletionEvent's reference). */
static int eviction_event(ctl_loop *c, const char *key, bool cancelling, int64_t now_ms)
{
    char ns[300], message[700];
    const char *slash = strchr(key, '/');
    snprintf(ns, sizeof ns, "%.*s", slash ? (int)(slash - key) : 0, key);
    snprintf(message, sizeof message, "%s Pod %s",
             cancelling ? "Cancelling deletion of" : "Marking for deletion", key);
    ctl_event_in in = {.kind = "Pod",
                       .api_version = "v1",
                       .ns = ns,
                       .name = slash ? slash + 1 : key,
                       .type = "Normal",
                       .reason = "TaintManagerEviction",
                       .message = message,
                       .component = CTL_TE_COMPONENT};
    return ctl_record(c, &in, now_ms);
}

/* addConditionAndDeletePod: the DisruptionTarget condition, then the
 * delete with the default grace period (a node whose kubelet is down
 * leaves the pod Terminating). */
static int evict(ctl_loop *c, const pod_summary *p, const char *key, int64_t now_ms)
{
    int writes = eviction_event(c, key, false, now_ms);
    json_t *pod = get_pod(c, p);
    if (!pod) return writes;
    char path[620], status_path[640];
    ctl_object_path(path, sizeof path, "", "pods", p->ns, p->name, NULL);
    snprintf(status_path, sizeof status_path, "%s/status", path);
    json_t *patch = ctl_te_disruption_patch(pod, now_ms);
    ctl_wq_write *del = ctl_wq_write_new("DELETE", path, NULL, NULL, NULL);
    ctl_wq_write *w = del;
    if (patch) {
        w = ctl_wq_write_new("PATCH", status_path, NULL, CTL_SMP, patch);
        ctl_wq_write_then(w, del);
    }
    writes += ctl_send_tracked(c, w, "pods", pod, NULL, NULL) * (patch ? 2 : 1);
    json_decref(pod);
    return writes;
}

/* processPodOnNode for a pod whose node, taints or version changed since
 * its work was last worked out. */
static int process_pod(ctl_loop *c, const pod_summary *p, const char *key, eviction *e,
                       const json_t *taints, uint64_t fp, int64_t now_ms)
{
    int writes = 0;
    if (strcmp(e->node, p->node) != 0 && ctl_te_cancel(&e->work))
        writes += eviction_event(c, key, true, now_ms);
    json_t *pod = get_pod(c, p);
    if (!pod) return writes;
    int64_t ms =
        ctl_te_toleration_ms(taints, json_object_get(kube_obj(pod, "spec"), "tolerations"));
    json_decref(pod);
    if (ctl_te_process(&e->work, ms, now_ms)) writes += eviction_event(c, key, true, now_ms);
    snprintf(e->node, sizeof e->node, "%s", p->node);
    e->taints_fp = fp;
    e->pod_rv = p->rv;
    return writes;
}

typedef struct sweep_ctx {
    ctl_loop *c;
    int64_t now_ms;
    int writes;
} sweep_ctx;

/* A pod no longer on a node with NoExecute taints (or gone): its pending
 * deletion is cancelled. */
static bool eviction_seen(void *ud, const char *key, void *value)
{
    sweep_ctx *x = ud;
    eviction *e = value;
    if (e->seen == x->c->pass) return true;
    if (ctl_te_cancel(&e->work)) x->writes += eviction_event(x->c, key, true, x->now_ms);
    return false;
}

static int taint_eviction(ctl_loop *c, const snapshot *s, int64_t now_ms)
{
    json_t *tainted = json_object(); /* node -> its NoExecute taints */
    size_t i;
    json_t *node;
    json_array_foreach(s->nodes, i, node)
    {
        if (s->node_sums[i]->noexecute && s->node_sums[i]->name)
            json_object_set_new(tainted, s->node_sums[i]->name, ctl_te_noexecute_taints(node));
    }
    int writes = 0;
    for (i = 0; json_object_size(tainted) && i < json_array_size(s->pods); i++) {
        const pod_summary *p = s->pod_sums[i];
        const json_t *taints = p->node ? json_object_get(tainted, p->node) : NULL;
        if (!taints) continue;
        char key[600];
        pod_key(p, key, sizeof key);
        eviction *e = ctl_lru_peek(c->evictions, key);
        if (p->deleting || ctl_pod_waiting(c, s, p)) {
            if (e) e->seen = c->pass;
            continue;
        }
        if (!e) {
            e = calloc(1, sizeof *e);
            if (!e || ctl_lru_put(c->evictions, key, e) != 0) continue;
        }
        e->seen = c->pass;
        uint64_t fp = taints_fingerprint(taints);
        if (strcmp(e->node, p->node) != 0 || e->taints_fp != fp || e->pod_rv != p->rv)
            writes += process_pod(c, p, key, e, taints, fp, now_ms);
        if (ctl_te_due(&e->work, now_ms)) {
            writes += evict(c, p, key, now_ms);
            e->work.pending = false;
            e->work.done = true;
        } else if (e->work.pending) {
            ctl_wake_at(c, e->work.fire_ms);
        }
    }
    json_decref(tainted);
    if (ctl_lru_size(c->evictions) > 0) {
        sweep_ctx x = {c, now_ms, 0};
        ctl_lru_sweep(c->evictions, eviction_seen, &x);
        writes += x.writes;
    }
    return writes;
}

/* ---- the pass ---- */

int ctl_node_lifecycle(ctl_loop *c, const snapshot *s, int64_t now_ms)
{
    int writes = 0;
    json_t *round = json_array(), *actions = json_array();
    if (!round || !actions) {
        json_decref(round);
        json_decref(actions);
        return 0;
    }
    bool monitored = now_ms >= c->next_monitor_ms;
    if (monitored) {
        monitor(c, s, now_ms, round);
        ctl_lru_sweep(c->noschedule_seen, node_listed, (void *)s);
        c->next_monitor_ms = now_ms + ctl_nlc_monitor_period_ms(c->nlc);
    }
    ctl_wake_at(c, c->next_monitor_ms);
    /* NoSchedule first (a new condition's taint goes before the NoExecute
     * one), the monitor's swaps and removals, then the NoExecute queue */
    noschedule(c, s, now_ms, actions);
    writes += send_statuses(c, s, round, actions);
    lookup_ctx x = {c, s};
    ctl_nlc_noexecute_pass(c->nlc, lookup_node, &x, now_ms, actions);
    if (ctl_nlc_noexecute_pending(c->nlc)) ctl_wake_at(c, now_ms + NOEXECUTE_PERIOD_MS);
    writes += send_taints(c, s, actions);
    writes += node_events(c, actions, now_ms);
    if (monitored) writes += pods_not_ready(c, s, actions, now_ms);
    writes += taint_eviction(c, s, now_ms);
    json_decref(round);
    json_decref(actions);
    return writes;
}

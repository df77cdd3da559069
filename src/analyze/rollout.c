/* The DaemonSet rollout analyzer (see rollout.h). */
#include "analyze/rollout.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/common.h"
#include "analyze/sched_message.h"
#include "kube/daemonset.h"
#include "kube/json.h"
#include "kube/pod.h"
#include "kube/pod_print.h"
#include "kube/quantity.h"
#include "util/i18n.h"

#define MAX_RES          32
#define EVIDENCE_PER_SET 10 /* pods or nodes listed one by one before "... and N more" */

typedef struct ds_pod {
    char *name, *node, *hash, *generation, *created;
    char status[64];
    char *waiting;       /* first container waiting reason, or NULL */
    char *sched_message; /* PodScheduled=False message, or NULL */
    bool bound, ready, available, deleting, terminal;
    bool old_image; /* a container runs another image than the template's */
    kube_quantity req[MAX_RES];
    bool updated; /* decided in finish */
} ds_pod;

typedef struct node_rec {
    char ready[16];
    bool unschedulable;
    kube_quantity alloc[MAX_RES];
    bool has[MAX_RES];
    size_t *pods; /* indexes into b->pods */
    size_t npods;
} node_rec;

struct an_rollout {
    json_t *ds;
    char ref[320], name[256], ns[256], uid[128];
    const char *names[MAX_RES]; /* tracked resources, borrowed from ds */
    size_t nres;
    kube_quantity template_req[MAX_RES];
    json_t *cur_rev; /* newest owned revision (incref'd) */
    ds_pod *pods;
    size_t npods, cap;
    an_node_table *nodes;               /* sums[0..nres): other pods' requests */
    an_event_log events;                /* by pod name */
    char *create_message, *create_time; /* the latest FailedCreate on the DaemonSet */
    json_int_t create_count;
    json_t *warnings;
    time_t now;
    bool oom;
};

/* ---- reading the DaemonSet ---- */

static int template_requests(an_rollout *b, gp_error *err)
{
    const json_t *spec = kube_path(b->ds, "spec", "template", "spec", NULL);
    /* cpu and memory first: every fit table has them */
    b->names[b->nres++] = "cpu";
    b->names[b->nres++] = "memory";
    an_spec_resource_names(spec, b->names, &b->nres, MAX_RES);
    json_t *pod = json_pack("{s:O}", "spec", spec ? (json_t *)spec : json_object());
    if (!pod) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    int rc = an_pod_requests(pod, b->names, b->nres, b->template_req, err);
    json_decref(pod);
    return rc;
}

an_rollout *an_rollout_new(const json_t *daemonset, gp_error *err)
{
    if (!json_is_object(daemonset) || strcmp(kube_str(daemonset, "kind"), "DaemonSet") != 0 ||
        !*kube_str(json_object_get(daemonset, "metadata"), "name")) {
        gp_error_set(err, NULL, 0, 0, "not a DaemonSet object");
        return NULL;
    }
    an_rollout *b = calloc(1, sizeof *b);
    if (!b) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    b->ds = json_deep_copy(daemonset);
    b->warnings = json_array();
    const json_t *meta = json_object_get(daemonset, "metadata");
    snprintf(b->name, sizeof b->name, "%s", kube_str(meta, "name"));
    snprintf(b->ns, sizeof b->ns, "%s", kube_str(meta, "namespace"));
    snprintf(b->uid, sizeof b->uid, "%s", kube_str(meta, "uid"));
    an_obj_ref(daemonset, b->ref, sizeof b->ref);
    if (!b->ds || !b->warnings || template_requests(b, err) < 0 ||
        !(b->nodes = an_node_table_new(MAX_RES))) {
        if (!err || !err->text[0]) gp_error_set(err, NULL, 0, 0, "out of memory");
        an_rollout_free(b);
        return NULL;
    }
    return b;
}

void an_rollout_set_now(an_rollout *b, time_t now)
{
    b->now = now;
}

static bool owned_by_ds(const an_rollout *b, const json_t *obj)
{
    const json_t *o = kube_controller_of(obj);
    if (!o) return false;
    if (*b->uid) return strcmp(kube_str(o, "uid"), b->uid) == 0;
    return strcmp(kube_str(o, "kind"), "DaemonSet") == 0 &&
           strcmp(kube_str(o, "name"), b->name) == 0;
}

static bool same_namespace(const an_rollout *b, const json_t *obj)
{
    return strcmp(kube_str(json_object_get(obj, "metadata"), "namespace"), b->ns) == 0;
}

void an_rollout_add_revision(an_rollout *b, const json_t *rev)
{
    if (!same_namespace(b, rev) || !owned_by_ds(b, rev)) return;
    json_int_t n = json_integer_value(json_object_get(rev, "revision"));
    if (b->cur_rev && json_integer_value(json_object_get(b->cur_rev, "revision")) >= n) return;
    json_decref(b->cur_rev);
    b->cur_rev = json_incref((json_t *)rev);
}

static node_rec *rec_of(an_rollout *b, an_node_entry *e)
{
    if (!e->user) e->user = calloc(1, sizeof(node_rec));
    if (!e->user) b->oom = true;
    return e->user;
}

static void node_rec_free(void *p)
{
    node_rec *r = p;
    free(r->pods);
    free(r);
}

void an_rollout_add_node(an_rollout *b, const json_t *node)
{
    an_node_entry *e =
        an_node_table_get(b->nodes, kube_str(json_object_get(node, "metadata"), "name"));
    node_rec *r = e ? rec_of(b, e) : NULL;
    if (!r) {
        b->oom = true;
        return;
    }
    e->seen = true;
    snprintf(r->ready, sizeof r->ready, "%s", kube_str(kube_condition(node, "Ready"), "status"));
    r->unschedulable = json_is_true(kube_path(node, "spec", "unschedulable", NULL));
    const json_t *alloc = kube_path(node, "status", "allocatable", NULL);
    for (size_t i = 0; i < b->nres; i++) {
        const json_t *v = json_object_get(alloc, b->names[i]);
        gp_error err;
        r->has[i] = v && json_is_string(v) &&
                    kube_quantity_parse(json_string_value(v), &r->alloc[i], &err) == 0;
        if (!r->has[i]) r->alloc[i] = (kube_quantity){0};
    }
}

/* ---- pods ---- */

static char *dup_str(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

/* IsPodAvailable against the clock the caller gave; without one, a Ready
 * pod is available at once. */
static bool is_available(const an_rollout *b, const json_t *pod)
{
    if (b->now == 0) return kube_pod_ready(pod);
    return kube_pod_available(pod, kube_int(kube_obj(b->ds, "spec"), "minReadySeconds"), b->now);
}

/* The node a DaemonSet pod is for, "" when it names none. */
static const char *target_node(const json_t *pod)
{
    const char *node = kube_ds_target_node(pod);
    return node ? node : "";
}

static const char *first_waiting(const json_t *pod)
{
    static const char *const lists[] = {"initContainerStatuses", "containerStatuses"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        const json_t *cs;
        json_array_foreach(kube_path(pod, "status", lists[l], NULL), i, cs)
        {
            const char *w = kube_str(kube_path(cs, "state", "waiting", NULL), "reason");
            if (*w) return w;
        }
    }
    return NULL;
}

static ds_pod *new_pod(an_rollout *b)
{
    if (b->npods == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        ds_pod *v = realloc(b->pods, cap * sizeof *v);
        if (!v) return NULL;
        b->pods = v;
        b->cap = cap;
    }
    ds_pod *p = &b->pods[b->npods++];
    memset(p, 0, sizeof *p);
    return p;
}

/* Whether a container of the pod runs another image than the template's
 * container of that name (a container the template lacks counts too). The
 * lab's OLD_IMAGE_PODS counts these: after an update that changed only the
 * request, pods on the old template already run the new image. */
static bool runs_old_image(const an_rollout *b, const json_t *pod)
{
    const json_t *tmpl = kube_path(b->ds, "spec", "template", "spec", "containers", NULL);
    size_t i;
    const json_t *c;
    json_array_foreach(kube_path(pod, "spec", "containers", NULL), i, c)
    {
        const json_t *want = kube_find(tmpl, "name", kube_str(c, "name"));
        if (!want || strcmp(kube_str(c, "image"), kube_str(want, "image")) != 0) return true;
    }
    return false;
}

static void add_ds_pod(an_rollout *b, const json_t *pod)
{
    ds_pod *p = new_pod(b);
    if (!p) {
        b->oom = true;
        return;
    }
    const json_t *meta = json_object_get(pod, "metadata");
    const json_t *labels = json_object_get(meta, "labels");
    const json_t *sched = kube_condition(pod, "PodScheduled");
    gp_error err = {0};
    p->name = dup_str(kube_str(meta, "name"));
    p->node = strdup(target_node(pod));
    p->hash = dup_str(kube_str(labels, "controller-revision-hash"));
    p->generation = dup_str(kube_str(labels, "pod-template-generation"));
    p->created = dup_str(kube_str(meta, "creationTimestamp"));
    p->waiting = dup_str(first_waiting(pod));
    if (strcmp(kube_str(sched, "status"), "False") == 0)
        p->sched_message = dup_str(kube_str(sched, "message"));
    p->bound = *kube_str(json_object_get(pod, "spec"), "nodeName") != '\0';
    p->ready = kube_pod_ready(pod);
    p->available = is_available(b, pod);
    p->deleting = kube_deleting(pod);
    p->terminal = kube_pod_terminal(pod);
    p->old_image = runs_old_image(b, pod);
    kube_pod_status_text(pod, p->status, sizeof p->status);
    if (an_pod_requests(pod, b->names, b->nres, p->req, &err) < 0)
        json_array_append_new(b->warnings, json_string(err.text));
    if (!p->name || !p->node) b->oom = true;
}

void an_rollout_add_pod(an_rollout *b, const json_t *pod)
{
    if (same_namespace(b, pod) && owned_by_ds(b, pod)) {
        add_ds_pod(b, pod);
        return;
    }
    const char *node = kube_str(json_object_get(pod, "spec"), "nodeName");
    if (!*node || kube_pod_terminal(pod)) return;
    kube_quantity req[MAX_RES];
    gp_error err = {0};
    if (an_pod_requests(pod, b->names, b->nres, req, &err) < 0) {
        json_array_append_new(b->warnings, json_string(err.text));
        return;
    }
    an_node_entry *e = an_node_table_get(b->nodes, node);
    if (!e || !rec_of(b, e)) {
        b->oom = true;
        return;
    }
    for (size_t i = 0; i < b->nres; i++)
        if (kube_quantity_add(&e->sums[i], &req[i], &e->sums[i], &err) < 0)
            json_array_append_new(b->warnings, json_string(err.text));
}

/* The DaemonSet controller's FailedCreate on the DaemonSet itself: the pods
 * it could not make (the latest one; the real control plane aggregates them
 * into one event whose count grows, k8s-cases/real-1.32.13). */
static void add_ds_event(an_rollout *b, const json_t *event, const an_event_view *v)
{
    if (strcmp(v->reason, "FailedCreate") != 0) return;
    if (b->create_time && strcmp(v->time, b->create_time) < 0) return;
    free(b->create_message);
    free(b->create_time);
    b->create_message = strdup(v->message);
    b->create_time = strdup(v->time);
    json_int_t count = json_integer_value(json_object_get(event, "count"));
    if (!count) count = json_integer_value(kube_path(event, "series", "count", NULL));
    b->create_count = count ? count : 1;
    if (!b->create_message || !b->create_time) b->oom = true;
}

/* Only the scheduler's and kubelet's words on this DaemonSet's pods matter
 * (pods are named "<ds>-<suffix>"; the latest event per pod and reason
 * wins), and the controller's on the DaemonSet. */
void an_rollout_add_event(an_rollout *b, const json_t *event)
{
    an_event_view v;
    an_event_read(event, &v);
    const char *name = kube_str(v.object, "name");
    if (strcmp(kube_str(v.object, "namespace"), b->ns) != 0 || strcmp(v.type, "Warning") != 0)
        return;
    if (strcmp(kube_str(v.object, "kind"), "DaemonSet") == 0) {
        if (strcmp(name, b->name) == 0) add_ds_event(b, event, &v);
        return;
    }
    size_t len = strlen(b->name);
    if (strcmp(kube_str(v.object, "kind"), "Pod") != 0 || strncmp(name, b->name, len) != 0 ||
        name[len] != '-')
        return;
    if (an_event_log_add(&b->events, name, &v) < 0) b->oom = true;
}

static const char *event_message(const an_rollout *b, const char *pod, const char *reason)
{
    return an_event_log_message(&b->events, pod, reason);
}

/* ---- finish ---- */

typedef struct ctx {
    an_rollout *b;
    json_t *evidence;
    const char *hash, *tgen;
} ctx;

static void evidence(ctx *c, const char *kind, const char *ref, const char *field,
                     const char *value)
{
    char line[2048];
    snprintf(line, sizeof line, "%s %s %s = %s", kind, ref, field, value);
    json_array_append_new(c->evidence, json_string(line));
}

static void evidence_int(ctx *c, const char *field, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    evidence(c, "daemonset", c->b->ref, field, num);
}

static json_t *status_numbers(ctx *c)
{
    static const struct {
        const char *key, *field;
    } f[] = {
        {"desired", "desiredNumberScheduled"},  {"current", "currentNumberScheduled"},
        {"updated", "updatedNumberScheduled"},  {"ready", "numberReady"},
        {"available", "numberAvailable"},       {"unavailable", "numberUnavailable"},
        {"misscheduled", "numberMisscheduled"},
    };
    const json_t *status = json_object_get(c->b->ds, "status");
    json_t *out = json_object();
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        json_int_t v = json_integer_value(json_object_get(status, f[i].field));
        char path[64];
        snprintf(path, sizeof path, ".status.%s", f[i].field);
        evidence_int(c, path, v);
        json_object_set_new(out, f[i].key, json_integer(v));
    }
    return out;
}

static bool pod_updated(const ctx *c, const ds_pod *p)
{
    return (c->hash && p->hash && strcmp(p->hash, c->hash) == 0) ||
           (c->tgen && p->generation && strcmp(p->generation, c->tgen) == 0);
}

static int by_pod_name(const void *x, const void *y)
{
    const ds_pod *a = x, *b = y;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* Groups live pods by node and marks them updated. Pods are sorted first so
 * that the report does not depend on the order they were added in. */
static int group_pods(ctx *c, size_t *old_pods, size_t *old_image_pods)
{
    an_rollout *b = c->b;
    *old_pods = 0;
    *old_image_pods = 0;
    if (b->npods) qsort(b->pods, b->npods, sizeof *b->pods, by_pod_name);
    for (size_t i = 0; i < b->npods; i++) {
        ds_pod *p = &b->pods[i];
        p->updated = pod_updated(c, p);
        if (p->terminal && p->deleting) continue;
        if (!p->updated && !p->deleting) (*old_pods)++;
        if (p->old_image && !p->deleting) (*old_image_pods)++;
        if (!*p->node) continue;
        an_node_entry *e = an_node_table_get(b->nodes, p->node);
        node_rec *r = e ? rec_of(b, e) : NULL;
        size_t *v = r ? realloc(r->pods, (r->npods + 1) * sizeof *v) : NULL;
        if (!v) return -1;
        r->pods = v;
        r->pods[r->npods++] = i;
    }
    return 0;
}

/* update.go's per-node verdict (maxSurge 0 and >0 alike for the count):
 * NULL when the node does not spend budget. */
static const char *node_spends(const an_rollout *b, const node_rec *r, const ds_pod **which)
{
    size_t nnew = 0, nold = 0;
    const ds_pod *pnew = NULL, *pold = NULL;
    for (size_t i = 0; i < r->npods; i++) {
        const ds_pod *p = &b->pods[r->pods[i]];
        if (p->deleting) continue;
        if (p->updated)
            nnew++, pnew = p;
        else
            nold++, pold = p;
    }
    *which = pnew ? pnew : pold;
    if (nnew > 1 || nold > 1) return "duplicate-pods";
    if (nnew == 0 && nold == 0) return r->npods ? "pod-terminating" : NULL;
    if (nnew && nold) return "old-and-new";
    if (nnew) return pnew->available ? NULL : "new-pod-unavailable";
    return pold->available ? NULL : "old-pod-unavailable";
}

/* The spec's updateStrategy as the API server defaults it
 * (SetDefaults_DaemonSet), so that the controller's arithmetic applies to a
 * DaemonSet written by hand too: type RollingUpdate when absent, and then
 * maxUnavailable and maxSurge (given here, defaults filled in). */
static json_t *defaulted_spec(const json_t *ds, const json_t *mu, const json_t *ms)
{
    const json_t *strategy = kube_path(ds, "spec", "updateStrategy", NULL);
    const char *type = kube_str(strategy, "type");
    if (*type && strcmp(type, "RollingUpdate") != 0)
        return json_pack("{s:O?}", "updateStrategy", strategy);
    return json_pack("{s:{s:s, s:{s:O, s:O}}}", "updateStrategy", "type", "RollingUpdate",
                     "rollingUpdate", "maxUnavailable", mu, "maxSurge", ms);
}

static json_t *budget(ctx *c, long desired, an_node_entry **nodes, size_t n, long *spent_out,
                      long *max_unavail)
{
    an_rollout *b = c->b;
    const json_t *ru = kube_path(b->ds, "spec", "updateStrategy", "rollingUpdate", NULL);
    const json_t *mu = json_object_get(ru, "maxUnavailable"), *ms = json_object_get(ru, "maxSurge");
    json_t *mu_default = json_integer(1), *ms_default = json_integer(0);
    if (!mu) mu = mu_default;
    if (!ms) ms = ms_default;
    int64_t unavail = 1, surge = 0;
    gp_error err = {0};
    json_t *defaulted = defaulted_spec(b->ds, mu, ms);
    if (kube_ds_update_limits(defaulted, desired, &unavail, &surge, &err) < 0) {
        char text[sizeof err.text + 400];
        snprintf(text, sizeof text, "daemonset %s: %s", b->ref, err.text);
        json_array_append_new(b->warnings, json_string(text));
        unavail = 1, surge = 0;
    }
    json_decref(defaulted);
    char *mu_text = json_dumps(mu, JSON_ENCODE_ANY), *ms_text = json_dumps(ms, JSON_ENCODE_ANY);
    evidence(c, "daemonset", b->ref, ".spec.updateStrategy.rollingUpdate.maxUnavailable",
             json_object_get(ru, "maxUnavailable") ? mu_text : "<absent> (default 1)");
    evidence(c, "daemonset", b->ref, ".spec.updateStrategy.rollingUpdate.maxSurge",
             json_object_get(ru, "maxSurge") ? ms_text : "<absent> (default 0)");
    free(mu_text);
    free(ms_text);

    json_t *spent_by = json_array();
    long spent = 0, with_pod = 0;
    for (size_t i = 0; i < n; i++) {
        node_rec *r = nodes[i]->user;
        if (!r || r->npods == 0) continue;
        with_pod++;
        const ds_pod *p = NULL;
        const char *state = node_spends(b, r, &p);
        if (!state) continue;
        spent++;
        json_array_append_new(spent_by, json_pack("{s:s, s:s, s:s?}", "node", nodes[i]->name,
                                                  "state", state, "pod", p ? p->name : NULL));
    }
    long without = desired > with_pod ? desired - with_pod : 0;
    spent += without;
    *spent_out = spent;
    *max_unavail = unavail;
    json_t *out = json_pack("{s:I, s:O, s:I, s:O, s:I, s:I, s:o}", "max_unavailable",
                            (json_int_t)unavail, "max_unavailable_spec", mu, "max_surge",
                            (json_int_t)surge, "max_surge_spec", ms, "spent", (json_int_t)spent,
                            "nodes_without_pod", (json_int_t)without, "spent_by", spent_by);
    json_decref(mu_default);
    json_decref(ms_default);
    return out;
}

static json_t *requests_json(const an_rollout *b)
{
    json_t *out = json_object();
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    for (size_t i = 0; i < b->nres; i++) {
        if (kube_quantity_is_zero(&b->template_req[i])) continue;
        kube_quantity_format(&b->template_req[i], buf);
        json_object_set_new(out, b->names[i], json_string(buf));
    }
    return out;
}

/* One node's fit: allocatable minus others' requests (plus its old
 * DaemonSet pod's when surging) against the template's requests. */
static json_t *node_fit(const an_rollout *b, const an_node_entry *e, long surge)
{
    const node_rec *r = e->user;
    kube_quantity used[MAX_RES];
    gp_error err;
    memcpy(used, e->sums, b->nres * sizeof *used);
    for (size_t k = 0; surge > 0 && k < r->npods; k++) {
        const ds_pod *p = &b->pods[r->pods[k]];
        if (p->bound && !p->updated && !p->terminal)
            for (size_t i = 0; i < b->nres; i++)
                kube_quantity_add(&used[i], &p->req[i], &used[i], &err);
    }
    json_t *res = json_array();
    bool fits = true;
    for (size_t i = 0; i < b->nres; i++) {
        if (kube_quantity_is_zero(&b->template_req[i])) continue;
        kube_quantity free_q;
        if (kube_quantity_sub(&r->alloc[i], &used[i], &free_q, &err) < 0)
            free_q = (kube_quantity){0};
        bool ok = kube_quantity_cmp(&b->template_req[i], &free_q) <= 0;
        fits = fits && ok;
        char a[KUBE_QUANTITY_FORMAT_MAX], u[KUBE_QUANTITY_FORMAT_MAX], f[KUBE_QUANTITY_FORMAT_MAX],
            q[KUBE_QUANTITY_FORMAT_MAX];
        kube_quantity_format(&r->alloc[i], a);
        kube_quantity_format(&used[i], u);
        kube_quantity_format(&free_q, f);
        kube_quantity_format(&b->template_req[i], q);
        json_array_append_new(res, json_pack("{s:s, s:s?, s:s, s:s, s:s, s:b}", "name", b->names[i],
                                             "allocatable", r->has[i] ? a : NULL, "requested", u,
                                             "free", f, "request", q, "fits", ok));
    }
    return json_pack("{s:s, s:s, s:o, s:b}", "node", e->name, "ready", r->ready, "resources", res,
                     "fits", fits);
}

static const json_t *fit_row(const json_t *fit, const char *node)
{
    size_t i;
    const json_t *row;
    json_array_foreach(fit, i, row)
    {
        if (strcmp(kube_str(row, "node"), node) == 0) return row;
    }
    return NULL;
}

/* "requests 64Gi, node has 32Gi free" for an insufficient-<resource> blocker. */
static void fit_detail(const json_t *fit, const char *node, const char *blocker, char *buf,
                       size_t size)
{
    buf[0] = '\0';
    const char *res = strncmp(blocker, "insufficient-", 13) == 0 ? blocker + 13 : NULL;
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(fit_row(fit, node), "resources"), i, r)
    {
        if (!res || strcmp(kube_str(r, "name"), res) != 0) continue;
        kube_quantity q, f;
        gp_error err;
        char hq[KUBE_QUANTITY_FORMAT_MAX], hf[KUBE_QUANTITY_FORMAT_MAX];
        if (kube_quantity_parse(kube_str(r, "request"), &q, &err) < 0 ||
            kube_quantity_parse(kube_str(r, "free"), &f, &err) < 0)
            return;
        an_quantity_human(res, &q, hq);
        an_quantity_human(res, &f, hf);
        snprintf(buf, size, "requests %s, node has %s free", hq, hf);
    }
}

static const char *node_ready(const an_rollout *b, const char *node)
{
    an_node_entry *e = an_node_table_find(b->nodes, node);
    node_rec *r = e && e->seen ? e->user : NULL;
    return r ? r->ready : "";
}

/* Why a pod is not available, as a blocker code and the message behind it. */
static const char *pod_blocker(const an_rollout *b, const ds_pod *p, const char **message,
                               char code[AN_BLOCKER_MAX])
{
    const char *msg = p->sched_message;
    if (!msg && !p->bound) msg = event_message(b, p->name, "FailedScheduling");
    *message = msg ? msg : "";
    if (msg && !p->bound) {
        json_t *parsed = an_sched_message_parse(msg, NULL);
        snprintf(code, AN_BLOCKER_MAX, "%s", parsed ? an_sched_primary_blocker(parsed) : "unknown");
        json_decref(parsed);
        return code;
    }
    const char *ready = node_ready(b, p->node);
    if (*ready && strcmp(ready, "True") != 0) {
        *message = "";
        return "node-not-ready";
    }
    const char *w = an_waiting_blocker(p->waiting);
    if (w) {
        *message = p->waiting;
        return w;
    }
    /* A pod that waits to start: the kubelet's FailedCreatePodSandBox. */
    const char *sandbox = event_message(b, p->name, "FailedCreatePodSandBox");
    const char *e = an_event_blocker("FailedCreatePodSandBox", sandbox, NULL, 0);
    if (e) {
        *message = sandbox;
        return e;
    }
    return "unknown";
}

static int cmp_stuck(const void *x, const void *y)
{
    const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
    int ua = json_is_true(json_object_get(a, "updated")),
        ub = json_is_true(json_object_get(b, "updated"));
    if (ua != ub) return ub - ua;
    int c = strcmp(kube_str(a, "node"), kube_str(b, "node"));
    return c ? c : strcmp(kube_str(a, "pod"), kube_str(b, "pod"));
}

static json_t *stuck_pods(ctx *c, const json_t *fit)
{
    an_rollout *b = c->b;
    json_t **v = calloc(b->npods + 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < b->npods; i++) {
        const ds_pod *p = &b->pods[i];
        if (p->available || p->deleting || p->terminal) continue;
        const char *message;
        char code[AN_BLOCKER_MAX], detail[768];
        const char *blocker = pod_blocker(b, p, &message, code);
        fit_detail(fit, p->node, blocker, detail, sizeof detail);
        char handler[256];
        if (strcmp(blocker, "runtime-handler-missing") == 0 &&
            an_event_blocker("FailedCreatePodSandBox", message, handler, sizeof handler))
            snprintf(detail, sizeof detail, "containerd on %s has no handler %s", p->node, handler);
        v[n++] = json_pack("{s:s, s:s, s:b, s:s, s:s, s:s, s:s}", "pod", p->name, "node", p->node,
                           "updated", p->updated, "status", p->status, "blocker", blocker,
                           "message", message, "detail", detail);
    }
    if (v) qsort(v, n, sizeof *v, cmp_stuck);
    json_t *out = json_array();
    for (size_t i = 0; v && i < n; i++)
        json_array_append_new(out, v[i]);
    free(v);
    return out;
}

static void pod_evidence(ctx *c, json_t *stuck)
{
    an_rollout *b = c->b;
    char ref[600], value[512];
    size_t listed = 0, more = 0;
    for (size_t i = 0; i < b->npods; i++) {
        const ds_pod *p = &b->pods[i];
        if (p->updated && p->available) continue;
        if (listed++ >= EVIDENCE_PER_SET) {
            more++;
            continue;
        }
        snprintf(ref, sizeof ref, "%s/%s", b->ns, p->name);
        snprintf(value, sizeof value, "%s (current %s)", p->hash ? p->hash : "<absent>",
                 c->hash ? c->hash : "<unknown>");
        evidence(c, "pod", ref, ".metadata.labels.controller-revision-hash", value);
        evidence(c, "pod", ref, ".spec.nodeName", p->bound ? p->node : "<absent>");
        evidence(c, "pod", ref, "STATUS", p->status);
    }
    size_t i;
    const json_t *s;
    json_array_foreach(stuck, i, s)
    {
        if (i >= EVIDENCE_PER_SET || !*kube_str(s, "message")) continue;
        snprintf(ref, sizeof ref, "%s/%s", b->ns, kube_str(s, "pod"));
        evidence(c, "pod", ref, ".status.conditions[PodScheduled].message", kube_str(s, "message"));
    }
    if (more) {
        snprintf(value, sizeof value, "... and %zu more pods", more);
        json_array_append_new(c->evidence, json_string(value));
    }
}

static void fit_evidence(ctx *c, const json_t *fit)
{
    size_t i, j, listed = 0;
    const json_t *row, *r;
    char field[400];
    json_array_foreach(fit, i, row)
    {
        if (json_is_true(json_object_get(row, "fits")) || listed++ >= EVIDENCE_PER_SET) continue;
        json_array_foreach(json_object_get(row, "resources"), j, r)
        {
            snprintf(field, sizeof field, ".status.allocatable.%s", kube_str(r, "name"));
            const char *a = json_string_value(json_object_get(r, "allocatable"));
            evidence(c, "node", kube_str(row, "node"), field, a ? a : "<absent>");
        }
    }
}

/* The controller's FailedCreate, classified; null without one. */
static json_t *create_failure(ctx *c)
{
    const an_rollout *b = c->b;
    if (!b->create_message) return json_null();
    char name[256];
    const char *blocker = an_event_blocker("FailedCreate", b->create_message, name, sizeof name);
    evidence(c, "event", b->ref, "FailedCreate .message", b->create_message);
    char count[32];
    snprintf(count, sizeof count, "%lld", (long long)b->create_count);
    evidence(c, "event", b->ref, "FailedCreate .count", count);
    return json_pack("{s:s, s:s, s:I, s:s, s:s?}", "reason", "FailedCreate", "message",
                     b->create_message, "count", (json_int_t)b->create_count, "blocker", blocker,
                     "runtime_class", *name ? name : NULL);
}

static void verdict(ctx *c, json_t *report, long spent, long max_unavail)
{
    const json_t *st = json_object_get(report, "status");
    long long desired = json_integer_value(json_object_get(st, "desired"));
    long long updated = json_integer_value(json_object_get(st, "updated"));
    long long avail = json_integer_value(json_object_get(st, "available"));
    const json_t *first = json_array_get(json_object_get(report, "stuck"), 0);
    const json_t *create = json_object_get(report, "create_failure");
    long long without =
        json_integer_value(json_object_get(json_object_get(report, "budget"), "nodes_without_pod"));
    json_int_t gen = json_integer_value(kube_path(c->b->ds, "metadata", "generation", NULL));
    json_int_t obs = json_integer_value(kube_path(c->b->ds, "status", "observedGeneration", NULL));
    const char *state;
    char text[2048];
    if (strcmp(kube_str(report, "strategy"), "OnDelete") == 0) {
        state = "on-delete";
        snprintf(text, sizeof text,
                 _("OnDelete strategy: pods change only when deleted; %lld of %lld updated"),
                 updated, desired);
    } else if (gen > obs) {
        state = "waiting-observe";
        snprintf(text, sizeof text,
                 _("spec update not yet observed (generation %lld, observed %lld)"), (long long)gen,
                 (long long)obs);
    } else if (updated >= desired && avail >= desired) {
        state = "complete";
        snprintf(text, sizeof text, _("rollout complete: %lld of %lld updated and available"),
                 updated, desired);
    } else if (without > 0 && json_is_object(create)) {
        /* No pod to wait for: the controller cannot make them. */
        state = "stalled";
        snprintf(text, sizeof text,
                 _("rollout stalled: %lld of %lld updated; the DaemonSet controller cannot create "
                   "pods for %lld nodes: %s"),
                 updated, desired, without, kube_str(create, "message"));
    } else if (spent >= max_unavail && first) {
        state = "stalled";
        const char *detail = kube_str(first, "detail");
        const char *msg = kube_str(first, "message");
        char reason[1024];
        json_t *parsed = *msg ? an_sched_message_parse(msg, NULL) : NULL;
        const json_t *item = NULL;
        size_t i;
        const json_t *it;
        json_array_foreach(json_object_get(parsed, "reasons"), i, it)
        {
            if (!item && strcmp(kube_str(it, "blocker"), kube_str(first, "blocker")) == 0)
                item = it;
        }
        snprintf(reason, sizeof reason, "%s",
                 item ? kube_str(item, "reason") : kube_str(first, "blocker"));
        json_decref(parsed);
        snprintf(text, sizeof text,
                 _("rollout stalled: %lld of %lld updated; the %s pod cannot run on %s: %s%s%s%s"),
                 updated, desired,
                 json_is_true(json_object_get(first, "updated")) ? _("new") : _("old"),
                 kube_str(first, "node"), reason, *detail ? " (" : "", detail, *detail ? ")" : "");
    } else {
        state = "progressing";
        snprintf(text, sizeof text, _("rollout in progress: %lld of %lld updated, %lld available"),
                 updated, desired, avail);
    }
    json_object_set_new(report, "verdict", json_pack("{s:s, s:s}", "state", state, "text", text));
}

static json_t *revision_json(ctx *c)
{
    const json_t *r = c->b->cur_rev;
    if (!r) return json_null();
    char ref[600], num[32];
    an_obj_ref(r, ref, sizeof ref);
    snprintf(num, sizeof num, "%lld",
             (long long)json_integer_value(json_object_get(r, "revision")));
    evidence(c, "controllerrevision", ref, ".revision", num);
    evidence(c, "controllerrevision", ref, ".metadata.labels.controller-revision-hash",
             c->hash ? c->hash : "<absent>");
    return json_pack("{s:s, s:O, s:s?}", "name", kube_str(json_object_get(r, "metadata"), "name"),
                     "revision", json_object_get(r, "revision"), "hash", c->hash);
}

/* The newest revision's hash: its label, else its name past "<ds>-". */
static const char *current_hash(const an_rollout *b)
{
    if (!b->cur_rev) return NULL;
    const json_t *meta = json_object_get(b->cur_rev, "metadata");
    const char *h = kube_str(json_object_get(meta, "labels"), "controller-revision-hash");
    if (*h) return h;
    const char *name = kube_str(meta, "name");
    size_t len = strlen(b->name);
    return strncmp(name, b->name, len) == 0 && name[len] == '-' ? name + len + 1 : NULL;
}

static json_t *fit_table(an_rollout *b, an_node_entry **nodes, size_t n, long surge)
{
    json_t *fit = json_array();
    for (size_t i = 0; fit && i < n; i++) {
        node_rec *r = nodes[i]->user;
        if (r && r->npods && nodes[i]->seen)
            json_array_append_new(fit, node_fit(b, nodes[i], surge));
    }
    return fit;
}

json_t *an_rollout_finish(an_rollout *b, gp_error *err)
{
    ctx c = {.b = b, .evidence = json_array(), .hash = current_hash(b)};
    const char *tgen = kube_str(kube_path(b->ds, "metadata", "annotations", NULL),
                                "deprecated.daemonset.template.generation");
    c.tgen = *tgen ? tgen : NULL;
    size_t old_pods = 0, old_image_pods = 0, n = 0;
    an_node_entry **nodes = NULL;
    if (b->oom || !c.evidence || group_pods(&c, &old_pods, &old_image_pods) < 0 ||
        !(nodes = an_node_table_sorted(b->nodes, &n))) {
        json_decref(c.evidence);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    const char *strategy = kube_str(kube_path(b->ds, "spec", "updateStrategy", NULL), "type");
    json_t *report = json_pack("{s:s, s:s, s:s}", "schema", AN_SCHEMA_ROLLOUT, "daemonset", b->ref,
                               "strategy", *strategy ? strategy : "RollingUpdate");
    evidence(&c, "daemonset", b->ref, ".spec.updateStrategy.type",
             *strategy ? strategy : "<absent>");
    evidence_int(&c, ".metadata.generation",
                 json_integer_value(kube_path(b->ds, "metadata", "generation", NULL)));
    evidence_int(&c, ".status.observedGeneration",
                 json_integer_value(kube_path(b->ds, "status", "observedGeneration", NULL)));
    evidence(&c, "daemonset", b->ref,
             ".metadata.annotations.deprecated.daemonset.template.generation",
             c.tgen ? c.tgen : "<absent>");
    json_object_set_new(
        report, "generation",
        json_integer(json_integer_value(kube_path(b->ds, "metadata", "generation", NULL))));
    json_object_set_new(
        report, "observed_generation",
        json_integer(json_integer_value(kube_path(b->ds, "status", "observedGeneration", NULL))));
    json_object_set_new(report, "template_generation", c.tgen ? json_string(c.tgen) : json_null());
    json_object_set_new(report, "current_revision", revision_json(&c));
    json_t *status = status_numbers(&c);
    json_object_set_new(report, "status", status);
    json_object_set_new(report, "old_pods", json_integer((json_int_t)old_pods));
    json_object_set_new(report, "old_image_pods", json_integer((json_int_t)old_image_pods));
    long spent = 0, max_unavail = 1;
    json_t *bud = budget(&c, (long)json_integer_value(json_object_get(status, "desired")), nodes, n,
                         &spent, &max_unavail);
    long surge = (long)json_integer_value(json_object_get(bud, "max_surge"));
    json_object_set_new(report, "budget", bud);
    json_object_set_new(report, "requests", requests_json(b));
    json_t *fit = fit_table(b, nodes, n, surge);
    json_object_set_new(report, "fit", fit);
    json_t *stuck = stuck_pods(&c, fit);
    json_object_set_new(report, "stuck", stuck);
    const json_t *first = json_array_get(stuck, 0);
    json_t *create = create_failure(&c);
    json_object_set_new(report, "create_failure", create);
    /* Nodes without a pod because none can be made come first: no pod
     * there will ever show what blocks it. */
    bool creating =
        json_is_object(create) && json_integer_value(json_object_get(bud, "nodes_without_pod")) > 0;
    json_object_set_new(report, "blocker",
                        json_string(creating ? kube_str(create, "blocker")
                                    : first  ? kube_str(first, "blocker")
                                             : "none"));
    pod_evidence(&c, stuck);
    fit_evidence(&c, fit);
    verdict(&c, report, spent, max_unavail);
    json_object_set_new(report, "evidence", c.evidence);
    json_object_set(report, "warnings", b->warnings);
    free(nodes);
    return report;
}

void an_rollout_free(an_rollout *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->npods; i++) {
        ds_pod *p = &b->pods[i];
        free(p->name), free(p->node), free(p->hash), free(p->generation), free(p->created);
        free(p->waiting), free(p->sched_message);
    }
    free(b->pods);
    an_event_log_free(&b->events);
    free(b->create_message);
    free(b->create_time);
    an_node_table_free(b->nodes, node_rec_free);
    json_decref(b->cur_rev);
    json_decref(b->warnings);
    json_decref(b->ds);
    free(b);
}

/* ---- rendering ---- */

static long long num(const json_t *obj, const char *key)
{
    return (long long)json_integer_value(json_object_get(obj, key));
}

static void render_lab(const json_t *r, FILE *out)
{
    const json_t *st = json_object_get(r, "status");
    fprintf(out, "DESIRED=%lld\nUPDATED=%lld\nREADY=%lld\nOLD_IMAGE_PODS=%lld\n",
            num(st, "desired"), num(st, "updated"), num(st, "ready"), num(r, "old_image_pods"));
    fprintf(out, "MAX_UNAVAILABLE=%lld\nBLOCKER=%s\n",
            num(json_object_get(r, "budget"), "max_unavailable"), kube_str(r, "blocker"));
}

static void print_table(an_table *t, FILE *out)
{
    if (t) an_table_print(t, out, 0, "  ");
    an_table_free(t);
}

static void render_status(const json_t *r, FILE *out)
{
    const json_t *st = json_object_get(r, "status");
    const json_t *rev = json_object_get(r, "current_revision");
    fprintf(out, _("DaemonSet %s: %s, revision %lld (%s)\n"), kube_str(r, "daemonset"),
            kube_str(r, "strategy"), num(rev, "revision"),
            *kube_str(rev, "hash") ? kube_str(rev, "hash") : "?");
    an_table *t = an_table_new(7);
    const char *head[7] = {_("DESIRED"),   _("CURRENT"),     _("UPDATED"), _("READY"),
                           _("AVAILABLE"), _("UNAVAILABLE"), _("OLD PODS")};
    char v[7][24];
    const char *keys[6] = {"desired", "current", "updated", "ready", "available", "unavailable"};
    for (size_t i = 0; i < 6; i++)
        snprintf(v[i], sizeof v[i], "%lld", num(st, keys[i]));
    snprintf(v[6], sizeof v[6], "%lld", num(r, "old_pods"));
    const char *row[7] = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    if (t) an_table_row(t, head), an_table_row(t, row);
    print_table(t, out);
}

static void render_budget(const json_t *r, FILE *out)
{
    const json_t *b = json_object_get(r, "budget");
    char *mu = json_dumps(json_object_get(b, "max_unavailable_spec"), JSON_ENCODE_ANY);
    char *ms = json_dumps(json_object_get(b, "max_surge_spec"), JSON_ENCODE_ANY);
    fprintf(out,
            _("\nBudget: maxUnavailable %lld (spec %s), maxSurge %lld (spec %s); %lld spent\n"),
            num(b, "max_unavailable"), mu ? mu : "?", num(b, "max_surge"), ms ? ms : "?",
            num(b, "spent"));
    free(mu);
    free(ms);
    if (num(b, "nodes_without_pod"))
        fprintf(out, _("  %lld nodes should run a pod and have none\n"),
                num(b, "nodes_without_pod"));
    an_table *t = an_table_new(3);
    const char *head[3] = {_("NODE"), _("STATE"), _("POD")};
    if (t) an_table_row(t, head);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(b, "spent_by"), i, s)
    {
        const char *row[3] = {kube_str(s, "node"), kube_str(s, "state"), kube_str(s, "pod")};
        if (t) an_table_row(t, row);
    }
    if (json_array_size(json_object_get(b, "spent_by")))
        print_table(t, out);
    else
        an_table_free(t);
}

static void render_fit(const json_t *r, FILE *out)
{
    fprintf(out, _("\nFit of the new pod (allocatable - requested by other pods vs request):\n"));
    an_table *t = an_table_new(7);
    const char *head[7] = {_("NODE"), _("RESOURCE"), _("ALLOCATABLE"), _("REQUESTED"),
                           _("FREE"), _("REQUEST"),  _("FITS")};
    if (t) an_table_row(t, head);
    size_t i, j;
    const json_t *row, *res;
    json_array_foreach(json_object_get(r, "fit"), i, row)
    {
        json_array_foreach(json_object_get(row, "resources"), j, res)
        {
            const char *a = json_string_value(json_object_get(res, "allocatable"));
            const char *cells[7] = {kube_str(row, "node"),
                                    kube_str(res, "name"),
                                    a ? a : "<none>",
                                    kube_str(res, "requested"),
                                    kube_str(res, "free"),
                                    kube_str(res, "request"),
                                    json_is_true(json_object_get(res, "fits")) ? _("yes")
                                                                               : _("no")};
            if (t) an_table_row(t, cells);
        }
    }
    print_table(t, out);
}

static void render_stuck(const json_t *r, FILE *out)
{
    const json_t *stuck = json_object_get(r, "stuck");
    if (!json_array_size(stuck)) return;
    fprintf(out, _("\nPods not available:\n"));
    an_table *t = an_table_new(6);
    const char *head[6] = {_("POD"),    _("NODE"),    _("TEMPLATE"),
                           _("STATUS"), _("BLOCKER"), _("MESSAGE")};
    if (t) an_table_row(t, head);
    size_t i;
    const json_t *s;
    json_array_foreach(stuck, i, s)
    {
        const char *cells[6] = {kube_str(s, "pod"),
                                kube_str(s, "node"),
                                json_is_true(json_object_get(s, "updated")) ? _("new") : _("old"),
                                kube_str(s, "status"),
                                kube_str(s, "blocker"),
                                kube_str(s, "message")};
        if (t) an_table_row(t, cells);
    }
    print_table(t, out);
}

static void render_create_failure(const json_t *r, FILE *out)
{
    const json_t *f = json_object_get(r, "create_failure");
    if (!json_is_object(f)) return;
    fprintf(out, _("\nPods the controller cannot create (FailedCreate, %lld times): %s\n"),
            num(f, "count"), kube_str(f, "blocker"));
    fprintf(out, "  %s\n", kube_str(f, "message"));
}

static void render_text(const json_t *r, FILE *out)
{
    fprintf(out, "%s\n\n", kube_str(json_object_get(r, "verdict"), "text"));
    render_status(r, out);
    render_budget(r, out);
    render_create_failure(r, out);
    render_fit(r, out);
    render_stuck(r, out);
    an_render_tail(r, out);
}

char *an_rollout_render(const json_t *report, an_format fmt)
{
    return an_render(report, fmt, render_text, render_lab);
}

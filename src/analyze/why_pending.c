/* The why-pending analyzer (see why_pending.h): the cluster as a pod's
 * report reads it, and the report of one pod. */
#include "analyze/why_pending.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/placement.h"
#include "analyze/sched_message.h"
#include "analyze/why_pending_internal.h"
#include "kube/daemonset.h"
#include "kube/json.h"
#include "kube/pod.h"
#include "kube/pod_print.h"
#include "kube/quantity.h"
#include "util/buf.h"
#include "util/i18n.h"
#include "util/msg.h"

#define NO_RUNTIME    "no runtime for \""
#define GPU           "nvidia.com/gpu"
#define MIG_PREFIX    "nvidia.com/mig-"
#define TEXT_NODE_MAX 20 /* node rows the text table shows */
#define PLACEMENT_MAX 10 /* candidate nodes the placement section reads */

/* ---- the cluster ---- */

typedef struct node_rec {
    char ready[16];
    char ready_message[256]; /* the Ready condition's message */
    bool unschedulable;
    json_t *labels, *taints;        /* metadata.labels, spec.taints (copies) */
    json_t *capacity, *allocatable; /* status.capacity, status.allocatable (copies) */
    json_t *handlers;               /* status.runtimeHandlers names, NULL = field absent */
    long gpu_count;                 /* GFD's nvidia.com/gpu.count label, 0 when absent */
} node_rec;

static node_rec *rec_of(wp_cluster *c, an_node_entry *e)
{
    if (!e->user) e->user = calloc(1, sizeof(node_rec));
    if (!e->user) c->oom = true;
    return e->user;
}

static void node_rec_free(void *p)
{
    node_rec *r = p;
    json_decref(r->labels);
    json_decref(r->taints);
    json_decref(r->capacity);
    json_decref(r->allocatable);
    json_decref(r->handlers);
    free(r);
}

/* The cluster's index of `name`; a new one when `add` (or the cluster
 * adds names as it meets them), -1 when it is not tracked. */
static int name_slot(wp_cluster *c, const char *name, bool add)
{
    for (size_t i = 0; i < c->nres; i++)
        if (strcmp(c->names[i], name) == 0) return (int)i;
    if (!add && !c->dynamic) return -1;
    if (c->nres == WP_MAX_RES) {
        c->names_full = true;
        return -1;
    }
    if (!(c->names[c->nres] = strdup(name))) {
        c->oom = true;
        return -1;
    }
    return (int)c->nres++;
}

int wp_cluster_init(wp_cluster *c, bool dynamic)
{
    memset(c, 0, sizeof *c);
    c->dynamic = dynamic;
    c->nodes = an_node_table_new(WP_MAX_RES);
    c->runtimeclasses = json_object();
    c->warnings = json_array();
    if (!c->nodes || !c->runtimeclasses || !c->warnings) return -1;
    /* cpu and memory first: the scheduler names them most */
    name_slot(c, "cpu", true);
    name_slot(c, "memory", true);
    return c->oom ? -1 : 0;
}

void wp_cluster_free(wp_cluster *c)
{
    for (size_t i = 0; i < c->nplugins; i++) {
        wp_plugin_pod *p = &c->plugins[i];
        free(p->ref), free(p->ns), free(p->name), free(p->uid), free(p->node);
        free(p->runtime_class);
    }
    free(c->plugins);
    an_event_log_free(&c->events);
    for (size_t i = 0; i < c->nres; i++)
        free(c->names[i]);
    an_node_table_free(c->nodes, node_rec_free);
    json_decref(c->runtimeclasses);
    json_decref(c->warnings);
    json_decref(c->label_keys);
    memset(c, 0, sizeof *c);
}

static json_t *copy_or_null(const json_t *v)
{
    return v ? json_deep_copy(v) : NULL;
}

/* The labels a report reads: GFD's count, and those the target's node
 * selection names (all of them when the targets are not known yet). */
static json_t *node_labels(const wp_cluster *c, const json_t *labels)
{
    if (!labels || !c->label_keys) return copy_or_null(labels);
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)labels, key, v)
    {
        if (strcmp(key, "nvidia.com/gpu.count") == 0 || json_object_get(c->label_keys, key))
            json_object_set(out, key, v);
    }
    return out;
}

void wp_cluster_add_node(wp_cluster *c, const json_t *node)
{
    an_node_entry *e =
        an_node_table_get(c->nodes, kube_str(json_object_get(node, "metadata"), "name"));
    node_rec *r = e ? rec_of(c, e) : NULL;
    if (!r) {
        c->oom = true;
        return;
    }
    e->seen = true;
    snprintf(r->ready, sizeof r->ready, "%s", kube_str(kube_condition(node, "Ready"), "status"));
    snprintf(r->ready_message, sizeof r->ready_message, "%s",
             kube_str(kube_condition(node, "Ready"), "message"));
    r->unschedulable = kube_true(kube_obj(node, "spec"), "unschedulable");
    const json_t *status = kube_obj(node, "status");
    r->labels = node_labels(c, kube_obj(kube_obj(node, "metadata"), "labels"));
    r->taints = copy_or_null(kube_arr(kube_obj(node, "spec"), "taints"));
    r->capacity = copy_or_null(kube_obj(status, "capacity"));
    r->allocatable = copy_or_null(kube_obj(status, "allocatable"));
    r->gpu_count = strtol(kube_str(r->labels, "nvidia.com/gpu.count"), NULL, 10);
    const json_t *handlers = kube_get(status, "runtimeHandlers");
    if (!json_is_array(handlers)) return;
    r->handlers = json_array();
    size_t i;
    const json_t *h;
    json_array_foreach(handlers, i, h)
    {
        json_array_append_new(r->handlers, json_string(kube_str(h, "name")));
    }
}

static char *dup_str(const char *s)
{
    return strdup(s ? s : "");
}

static void add_plugin_pod(wp_cluster *c, const json_t *pod)
{
    if (c->nplugins == c->pcap) {
        size_t cap = c->pcap ? c->pcap * 2 : 8;
        wp_plugin_pod *v = realloc(c->plugins, cap * sizeof *v);
        if (!v) {
            c->oom = true;
            return;
        }
        c->plugins = v;
        c->pcap = cap;
    }
    wp_plugin_pod *p = &c->plugins[c->nplugins++];
    memset(p, 0, sizeof *p);
    const json_t *meta = kube_obj(pod, "metadata");
    char ref[600];
    p->ref = dup_str(an_obj_ref(pod, ref, sizeof ref));
    p->ns = dup_str(kube_str(meta, "namespace"));
    p->name = dup_str(kube_str(meta, "name"));
    p->uid = dup_str(kube_str(meta, "uid"));
    p->node = dup_str(kube_ds_target_node(pod));
    p->runtime_class = dup_str(kube_str(kube_obj(pod, "spec"), "runtimeClassName"));
    snprintf(p->phase, sizeof p->phase, "%s", kube_str(kube_obj(pod, "status"), "phase"));
    kube_pod_status_text(pod, p->status, sizeof p->status);
    p->ready = kube_pod_ready(pod);
    if (!p->ref || !p->ns || !p->name || !p->uid || !p->node || !p->runtime_class) c->oom = true;
}

void wp_cluster_add_pod(wp_cluster *c, const json_t *pod, const char *skip_ref)
{
    if (an_is_device_plugin_pod(pod)) add_plugin_pod(c, pod);
    char ref[600];
    if (skip_ref && strcmp(an_obj_ref(pod, ref, sizeof ref), skip_ref) == 0) return;
    const char *node = kube_str(kube_obj(pod, "spec"), "nodeName");
    if (!*node || kube_pod_terminal(pod)) return;
    /* Only the names this pod asks for: the others add nothing. */
    const char *names[WP_MAX_RES];
    size_t n = 0;
    an_spec_resource_names(kube_obj(pod, "spec"), names, &n, WP_MAX_RES);
    int slot[WP_MAX_RES];
    const char *tracked[WP_MAX_RES];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int s = name_slot(c, names[i], false);
        if (s < 0) continue;
        slot[m] = s;
        tracked[m++] = names[i];
    }
    if (!m) return;
    kube_quantity req[WP_MAX_RES];
    gp_error err = {0};
    if (an_pod_requests(pod, tracked, m, req, &err) < 0) {
        json_array_append_new(c->warnings, json_string(err.text));
        return;
    }
    an_node_entry *e = an_node_table_get(c->nodes, node);
    if (!e || !rec_of(c, e)) {
        c->oom = true;
        return;
    }
    for (size_t i = 0; i < m; i++)
        if (kube_quantity_add(&e->sums[slot[i]], &req[i], &e->sums[slot[i]], &err) < 0)
            json_array_append_new(c->warnings, json_string(err.text));
}

/* "ns/name@uid", or "ns/name" for an event that names no uid. */
static void event_key(char *buf, size_t size, const char *ns, const char *name, const char *uid)
{
    snprintf(buf, size, "%s/%s%s%s", ns, name, *uid ? "@" : "", uid);
}

/* Events on pods: the kubelet's and scheduler's words on a target or on a
 * device plugin pod. The latest per pod and reason is kept. */
void wp_cluster_add_event(wp_cluster *c, const json_t *event)
{
    an_event_view v;
    an_event_read(event, &v);
    if (!kube_str_is(v.object, "kind", "Pod")) return;
    if (strcmp(v.type, "Warning") != 0 && strcmp(v.reason, "FailedScheduling") != 0) return;
    char key[700];
    event_key(key, sizeof key, kube_str(v.object, "namespace"), kube_str(v.object, "name"),
              kube_str(v.object, "uid"));
    if (an_event_log_add(&c->events, key, &v) < 0) c->oom = true;
}

void wp_cluster_add_runtimeclass(wp_cluster *c, const json_t *rc)
{
    const char *name = kube_str(kube_obj(rc, "metadata"), "name");
    if (*name) json_object_set_new(c->runtimeclasses, name, json_string(kube_str(rc, "handler")));
}

json_t *wp_cluster_plugin_namespaces(const wp_cluster *c)
{
    json_t *out = json_array();
    for (size_t i = 0; i < c->nplugins; i++)
        if (!kube_has_string(out, c->plugins[i].ns))
            json_array_append_new(out, json_string(c->plugins[i].ns));
    return out;
}

static int by_plugin_ref(const void *x, const void *y)
{
    return strcmp(((const wp_plugin_pod *)x)->ref, ((const wp_plugin_pod *)y)->ref);
}

an_node_entry **wp_cluster_settle(wp_cluster *c, size_t *n)
{
    if (c->oom) return NULL;
    if (c->nplugins) qsort(c->plugins, c->nplugins, sizeof *c->plugins, by_plugin_ref);
    an_event_log_sort(&c->events);
    return an_node_table_sorted(c->nodes, n);
}

/* The latest message of `reason` on the pod: by its uid, else by name. */
static const char *pod_event(const wp_cluster *c, const char *ns, const char *name, const char *uid,
                             const char *reason)
{
    char key[700];
    const char *m = NULL;
    if (*uid) {
        event_key(key, sizeof key, ns, name, uid);
        m = an_event_log_message(&c->events, key, reason);
    }
    if (!m) {
        event_key(key, sizeof key, ns, name, "");
        m = an_event_log_message(&c->events, key, reason);
    }
    return m;
}

/* ---- a target ---- */

/* nvidia.com/gpu when requested, else the first extended resource. */
static void choose_resource(wp_target *t, const wp_cluster *c)
{
    for (size_t i = 0; i < t->nres; i++) {
        const char *name = c->names[t->slot[i]];
        if (kube_quantity_is_zero(&t->req[i]) || !strchr(name, '/')) continue;
        if (!t->resource || strcmp(name, GPU) == 0) {
            t->resource = name;
            t->res = i;
        }
    }
}

int wp_target_init(wp_target *t, wp_cluster *c, const json_t *pod, gp_error *err)
{
    memset(t, 0, sizeof *t);
    t->pod = json_deep_copy(pod);
    if (!t->pod) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    const json_t *meta = kube_obj(pod, "metadata");
    snprintf(t->name, sizeof t->name, "%s", kube_str(meta, "name"));
    snprintf(t->ns, sizeof t->ns, "%s", kube_str(meta, "namespace"));
    snprintf(t->uid, sizeof t->uid, "%s", kube_str(meta, "uid"));
    an_obj_ref(pod, t->ref, sizeof t->ref);
    const char *names[WP_MAX_RES] = {"cpu", "memory"};
    size_t n = 2;
    an_spec_resource_names(kube_obj(t->pod, "spec"), names, &n, WP_MAX_RES);
    const char *kept[WP_MAX_RES];
    for (size_t i = 0; i < n; i++) {
        int s = name_slot(c, names[i], true);
        if (s < 0) continue;
        t->slot[t->nres] = (size_t)s;
        kept[t->nres++] = c->names[s];
    }
    if (c->oom) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    if (an_pod_requests(t->pod, kept, t->nres, t->req, err) < 0) return -1;
    choose_resource(t, c);
    return 0;
}

void wp_target_free(wp_target *t)
{
    json_decref(t->pod);
    memset(t, 0, sizeof *t);
}

/* ---- the report ---- */

typedef struct ctx {
    const wp_cluster *c;
    const wp_target *t;
    json_t *report, *evidence, *steps;
    an_node_entry **nodes;
    size_t n;
} ctx;

static void evidence(ctx *x, const char *kind, const char *ref, const char *field,
                     const char *value)
{
    char line[2048];
    snprintf(line, sizeof line, "%s %s %s = %s", kind, ref, field, value ? value : "<absent>");
    json_array_append_new(x->evidence, json_string(line));
}

static const char *target_event(const ctx *x, const char *reason)
{
    return pod_event(x->c, x->t->ns, x->t->name, x->t->uid, reason);
}

static const char *plugin_event(const ctx *x, const wp_plugin_pod *p, const char *reason)
{
    return pod_event(x->c, p->ns, p->name, p->uid, reason);
}

static const json_t *spec_of(const ctx *x)
{
    return kube_obj(x->t->pod, "spec");
}

/* The formats of the next steps (their "args"): English for JSON,
 * translated for text. */
static const char *next_format(const char *code, bool translate)
{
    static const struct {
        const char *code, *format;
    } f[] = {
        {"scheduler", N_("kubectl describe node %s: taints, labels and allocated resources "
                         "against the pod's requests")},
        {"fix-spec", N_("change %s as the suggested fix below says")},
        {"kubelet-log",
         N_("on node %s: journalctl -u kubelet | grep -E 'Got registration request from device "
            "plugin|Bad registration request|Unable to connect to device plugin|ListAndWatch "
            "ended unexpectedly'")},
        {"plugin-log", N_("kubectl logs -n %s %s: look for 'Registered device plugin for', "
                          "'nvml init failed', 'Could not register device plugin: context "
                          "deadline exceeded'")},
        {"plugin-events", N_("kubectl describe pod -n %s %s: its events say why it does not "
                             "start")},
        {"socket-mount", N_("check that %s mounts hostPath /var/lib/kubelet/device-plugins at "
                            "the same path in the container")},
        {"containerd-check", N_("on node %s: gpuop containerd check %s (is the handler loaded, "
                                "not only written?); restart containerd once `gpuop containerd "
                                "merge` says its files load it")},
        {"admission", N_("on node %s: kubelet log lines 'Allocate failed', 'cannot allocate "
                         "unregistered device'")},
        {"none", N_("the pod is scheduled on %s: nothing blocks it at these layers")},
        {"gpus-lost", N_("node %s has GPUs by its nvidia.com/gpu.count label but %s reads 0: "
                         "its device plugin registered there and is gone; read its kubelet "
                         "log and its device plugin pod first")},
        {"runtime-down",
         N_("on node %s: the kubelet finds its container runtime down: crictl info (is CRI up?), "
            "journalctl -u containerd (why its CRI plugin failed), `gpuop containerd merge` (what "
            "a restart loads); a restart alone reloads the same files")},
        {"gpus-gone", N_("node %s registered %s and now reads 0: its device plugin is gone or "
                         "unhealthy there; read its device plugin pod and its kubelet log "
                         "first")},
        {"never-registered", N_("node %s has GPUs by its nvidia.com/gpu.count label, but %s "
                                "never registered there: no device plugin has advertised it; "
                                "its device plugin pod and its kubelet log say why")},
        {"resource-renamed", N_("node %s serves %s as %s (renameByDefault: true): ask for %s "
                                "instead, or set renameByDefault: false in the device plugin's "
                                "sharing config")},
        {"resource-mig", N_("node %s serves its GPUs as MIG devices (%s): ask for one of them, "
                            "or leave GPUs out of MIG for %s")},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (strcmp(f[i].code, code) == 0) return translate ? _(f[i].format) : f[i].format;
    return "%s";
}

/* A next step: its code, the node or pod it is about, its arguments (up to
 * four; NULL ends them). */
static void next(ctx *x, const char *code, const char *target, const char *a1, const char *a2,
                 const char *a3, const char *a4)
{
    json_t *args = json_array();
    const char *a[4] = {a1, a2, a3, a4};
    for (size_t i = 0; i < 4 && a[i]; i++)
        json_array_append_new(args, json_string(a[i]));
    char text[1024];
    an_format_args(text, sizeof text, next_format(code, false), args);
    json_array_append_new(x->steps, json_pack("{s:s, s:s, s:o, s:s}", "code", code, "target",
                                              target, "args", args, "text", text));
}

static json_t *scheduler_section(ctx *x)
{
    const wp_target *t = x->t;
    const json_t *cond = kube_condition(t->pod, "PodScheduled");
    const char *event = target_event(x, "FailedScheduling");
    const char *msg = cond && kube_str_is(cond, "status", "False") && *kube_str(cond, "message")
                          ? kube_str(cond, "message")
                          : event;
    evidence(x, "pod", t->ref, ".status.conditions[PodScheduled].status",
             cond ? kube_str(cond, "status") : NULL);
    if (cond && *kube_str(cond, "reason"))
        evidence(x, "pod", t->ref, ".status.conditions[PodScheduled].reason",
                 kube_str(cond, "reason"));
    if (cond && *kube_str(cond, "message"))
        evidence(x, "pod", t->ref, ".status.conditions[PodScheduled].message",
                 kube_str(cond, "message"));
    if (event) evidence(x, "event", t->ref, "FailedScheduling .message", event);
    json_t *parsed =
        msg && !*kube_str(spec_of(x), "nodeName") ? an_sched_message_parse(msg, NULL) : NULL;
    return json_pack("{s:o, s:s?, s:o, s:s}", "condition",
                     cond ? json_pack("{s:s, s:s, s:s}", "status", kube_str(cond, "status"),
                                      "reason", kube_str(cond, "reason"), "message",
                                      kube_str(cond, "message"))
                          : json_null(),
                     "event", event, "parsed", parsed ? parsed : json_null(), "blocker",
                     parsed ? an_sched_primary_blocker(parsed) : "none");
}

static const char *list_text(const json_t *list, const char *name)
{
    return json_string_value(json_object_get(list, name));
}

static kube_quantity quantity_of(const json_t *list, const char *name)
{
    kube_quantity q = {0};
    gp_error err;
    const char *s = list_text(list, name);
    if (s && kube_quantity_parse(s, &q, &err) < 0) q = (kube_quantity){0};
    return q;
}

static bool positive(const kube_quantity *q)
{
    return !kube_quantity_is_zero(q) && kube_quantity_cmp(q, &(kube_quantity){0}) > 0;
}

/* The other GPU resources a node advertises, "nvidia.com/gpu.shared=16". */
static json_t *other_resources(const node_rec *r, const char *resource)
{
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach(r->allocatable, key, v)
    {
        if (strncmp(key, "nvidia.com/", 11) != 0 || (resource && strcmp(key, resource) == 0))
            continue;
        if (json_is_string(v)) json_object_set(out, key, v);
    }
    return out;
}

static json_t *nodes_section(ctx *x, size_t *advertising)
{
    const wp_target *t = x->t;
    const char *res = t->resource;
    size_t slot = res ? t->slot[t->res] : 0;
    json_t *out = json_array();
    *advertising = 0;
    for (size_t i = 0; i < x->n; i++) {
        an_node_entry *e = x->nodes[i];
        node_rec *r = e->user;
        if (!e->seen || !r) continue;
        char req[KUBE_QUANTITY_FORMAT_MAX] = "0", fr[KUBE_QUANTITY_FORMAT_MAX] = "0";
        if (res) {
            kube_quantity alloc = quantity_of(r->allocatable, res), free_q = {0};
            gp_error err;
            if (positive(&alloc)) (*advertising)++;
            kube_quantity_sub(&alloc, &e->sums[slot], &free_q, &err);
            kube_quantity_format(&e->sums[slot], req);
            kube_quantity_format(&free_q, fr);
            char field[300];
            snprintf(field, sizeof field, ".status.allocatable.%s", res);
            evidence(x, "node", e->name, field, list_text(r->allocatable, res));
        }
        json_array_append_new(
            out,
            json_pack("{s:s, s:s, s:b, s:s?, s:s?, s:s, s:s, s:o, s:O?}", "name", e->name, "ready",
                      r->ready, "unschedulable", r->unschedulable, "capacity",
                      res ? list_text(r->capacity, res) : NULL, "allocatable",
                      res ? list_text(r->allocatable, res) : NULL, "requested", req, "free", fr,
                      "other_resources", other_resources(r, res), "runtime_handlers", r->handlers));
    }
    return out;
}

static const char *sandbox_failure(const ctx *x, const wp_plugin_pod *p)
{
    const char *m = p ? plugin_event(x, p, "FailedCreatePodSandBox")
                      : target_event(x, "FailedCreatePodSandBox");
    return m && strstr(m, NO_RUNTIME) ? m : NULL;
}

static json_t *plugins_section(ctx *x)
{
    json_t *out = json_array();
    for (size_t i = 0; i < x->c->nplugins; i++) {
        const wp_plugin_pod *p = &x->c->plugins[i];
        const char *sandbox = plugin_event(x, p, "FailedCreatePodSandBox");
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:b, s:s?}", "pod", p->ref,
                                             "node", p->node, "phase", p->phase, "status",
                                             p->status, "ready", p->ready, "event", sandbox));
        evidence(x, "pod", p->ref, "STATUS", p->status);
        if (sandbox) evidence(x, "event", p->ref, "FailedCreatePodSandBox .message", sandbox);
    }
    return out;
}

static const char *handler_of(const ctx *x, const char *runtime_class)
{
    return json_string_value(json_object_get(x->c->runtimeclasses, runtime_class));
}

static json_t *runtime_section(ctx *x)
{
    const char *name = kube_str(spec_of(x), "runtimeClassName");
    if (!*name) return json_null();
    const char *handler = handler_of(x, name);
    evidence(x, "pod", x->t->ref, ".spec.runtimeClassName", name);
    evidence(x, "runtimeclass", name, ".handler", handler);
    json_t *with = json_array(), *without = json_array(), *unknown = json_array();
    const char *bound = kube_str(spec_of(x), "nodeName");
    for (size_t i = 0; handler && i < x->n; i++) {
        node_rec *r = x->nodes[i]->user;
        if (!x->nodes[i]->seen || !r) continue;
        if (*bound && strcmp(bound, x->nodes[i]->name) != 0) continue;
        json_t *list = !r->handlers                            ? unknown
                       : kube_has_string(r->handlers, handler) ? with
                                                               : without;
        json_array_append_new(list, json_string(x->nodes[i]->name));
        char *h = r->handlers ? json_dumps(r->handlers, JSON_COMPACT) : NULL;
        evidence(x, "node", x->nodes[i]->name, ".status.runtimeHandlers[*].name", h);
        free(h);
    }
    return json_pack("{s:s, s:s?, s:o, s:o, s:o}", "name", name, "handler", handler, "nodes_with",
                     with, "nodes_without", without, "nodes_unknown", unknown);
}

static json_t *kubelet_events(ctx *x)
{
    static const char *const skip[] = {"FailedScheduling", "Scheduled"};
    json_t *out = json_array();
    char key[700], bare[700];
    event_key(key, sizeof key, x->t->ns, x->t->name, x->t->uid);
    event_key(bare, sizeof bare, x->t->ns, x->t->name, "");
    for (size_t i = 0; i < x->c->events.n; i++) {
        const an_kept_event *k = &x->c->events.v[i];
        if (strcmp(k->object, key) != 0 && strcmp(k->object, bare) != 0) continue;
        bool skipped = false;
        for (size_t s = 0; s < 2; s++)
            skipped = skipped || strcmp(k->reason, skip[s]) == 0;
        if (skipped) continue;
        json_array_append_new(out,
                              json_pack("{s:s, s:s}", "reason", k->reason, "message", k->message));
        char field[300];
        snprintf(field, sizeof field, "%s .message", k->reason);
        evidence(x, "event", x->t->ref, field, k->message);
    }
    return out;
}

/* The handler a sandbox failure names (`no runtime for "X" is
 * configured`), else the RuntimeClass's handler, else its name. */
static void missing_handler(const ctx *x, const char *sandbox, const char *runtime_class, char *buf,
                            size_t size)
{
    const char *at = sandbox ? strstr(sandbox, NO_RUNTIME) : NULL;
    if (at) {
        at += strlen(NO_RUNTIME);
        const char *end = strchr(at, '"');
        if (end) {
            snprintf(buf, size, "%.*s", (int)(end - at), at);
            return;
        }
    }
    const char *h = *runtime_class ? handler_of(x, runtime_class) : NULL;
    snprintf(buf, size, "%s", h && *h ? h : *runtime_class ? runtime_class : "nvidia");
}

/* The first device plugin pod that does not run (on node `on`, or any
 * node when NULL); *runtime when its sandbox was refused. A ready pod's
 * old sandbox failure is history, not the cause. */
static const wp_plugin_pod *broken_plugin_on(const ctx *x, const char *on, bool *runtime)
{
    *runtime = false;
    for (size_t i = 0; i < x->c->nplugins; i++) {
        const wp_plugin_pod *p = &x->c->plugins[i];
        if (on && strcmp(p->node, on) != 0) continue;
        if (!p->ready && sandbox_failure(x, p)) {
            *runtime = true;
            return p;
        }
    }
    for (size_t i = 0; i < x->c->nplugins; i++) {
        const wp_plugin_pod *p = &x->c->plugins[i];
        if (on && strcmp(p->node, on) != 0) continue;
        if (!p->ready) return p;
    }
    return NULL;
}

static const wp_plugin_pod *broken_plugin(const ctx *x, bool *runtime)
{
    return broken_plugin_on(x, NULL, runtime);
}

/* A node named by the bound pod reports handlers without the one wanted. */
static bool handler_missing_on(const ctx *x, const char *node)
{
    an_node_entry *e = an_node_table_find(x->c->nodes, node);
    node_rec *r = e ? e->user : NULL;
    const char *handler = handler_of(x, kube_str(spec_of(x), "runtimeClassName"));
    return handler && r && r->handlers && !kube_has_string(r->handlers, handler);
}

static const char *decide_scheduled(ctx *x, const char *node, char *why, size_t size)
{
    const wp_target *t = x->t;
    const char *adm = target_event(x, "UnexpectedAdmissionError");
    const json_t *status = kube_obj(t->pod, "status");
    if (adm || kube_str_is(status, "reason", "UnexpectedAdmissionError")) {
        snprintf(why, size, "%s", adm ? adm : kube_str(status, "message"));
        next(x, "admission", node, node, NULL, NULL, NULL);
        return "kubelet-admission";
    }
    /* A pod past Pending has its sandbox: a handler lost later (a containerd
     * restart) does not stop it. */
    const char *sandbox = sandbox_failure(x, NULL);
    if (kube_str_is(status, "phase", "Pending") && (sandbox || handler_missing_on(x, node))) {
        char handler[256];
        missing_handler(x, sandbox, kube_str(spec_of(x), "runtimeClassName"), handler,
                        sizeof handler);
        snprintf(why, size, "%s", sandbox ? sandbox : "node does not report the handler");
        next(x, "containerd-check", node, node, handler, NULL, NULL);
        return "runtime-handler";
    }
    next(x, "none", node, node, NULL, NULL, NULL);
    snprintf(why, size, "scheduled on %s", node);
    return "none";
}

/* The resource the target asks for, served under another name on `r`:
 * <resource>.shared (renameByDefault) or, for nvidia.com/gpu, MIG devices
 * ("nvidia.com/mig-1g.5gb=16, ..."). Returns 1 for renamed, 2 for MIG, 0. */
static int served_otherwise(const char *resource, const node_rec *r, char *buf, size_t size)
{
    char shared[300];
    snprintf(shared, sizeof shared, "%s.shared", resource);
    kube_quantity q = quantity_of(r->allocatable, shared);
    if (positive(&q)) {
        snprintf(buf, size, "%s", shared);
        return 1;
    }
    if (strcmp(resource, GPU) != 0) return 0;
    buf[0] = '\0';
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach(r->allocatable, key, v)
    {
        kube_quantity m = quantity_of(r->allocatable, key);
        if (strncmp(key, MIG_PREFIX, strlen(MIG_PREFIX)) != 0 || !positive(&m)) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s=%s", n++ ? ", " : "", key, json_string_value(v));
    }
    return n ? 2 : 0;
}

/* Nodes whose GPU Feature Discovery labels count GPUs that the node does not
 * advertise: 0 (registered, then gone) or absent (never registered)
 * (gpu-node-facts.md 5); a node that serves them renamed or as MIG devices
 * has not lost them. The first place to look whatever the scheduler said.
 * Returns the first such node, or NULL. */
static const char *lost_gpus(ctx *x)
{
    const char *first = NULL, *res = x->t->resource;
    if (!res || strcmp(res, GPU) != 0) return NULL;
    for (size_t i = 0; i < x->n; i++) {
        const node_rec *r = x->nodes[i]->user;
        char other[512];
        if (!x->nodes[i]->seen || !r) continue;
        const char *alloc = list_text(r->allocatable, res);
        const char *cap = list_text(r->capacity, res);
        /* without GFD's count, a capacity entry says a plugin registered here */
        bool labelled = r->gpu_count > 0;
        if (!labelled && !cap) continue;
        if (served_otherwise(res, r, other, sizeof other)) continue;
        kube_quantity q = quantity_of(r->allocatable, res);
        if (positive(&q)) continue;
        const char *code = !labelled      ? "gpus-gone"
                           : alloc || cap ? "gpus-lost"
                                          : "never-registered";
        next(x, code, x->nodes[i]->name, x->nodes[i]->name, res, NULL, NULL);
        if (!first) first = x->nodes[i]->name;
    }
    return first;
}

/* No node advertises the resource, but some serve it renamed or as MIG
 * devices: the pod asks for a name the nodes no longer serve. */
static const char *resource_name(ctx *x, char *why, size_t size)
{
    const char *res = x->t->resource;
    for (size_t i = 0; res && i < x->n; i++) {
        const node_rec *r = x->nodes[i]->user;
        char other[512];
        int how = x->nodes[i]->seen && r ? served_otherwise(res, r, other, sizeof other) : 0;
        if (!how) continue;
        const char *node = x->nodes[i]->name;
        if (how == 1) {
            snprintf(why, size, "the pod asks for %s, which node %s serves as %s", res, node,
                     other);
            next(x, "resource-renamed", node, node, res, other, other);
        } else {
            snprintf(why, size, "the pod asks for %s, and node %s serves MIG devices (%s)", res,
                     node, other);
            next(x, "resource-mig", node, node, other, res, NULL);
        }
        return "resource-name";
    }
    return NULL;
}

static bool placement_blocker(const json_t *parsed)
{
    size_t i;
    const json_t *it;
    json_array_foreach(json_object_get(parsed, "reasons"), i, it)
    {
        const char *b = kube_str(it, "blocker");
        if (strcmp(b, "untolerated-taint") == 0 || strcmp(b, "node-affinity") == 0) return true;
    }
    return false;
}

/* The pod's selection against the nodes that advertise what it asks for
 * (all seen nodes when it asks for no extended resource). */
static json_t *placement_section(ctx *x)
{
    an_placement_node cand[PLACEMENT_MAX];
    size_t n = 0;
    const char *res = x->t->resource;
    for (size_t i = 0; i < x->n && n < PLACEMENT_MAX; i++) {
        const node_rec *r = x->nodes[i]->user;
        if (!x->nodes[i]->seen || !r) continue;
        kube_quantity q = res ? quantity_of(r->allocatable, res) : (kube_quantity){0};
        if (res && !positive(&q)) continue;
        cand[n++] = (an_placement_node){x->nodes[i]->name, r->labels, r->taints, r->unschedulable};
    }
    return n ? an_placement(x->t->pod, cand, n) : NULL;
}

/* Some nodes advertise, the scheduler finds too few, and a node that had
 * GPUs reads 0 with its device plugin not running: that node's plugin is
 * where the capacity went, not the scheduler (it counts right). */
static const char *shortfall(ctx *x, const char *lost, const char *blocker, char *why, size_t size)
{
    char insufficient[160];
    snprintf(insufficient, sizeof insufficient, "insufficient-%s", x->t->resource);
    if (!lost || strcmp(blocker, insufficient) != 0) return NULL;
    bool runtime;
    const wp_plugin_pod *p = broken_plugin_on(x, lost, &runtime);
    if (!p) return NULL;
    if (runtime) {
        const char *sandbox = sandbox_failure(x, p);
        char handler[256];
        missing_handler(x, sandbox, p->runtime_class, handler, sizeof handler);
        snprintf(why, size, "too few %s: %s on %s: %s", x->t->resource, p->ref, p->node, sandbox);
        next(x, "containerd-check", p->node, p->node, handler, NULL, NULL);
        next(x, "plugin-events", p->ref, p->ns, p->name, NULL, NULL);
        return "runtime-handler";
    }
    snprintf(why, size, "too few %s: %s lost them, its device plugin %s is %s", x->t->resource,
             lost, p->ref, p->status);
    bool started = strcmp(p->phase, "Running") == 0 || strcmp(p->phase, "Failed") == 0;
    next(x, started ? "plugin-log" : "plugin-events", p->ref, p->ns, p->name, NULL, NULL);
    return "device-plugin";
}

/* Nodes NotReady because the kubelet finds the container runtime down
 * (pkg/kubelet/runtime.go runtimeErrors: "container runtime is down",
 * "container runtime not ready: ...", "container runtime status check may
 * not have completed yet"): below every GPU layer, so it comes first. */
static const char *runtime_down(ctx *x, char *why, size_t size)
{
    size_t down = 0;
    const char *first = NULL;
    for (size_t i = 0; i < x->n; i++) {
        const node_rec *r = x->nodes[i]->user;
        if (!x->nodes[i]->seen || !r || strcmp(r->ready, "True") == 0) continue;
        if (strncmp(r->ready_message, "container runtime", 17) != 0) continue;
        if (!first) first = r->ready_message;
        if (down++ < 3)
            next(x, "runtime-down", x->nodes[i]->name, x->nodes[i]->name, NULL, NULL, NULL);
    }
    if (!down) return NULL;
    snprintf(why, size, "%zu node(s) NotReady: %s", down, first);
    return "container-runtime";
}

static const char *decide_unscheduled(ctx *x, size_t advertising, char *why, size_t size)
{
    const char *down = runtime_down(x, why, size);
    if (down) return down;
    const char *lost = lost_gpus(x);
    const json_t *sched = json_object_get(x->report, "scheduler");
    const char *blocker = kube_str(sched, "blocker");
    const char *short_layer =
        x->t->resource && advertising > 0 ? shortfall(x, lost, blocker, why, size) : NULL;
    if (short_layer) return short_layer;
    if (!x->t->resource || advertising > 0) {
        snprintf(why, size, "%s", blocker);
        json_t *placement =
            placement_blocker(json_object_get(sched, "parsed")) ? placement_section(x) : NULL;
        if (placement) json_object_set_new(x->report, "placement", placement);
        const json_t *fix = json_object_get(placement, "fix");
        if (json_is_object(fix))
            next(x, "fix-spec", x->t->ref, kube_str(fix, "where"), NULL, NULL, NULL);
        for (size_t i = 0; i < x->n && i < 3; i++)
            if (x->nodes[i]->seen)
                next(x, "scheduler", x->nodes[i]->name, x->nodes[i]->name, NULL, NULL, NULL);
        return "scheduler";
    }
    const char *layer = resource_name(x, why, size);
    if (layer) return layer;
    bool runtime;
    const wp_plugin_pod *p = broken_plugin(x, &runtime);
    if (p && runtime) {
        const char *sandbox = sandbox_failure(x, p);
        char handler[256];
        missing_handler(x, sandbox, p->runtime_class, handler, sizeof handler);
        snprintf(why, size, "%s on %s: %s", p->ref, p->node, sandbox);
        next(x, "containerd-check", p->node, p->node, handler, NULL, NULL);
        next(x, "plugin-events", p->ref, p->ns, p->name, NULL, NULL);
        return "runtime-handler";
    }
    if (p) {
        snprintf(why, size, "%s on %s is %s", p->ref, p->node, p->status);
        /* A pod that never started has no log: its events say why. */
        bool started = strcmp(p->phase, "Running") == 0 || strcmp(p->phase, "Failed") == 0;
        if (started)
            next(x, "plugin-log", p->ref, p->ns, p->name, NULL, NULL);
        else
            next(x, "plugin-events", p->ref, p->ns, p->name, NULL, NULL);
        next(x, "socket-mount", p->ref, p->ref, NULL, NULL, NULL);
        return "device-plugin";
    }
    snprintf(why, size,
             x->c->nplugins ? "device plugin pods run, but no node advertises %s"
                            : "no node advertises %s and no device plugin pod was found",
             x->t->resource);
    const char *node = lost ? lost : x->n ? x->nodes[0]->name : "<node>";
    next(x, "kubelet-log", node, node, NULL, NULL, NULL);
    if (x->c->nplugins) {
        const wp_plugin_pod *first = &x->c->plugins[0];
        next(x, "plugin-log", first->ref, first->ns, first->name, NULL, NULL);
        next(x, "socket-mount", first->ref, first->ref, NULL, NULL, NULL);
    }
    return "node-advertisement";
}

static void verdict(ctx *x, const char *layer, const char *why)
{
    char text[2048];
    snprintf(text, sizeof text, _("%s: the chain breaks at %s: %s"), x->t->ref, layer, why);
    if (strcmp(layer, "none") == 0)
        gp_msg_snprintf(text, sizeof text, _("%s is scheduled: %s"), x->t->ref, why);
    json_object_set_new(x->report, "verdict", json_string(text));
}

static json_t *requests_json(const ctx *x)
{
    json_t *out = json_object();
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    for (size_t i = 0; i < x->t->nres; i++) {
        if (kube_quantity_is_zero(&x->t->req[i])) continue;
        kube_quantity_format(&x->t->req[i], buf);
        json_object_set_new(out, x->c->names[x->t->slot[i]], json_string(buf));
    }
    return out;
}

json_t *wp_report(const wp_cluster *c, const wp_target *t, an_node_entry **nodes, size_t n)
{
    ctx x = {
        .c = c, .t = t, .evidence = json_array(), .steps = json_array(), .nodes = nodes, .n = n};
    const char *bound = kube_str(spec_of(&x), "nodeName");
    x.report = json_pack("{s:s, s:s, s:s?, s:o, s:s?}", "schema", AN_SCHEMA_WHY_PENDING, "pod",
                         t->ref, "resource", t->resource, "requests", requests_json(&x), "node",
                         *bound ? bound : NULL);
    if (!x.report || !x.evidence || !x.steps) {
        json_decref(x.report), json_decref(x.evidence), json_decref(x.steps);
        return NULL;
    }
    evidence(&x, "pod", t->ref, ".spec.nodeName", *bound ? bound : NULL);
    json_object_set_new(x.report, "scheduler", scheduler_section(&x));
    size_t advertising;
    json_object_set_new(x.report, "nodes", nodes_section(&x, &advertising));
    json_object_set_new(x.report, "advertising", json_integer((json_int_t)advertising));
    json_object_set_new(x.report, "device_plugin_pods", plugins_section(&x));
    json_object_set_new(x.report, "runtime_class", runtime_section(&x));
    json_object_set_new(x.report, "kubelet_events", kubelet_events(&x));
    char why[1024];
    const char *layer = *bound ? decide_scheduled(&x, bound, why, sizeof why)
                               : decide_unscheduled(&x, advertising, why, sizeof why);
    json_object_set_new(x.report, "layer", json_string(layer));
    json_object_set_new(x.report, "next", x.steps);
    verdict(&x, layer, why);
    json_object_set_new(x.report, "evidence", x.evidence);
    json_object_set(x.report, "warnings", c->warnings);
    return x.report;
}

/* ---- one pod ---- */

struct an_why_pending {
    wp_cluster c;
    wp_target t;
};

an_why_pending *an_why_pending_new(const json_t *pod, gp_error *err)
{
    if (!json_is_object(pod) || !kube_str_is(pod, "kind", "Pod")) {
        gp_error_set(err, NULL, 0, 0, "not a Pod object");
        return NULL;
    }
    an_why_pending *b = calloc(1, sizeof *b);
    if (!b || wp_cluster_init(&b->c, false) < 0) {
        if (b) wp_cluster_free(&b->c);
        free(b);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    if (wp_target_init(&b->t, &b->c, pod, err) < 0) {
        an_why_pending_free(b);
        return NULL;
    }
    if ((b->c.label_keys = json_object()))
        an_placement_label_keys(kube_obj(b->t.pod, "spec"), b->c.label_keys);
    return b;
}

void an_why_pending_add_node(an_why_pending *b, const json_t *node)
{
    wp_cluster_add_node(&b->c, node);
}

void an_why_pending_add_pod(an_why_pending *b, const json_t *pod)
{
    /* the pod itself does not compete with itself */
    wp_cluster_add_pod(&b->c, pod, b->t.ref);
}

void an_why_pending_add_event(an_why_pending *b, const json_t *event)
{
    wp_cluster_add_event(&b->c, event);
}

void an_why_pending_add_runtimeclass(an_why_pending *b, const json_t *runtimeclass)
{
    wp_cluster_add_runtimeclass(&b->c, runtimeclass);
}

json_t *an_why_pending_plugin_namespaces(const an_why_pending *b)
{
    return wp_cluster_plugin_namespaces(&b->c);
}

json_t *an_why_pending_finish(an_why_pending *b, gp_error *err)
{
    size_t n = 0;
    an_node_entry **nodes = wp_cluster_settle(&b->c, &n);
    json_t *report = nodes ? wp_report(&b->c, &b->t, nodes, n) : NULL;
    free(nodes);
    if (!report) gp_error_set(err, NULL, 0, 0, "out of memory");
    return report;
}

void an_why_pending_free(an_why_pending *b)
{
    if (!b) return;
    wp_target_free(&b->t);
    wp_cluster_free(&b->c);
    free(b);
}

/* ---- rendering ---- */

static const char *or_none(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s ? s : "<none>";
}

static void print_table(an_table *t, FILE *out)
{
    if (t) an_table_print(t, out, 0, "  ");
    an_table_free(t);
}

static void render_scheduler(const json_t *r, FILE *out)
{
    const json_t *s = json_object_get(r, "scheduler");
    const json_t *cond = json_object_get(s, "condition");
    fprintf(out, "\n%s\n", _("Scheduler:"));
    const char *reason = kube_str(cond, "reason");
    fprintf(out, "  PodScheduled=%s%s%s\n", or_none(json_object_get(cond, "status")),
            *reason ? " " : "", reason);
    const char *msg = *kube_str(cond, "message") ? kube_str(cond, "message") : kube_str(s, "event");
    if (*msg) fprintf(out, "  %s\n", msg);
    const json_t *reasons = json_object_get(json_object_get(s, "parsed"), "reasons");
    if (!json_array_size(reasons)) return;
    an_table *t = an_table_new(3);
    const char *head[3] = {_("NODES"), _("REASON"), _("BLOCKER")};
    if (t) an_table_row(t, head);
    size_t i;
    const json_t *it;
    json_array_foreach(reasons, i, it)
    {
        char count[32];
        snprintf(count, sizeof count, "%lld",
                 (long long)json_integer_value(json_object_get(it, "count")));
        const char *row[3] = {count, kube_str(it, "reason"), kube_str(it, "blocker")};
        if (t) an_table_row(t, row);
    }
    print_table(t, out);
}

/* ["runc","nvidia"] as "runc,nvidia" (kubectl's way of printing a list in
 * a column); NULL when the node does not report the field. */
static char *handler_list(const json_t *handlers)
{
    if (!json_is_array(handlers)) return NULL;
    gp_buf out = {0};
    size_t i;
    const json_t *h;
    json_array_foreach(handlers, i, h)
    {
        if (i) gp_buf_addc(&out, ',');
        gp_buf_add(&out, json_string_value(h) ? json_string_value(h) : "");
    }
    return gp_buf_take(&out);
}

/* "gpu.shared=16,mig-1g.5gb=8", or "<none>". */
static void others_text(const json_t *others, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)others, key, v)
    {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s=%s", n++ ? "," : "", key + 11, json_string_value(v));
    }
    if (!n) snprintf(buf, size, "<none>");
}

static void render_nodes(const json_t *r, FILE *out)
{
    const char *res = json_string_value(json_object_get(r, "resource"));
    fprintf(out, "\n%s\n", _("Nodes:"));
    an_table *t = an_table_new(7);
    const char *head[7] = {_("NAME"),
                           _("READY"),
                           _("ALLOCATABLE"),
                           _("REQUESTED"),
                           _("FREE"),
                           _("OTHER GPU RESOURCES"),
                           _("RUNTIME HANDLERS")};
    if (t) an_table_row(t, head);
    size_t i;
    const json_t *n;
    const json_t *nodes = json_object_get(r, "nodes");
    json_array_foreach(nodes, i, n)
    {
        if (i >= TEXT_NODE_MAX) break;
        char *h = handler_list(json_object_get(n, "runtime_handlers"));
        char others[512], ready[64];
        others_text(json_object_get(n, "other_resources"), others, sizeof others);
        snprintf(ready, sizeof ready, "%s%s", or_none(json_object_get(n, "ready")),
                 json_is_true(json_object_get(n, "unschedulable")) ? ",SchedulingDisabled" : "");
        const char *row[7] = {kube_str(n, "name"),
                              ready,
                              res ? or_none(json_object_get(n, "allocatable")) : "-",
                              res ? kube_str(n, "requested") : "-",
                              res ? kube_str(n, "free") : "-",
                              others,
                              h ? h : _("(not reported)")};
        if (t) an_table_row(t, row);
        free(h);
    }
    print_table(t, out);
    if (json_array_size(nodes) > TEXT_NODE_MAX)
        fprintf(out, _("  ... and %zu more nodes\n"), json_array_size(nodes) - TEXT_NODE_MAX);
}

static void render_plugins(const json_t *r, FILE *out)
{
    const json_t *pods = json_object_get(r, "device_plugin_pods");
    fprintf(out, "\n%s\n", _("Device plugin pods:"));
    if (!json_array_size(pods)) {
        fprintf(out, "  %s\n", _("none found"));
        return;
    }
    an_table *t = an_table_new(4);
    const char *head[4] = {_("POD"), _("NODE"), _("STATUS"), _("EVENT")};
    if (t) an_table_row(t, head);
    size_t i;
    const json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *row[4] = {kube_str(p, "pod"), kube_str(p, "node"), kube_str(p, "status"),
                              kube_str(p, "event")};
        if (t) an_table_row(t, row);
    }
    print_table(t, out);
}

static void render_runtime(const json_t *r, FILE *out)
{
    const json_t *rc = json_object_get(r, "runtime_class");
    if (!json_is_object(rc)) return;
    fprintf(out, "\n%s\n", _("RuntimeClass:"));
    const char *handler = json_string_value(json_object_get(rc, "handler"));
    if (!handler) {
        fprintf(out, _("  %s: not found\n"), kube_str(rc, "name"));
        return;
    }
    fprintf(out, _("  %s, handler %s\n"), kube_str(rc, "name"), handler);
    static const char *const keys[3] = {"nodes_with", "nodes_without", "nodes_unknown"};
    const char *labels[3] = {_("reported by"), _("not loaded on"), _("cannot tell on")};
    for (size_t k = 0; k < 3; k++) {
        const json_t *list = json_object_get(rc, keys[k]);
        if (!json_array_size(list)) continue;
        fprintf(out, "  %s:", labels[k]);
        size_t i;
        const json_t *n;
        json_array_foreach(list, i, n)
        {
            fprintf(out, " %s", json_string_value(n));
        }
        fputc('\n', out);
    }
}

void wp_render_next(const json_t *r, FILE *out, const char *indent)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(r, "next"), i, x)
    {
        char text[1024];
        an_format_args(text, sizeof text, next_format(kube_str(x, "code"), true),
                       json_object_get(x, "args"));
        fprintf(out, "%s%s\n", indent, text);
    }
}

void wp_render_report(const json_t *r, FILE *out)
{
    fprintf(out, "%s\n", kube_str(r, "verdict"));
    render_scheduler(r, out);
    render_nodes(r, out);
    render_plugins(r, out);
    render_runtime(r, out);
    size_t i;
    const json_t *x;
    if (json_array_size(json_object_get(r, "kubelet_events"))) {
        fprintf(out, "\n%s\n", _("Kubelet events:"));
        json_array_foreach(json_object_get(r, "kubelet_events"), i, x)
        {
            fprintf(out, "  %s: %s\n", kube_str(x, "reason"), kube_str(x, "message"));
        }
    }
    if (json_is_object(json_object_get(r, "placement")))
        an_placement_render(json_object_get(r, "placement"), out);
    fprintf(out, "\n%s %s\n%s\n", _("Layer:"), kube_str(r, "layer"), _("Next:"));
    wp_render_next(r, out, "  ");
    an_render_tail(r, out);
}

static void render_lab(const json_t *report, FILE *out)
{
    fprintf(out, "LAYER=%s\nBLOCKER=%s\n", kube_str(report, "layer"),
            kube_str(json_object_get(report, "scheduler"), "blocker"));
}

char *an_why_pending_render(const json_t *report, an_format fmt)
{
    return an_render(report, fmt, wp_render_report, render_lab);
}

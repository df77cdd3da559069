/* The why-pending analyzer (see why_pending.h). */
#include "analyze/why_pending.h"

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
#include "util/buf.h"
#include "util/i18n.h"

#define MAX_RES       32
#define PLUGIN_MARK   "nvidia-device-plugin"
#define NO_RUNTIME    "no runtime for"
#define TEXT_NODE_MAX 20 /* node rows the text table shows */

typedef struct node_rec {
    char ready[16];
    char *capacity, *allocatable; /* of the main resource, as written; NULL = absent */
    json_t *handlers;             /* status.runtimeHandlers names, NULL = field absent */
    long gpu_count;               /* GFD's nvidia.com/gpu.count label, 0 when absent */
} node_rec;

typedef struct plugin_pod {
    char *ref, *name, *node, *runtime_class;
    char phase[32], status[64];
    bool ready;
} plugin_pod;

struct an_why_pending {
    json_t *pod;
    char ref[600], name[256], ns[256], uid[128];
    const char *names[MAX_RES];
    size_t nres;
    const char *resource; /* the extended resource that matters, or NULL */
    size_t res_index;
    kube_quantity req[MAX_RES];
    an_node_table *nodes;
    plugin_pod *plugins;
    size_t nplugins, pcap;
    an_event_log events; /* by object "ns/name" */
    char *rc_handler;    /* the pod's RuntimeClass handler, once seen */
    json_t *warnings;
    bool oom;
};

/* ---- setup ---- */

/* nvidia.com/gpu when requested, else the first extended resource. */
static void choose_resource(an_why_pending *b)
{
    for (size_t i = 0; i < b->nres; i++) {
        if (kube_quantity_is_zero(&b->req[i]) || !strchr(b->names[i], '/')) continue;
        if (!b->resource || strcmp(b->names[i], "nvidia.com/gpu") == 0) {
            b->resource = b->names[i];
            b->res_index = i;
        }
    }
}

an_why_pending *an_why_pending_new(const json_t *pod, gp_error *err)
{
    if (!json_is_object(pod) || strcmp(kube_str(pod, "kind"), "Pod") != 0) {
        gp_error_set(err, NULL, 0, 0, "not a Pod object");
        return NULL;
    }
    an_why_pending *b = calloc(1, sizeof *b);
    if (!b) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    b->pod = json_deep_copy(pod);
    b->warnings = json_array();
    b->nodes = an_node_table_new(MAX_RES);
    const json_t *meta = json_object_get(pod, "metadata");
    snprintf(b->name, sizeof b->name, "%s", kube_str(meta, "name"));
    snprintf(b->ns, sizeof b->ns, "%s", kube_str(meta, "namespace"));
    snprintf(b->uid, sizeof b->uid, "%s", kube_str(meta, "uid"));
    an_obj_ref(pod, b->ref, sizeof b->ref);
    if (!b->pod || !b->warnings || !b->nodes) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        an_why_pending_free(b);
        return NULL;
    }
    const json_t *spec = json_object_get(b->pod, "spec");
    b->names[b->nres++] = "cpu";
    b->names[b->nres++] = "memory";
    an_spec_resource_names(spec, b->names, &b->nres, MAX_RES);
    if (an_pod_requests(b->pod, b->names, b->nres, b->req, err) < 0) {
        an_why_pending_free(b);
        return NULL;
    }
    choose_resource(b);
    return b;
}

/* ---- adding ---- */

static node_rec *rec_of(an_why_pending *b, an_node_entry *e)
{
    if (!e->user) e->user = calloc(1, sizeof(node_rec));
    if (!e->user) b->oom = true;
    return e->user;
}

static void node_rec_free(void *p)
{
    node_rec *r = p;
    free(r->capacity);
    free(r->allocatable);
    json_decref(r->handlers);
    free(r);
}

static char *list_text(const json_t *list, const char *name)
{
    const json_t *v = json_object_get(list, name);
    if (!v) return NULL;
    if (json_is_string(v)) return strdup(json_string_value(v));
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

void an_why_pending_add_node(an_why_pending *b, const json_t *node)
{
    an_node_entry *e =
        an_node_table_get(b->nodes, kube_str(json_object_get(node, "metadata"), "name"));
    node_rec *r = e ? rec_of(b, e) : NULL;
    if (!r) return;
    e->seen = true;
    snprintf(r->ready, sizeof r->ready, "%s", kube_str(kube_condition(node, "Ready"), "status"));
    const json_t *status = json_object_get(node, "status");
    const json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
    r->gpu_count = strtol(kube_str(labels, "nvidia.com/gpu.count"), NULL, 10);
    if (b->resource) {
        r->capacity = list_text(json_object_get(status, "capacity"), b->resource);
        r->allocatable = list_text(json_object_get(status, "allocatable"), b->resource);
    }
    const json_t *handlers = json_object_get(status, "runtimeHandlers");
    if (!json_is_array(handlers)) return;
    r->handlers = json_array();
    size_t i;
    const json_t *h;
    json_array_foreach(handlers, i, h)
    {
        json_array_append_new(r->handlers, json_string(kube_str(h, "name")));
    }
}

static bool is_plugin_pod(const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    if (strstr(kube_str(meta, "name"), PLUGIN_MARK)) return true;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(meta, "labels"), key, v)
    {
        if (json_is_string(v) && strstr(json_string_value(v), PLUGIN_MARK)) return true;
    }
    return false;
}

static void add_plugin_pod(an_why_pending *b, const json_t *pod)
{
    if (b->nplugins == b->pcap) {
        size_t cap = b->pcap ? b->pcap * 2 : 8;
        plugin_pod *v = realloc(b->plugins, cap * sizeof *v);
        if (!v) {
            b->oom = true;
            return;
        }
        b->plugins = v;
        b->pcap = cap;
    }
    plugin_pod *p = &b->plugins[b->nplugins++];
    memset(p, 0, sizeof *p);
    char ref[600];
    p->ref = strdup(an_obj_ref(pod, ref, sizeof ref));
    p->name = strdup(kube_str(json_object_get(pod, "metadata"), "name"));
    const char *node = kube_ds_target_node(pod);
    p->node = strdup(node ? node : "");
    p->runtime_class = strdup(kube_str(json_object_get(pod, "spec"), "runtimeClassName"));
    snprintf(p->phase, sizeof p->phase, "%s", kube_str(json_object_get(pod, "status"), "phase"));
    kube_pod_status_text(pod, p->status, sizeof p->status);
    p->ready = kube_pod_ready(pod);
    if (!p->ref || !p->name || !p->node || !p->runtime_class) b->oom = true;
}

void an_why_pending_add_pod(an_why_pending *b, const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    if (strcmp(kube_str(meta, "name"), b->name) == 0 &&
        strcmp(kube_str(meta, "namespace"), b->ns) == 0)
        return; /* the pod itself does not compete with itself */
    if (is_plugin_pod(pod)) add_plugin_pod(b, pod);
    const char *node = kube_str(json_object_get(pod, "spec"), "nodeName");
    if (!*node || kube_pod_terminal(pod)) return;
    kube_quantity req[MAX_RES];
    gp_error err = {0};
    if (an_pod_requests(pod, b->names, b->nres, req, &err) < 0) {
        json_array_append_new(b->warnings, json_string(err.text));
        return;
    }
    an_node_entry *e = an_node_table_get(b->nodes, node);
    if (!e || !rec_of(b, e)) return;
    for (size_t i = 0; i < b->nres; i++)
        if (kube_quantity_add(&e->sums[i], &req[i], &e->sums[i], &err) < 0)
            json_array_append_new(b->warnings, json_string(err.text));
}

static bool about_pod(const an_why_pending *b, const json_t *object)
{
    if (strcmp(kube_str(object, "kind"), "Pod") != 0) return false;
    if (*b->uid && *kube_str(object, "uid")) return strcmp(kube_str(object, "uid"), b->uid) == 0;
    return strcmp(kube_str(object, "name"), b->name) == 0 &&
           strcmp(kube_str(object, "namespace"), b->ns) == 0;
}

/* Keeps the latest event per object and reason: the pod's own, and
 * warnings on device plugin pods. */
void an_why_pending_add_event(an_why_pending *b, const json_t *event)
{
    an_event_view v;
    an_event_read(event, &v);
    bool mine = about_pod(b, v.object);
    if (!mine &&
        (strcmp(v.type, "Warning") != 0 || !strstr(kube_str(v.object, "name"), PLUGIN_MARK)))
        return;
    char ref[600];
    snprintf(ref, sizeof ref, "%s/%s", kube_str(v.object, "namespace"), kube_str(v.object, "name"));
    if (mine) snprintf(ref, sizeof ref, "%s", b->ref);
    if (an_event_log_add(&b->events, ref, &v) < 0) b->oom = true;
}

void an_why_pending_add_runtimeclass(an_why_pending *b, const json_t *rc)
{
    const char *want = kube_str(json_object_get(b->pod, "spec"), "runtimeClassName");
    if (!*want || strcmp(kube_str(json_object_get(rc, "metadata"), "name"), want) != 0) return;
    free(b->rc_handler);
    b->rc_handler = strdup(kube_str(rc, "handler"));
    if (!b->rc_handler) b->oom = true;
}

/* ---- finish ---- */

typedef struct ctx {
    an_why_pending *b;
    json_t *report, *evidence;
    an_node_entry **nodes;
    size_t n;
} ctx;

static void evidence(ctx *c, const char *kind, const char *ref, const char *field,
                     const char *value)
{
    char line[2048];
    snprintf(line, sizeof line, "%s %s %s = %s", kind, ref, field, value ? value : "<absent>");
    json_array_append_new(c->evidence, json_string(line));
}

static const char *event_message(const an_why_pending *b, const char *object, const char *reason)
{
    return an_event_log_message(&b->events, object, reason);
}

static json_t *scheduler_section(ctx *c)
{
    an_why_pending *b = c->b;
    const json_t *cond = kube_condition(b->pod, "PodScheduled");
    const char *event = event_message(b, b->ref, "FailedScheduling");
    const char *msg =
        cond && strcmp(kube_str(cond, "status"), "False") == 0 && *kube_str(cond, "message")
            ? kube_str(cond, "message")
            : event;
    evidence(c, "pod", b->ref, ".status.conditions[PodScheduled].status",
             cond ? kube_str(cond, "status") : NULL);
    if (cond && *kube_str(cond, "reason"))
        evidence(c, "pod", b->ref, ".status.conditions[PodScheduled].reason",
                 kube_str(cond, "reason"));
    if (cond && *kube_str(cond, "message"))
        evidence(c, "pod", b->ref, ".status.conditions[PodScheduled].message",
                 kube_str(cond, "message"));
    if (event) evidence(c, "event", b->ref, "FailedScheduling .message", event);
    json_t *parsed = msg && !*kube_str(json_object_get(b->pod, "spec"), "nodeName")
                         ? an_sched_message_parse(msg, NULL)
                         : NULL;
    json_t *out =
        json_pack("{s:o, s:s?, s:o, s:s}", "condition",
                  cond ? json_pack("{s:s, s:s, s:s}", "status", kube_str(cond, "status"), "reason",
                                   kube_str(cond, "reason"), "message", kube_str(cond, "message"))
                       : json_null(),
                  "event", event, "parsed", parsed ? parsed : json_null(), "blocker",
                  parsed ? an_sched_primary_blocker(parsed) : "none");
    return out;
}

static json_t *nodes_section(ctx *c, size_t *advertising)
{
    an_why_pending *b = c->b;
    json_t *out = json_array();
    *advertising = 0;
    for (size_t i = 0; i < c->n; i++) {
        an_node_entry *e = c->nodes[i];
        node_rec *r = e->user;
        if (!e->seen || !r) continue;
        char req[KUBE_QUANTITY_FORMAT_MAX] = "0", fr[KUBE_QUANTITY_FORMAT_MAX] = "0";
        if (b->resource) {
            kube_quantity alloc = {0}, free_q = {0};
            gp_error err;
            if (r->allocatable && kube_quantity_parse(r->allocatable, &alloc, &err) < 0)
                alloc = (kube_quantity){0};
            if (!kube_quantity_is_zero(&alloc) &&
                kube_quantity_cmp(&alloc, &(kube_quantity){0}) > 0)
                (*advertising)++;
            kube_quantity_sub(&alloc, &e->sums[b->res_index], &free_q, &err);
            kube_quantity_format(&e->sums[b->res_index], req);
            kube_quantity_format(&free_q, fr);
            char field[300];
            snprintf(field, sizeof field, ".status.allocatable.%s", b->resource);
            evidence(c, "node", e->name, field, r->allocatable);
        }
        json_array_append_new(out, json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:s, s:O?}", "name",
                                             e->name, "ready", r->ready, "capacity", r->capacity,
                                             "allocatable", r->allocatable, "requested", req,
                                             "free", fr, "runtime_handlers", r->handlers));
    }
    return out;
}

static const char *sandbox_failure(const an_why_pending *b, const char *object)
{
    const char *m = event_message(b, object, "FailedCreatePodSandBox");
    return m && strstr(m, NO_RUNTIME) ? m : NULL;
}

static json_t *plugins_section(ctx *c)
{
    an_why_pending *b = c->b;
    json_t *out = json_array();
    for (size_t i = 0; i < b->nplugins; i++) {
        const plugin_pod *p = &b->plugins[i];
        const char *sandbox = event_message(b, p->ref, "FailedCreatePodSandBox");
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:b, s:s?}", "pod", p->ref,
                                             "node", p->node, "phase", p->phase, "status",
                                             p->status, "ready", p->ready, "event", sandbox));
        evidence(c, "pod", p->ref, "STATUS", p->status);
        if (sandbox) evidence(c, "event", p->ref, "FailedCreatePodSandBox .message", sandbox);
    }
    return out;
}

static json_t *runtime_section(ctx *c)
{
    an_why_pending *b = c->b;
    const char *name = kube_str(json_object_get(b->pod, "spec"), "runtimeClassName");
    if (!*name) return json_null();
    evidence(c, "pod", b->ref, ".spec.runtimeClassName", name);
    char ref[300];
    snprintf(ref, sizeof ref, "%s", name);
    evidence(c, "runtimeclass", ref, ".handler", b->rc_handler);
    json_t *with = json_array(), *without = json_array(), *unknown = json_array();
    const char *bound = kube_str(json_object_get(b->pod, "spec"), "nodeName");
    for (size_t i = 0; b->rc_handler && i < c->n; i++) {
        node_rec *r = c->nodes[i]->user;
        if (!c->nodes[i]->seen || !r) continue;
        if (*bound && strcmp(bound, c->nodes[i]->name) != 0) continue;
        json_t *list = !r->handlers                                  ? unknown
                       : kube_has_string(r->handlers, b->rc_handler) ? with
                                                                     : without;
        json_array_append_new(list, json_string(c->nodes[i]->name));
        char *h = r->handlers ? json_dumps(r->handlers, JSON_COMPACT) : NULL;
        evidence(c, "node", c->nodes[i]->name, ".status.runtimeHandlers[*].name", h);
        free(h);
    }
    return json_pack("{s:s, s:s?, s:o, s:o, s:o}", "name", name, "handler", b->rc_handler,
                     "nodes_with", with, "nodes_without", without, "nodes_unknown", unknown);
}

static json_t *kubelet_events(ctx *c)
{
    static const char *const skip[] = {"FailedScheduling", "Scheduled"};
    an_why_pending *b = c->b;
    json_t *out = json_array();
    for (size_t i = 0; i < b->events.n; i++) {
        const an_kept_event *k = &b->events.v[i];
        if (strcmp(k->object, b->ref) != 0) continue;
        bool skipped = false;
        for (size_t s = 0; s < 2; s++)
            skipped = skipped || strcmp(k->reason, skip[s]) == 0;
        if (skipped) continue;
        json_array_append_new(out,
                              json_pack("{s:s, s:s}", "reason", k->reason, "message", k->message));
        char field[300];
        snprintf(field, sizeof field, "%s .message", k->reason);
        evidence(c, "event", b->ref, field, k->message);
    }
    return out;
}

/* The formats of the next steps: English for JSON, translated for text. */
static const char *next_format(const char *code, bool translate)
{
    static const struct {
        const char *code, *format;
    } f[] = {
        {"scheduler", N_("kubectl describe node %s: taints, labels and allocated resources "
                         "against the pod's requests")},
        {"kubelet-log",
         N_("on node %s: journalctl -u kubelet | grep -E 'Got registration request from device "
            "plugin|Bad registration request|Unable to connect to device plugin|ListAndWatch "
            "ended unexpectedly'")},
        {"plugin-log", N_("kubectl logs %s: look for 'Registered device plugin for', 'nvml init "
                          "failed', 'Could not register device plugin: context deadline "
                          "exceeded'")},
        {"socket-mount", N_("check that %s mounts hostPath /var/lib/kubelet/device-plugins at "
                            "the same path in the container")},
        {"containerd-check", N_("on node %s: gpuop containerd check nvidia (is the handler "
                                "loaded, not only written?), then restart containerd")},
        {"admission", N_("on node %s: kubelet log lines 'Allocate failed', 'cannot allocate "
                         "unregistered device'")},
        {"none", N_("the pod is scheduled on %s: nothing blocks it at these layers")},
        {"gpus-lost", N_("node %s has GPUs by its nvidia.com/gpu.count label but advertises "
                         "none: its device plugin registered and is gone; read its kubelet "
                         "log and its device plugin pod first")},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (strcmp(f[i].code, code) == 0) return translate ? _(f[i].format) : f[i].format;
    return "%s";
}

static void next(json_t *list, const char *code, const char *target)
{
    char text[1024];
    snprintf(text, sizeof text, next_format(code, false), target);
    json_array_append_new(
        list, json_pack("{s:s, s:s, s:s}", "code", code, "target", target, "text", text));
}

static const plugin_pod *broken_plugin(const an_why_pending *b, bool *runtime)
{
    *runtime = false;
    for (size_t i = 0; i < b->nplugins; i++)
        if (sandbox_failure(b, b->plugins[i].ref)) {
            *runtime = true;
            return &b->plugins[i];
        }
    for (size_t i = 0; i < b->nplugins; i++)
        if (!b->plugins[i].ready) return &b->plugins[i];
    return NULL;
}

/* A node named by the bound pod reports handlers without the one wanted. */
static bool handler_missing_on(const ctx *c, const char *node)
{
    an_node_entry *e = an_node_table_find(c->b->nodes, node);
    node_rec *r = e ? e->user : NULL;
    return c->b->rc_handler && r && r->handlers && !kube_has_string(r->handlers, c->b->rc_handler);
}

static const char *decide_scheduled(ctx *c, const char *node, json_t *steps, char *why, size_t size)
{
    an_why_pending *b = c->b;
    const char *adm = event_message(b, b->ref, "UnexpectedAdmissionError");
    const char *reason = kube_str(json_object_get(b->pod, "status"), "reason");
    if (adm || strcmp(reason, "UnexpectedAdmissionError") == 0) {
        snprintf(why, size, "%s",
                 adm ? adm : kube_str(json_object_get(b->pod, "status"), "message"));
        next(steps, "admission", node);
        return "kubelet-admission";
    }
    /* A pod past Pending has its sandbox: a handler lost later (a containerd
     * restart) does not stop it. */
    const char *sandbox = sandbox_failure(b, b->ref);
    bool pending = strcmp(kube_str(json_object_get(b->pod, "status"), "phase"), "Pending") == 0;
    if (pending && (sandbox || handler_missing_on(c, node))) {
        snprintf(why, size, "%s", sandbox ? sandbox : "node does not report the handler");
        next(steps, "containerd-check", node);
        return "runtime-handler";
    }
    next(steps, "none", node);
    snprintf(why, size, "scheduled on %s", node);
    return "none";
}

/* Nodes whose GPU Feature Discovery labels count GPUs that the node does not
 * advertise (0 or absent): capacity lost between the driver and the
 * scheduler, the first place to look whatever the scheduler said. Returns
 * the first such node, or NULL. */
static const char *lost_gpus(ctx *c, json_t *steps)
{
    const an_why_pending *b = c->b;
    const char *first = NULL;
    if (!b->resource || strcmp(b->resource, "nvidia.com/gpu") != 0) return NULL;
    for (size_t i = 0; i < c->n; i++) {
        const node_rec *r = c->nodes[i]->user;
        if (!c->nodes[i]->seen || !r || r->gpu_count <= 0) continue;
        if (r->allocatable && strtol(r->allocatable, NULL, 10) > 0) continue;
        next(steps, "gpus-lost", c->nodes[i]->name);
        if (!first) first = c->nodes[i]->name;
    }
    return first;
}

static const char *decide_unscheduled(ctx *c, size_t advertising, json_t *steps, char *why,
                                      size_t size)
{
    an_why_pending *b = c->b;
    const char *lost = lost_gpus(c, steps);
    const char *blocker = kube_str(json_object_get(c->report, "scheduler"), "blocker");
    if (!b->resource || advertising > 0) {
        snprintf(why, size, "%s", blocker);
        for (size_t i = 0; i < c->n && i < 3; i++)
            if (c->nodes[i]->seen) next(steps, "scheduler", c->nodes[i]->name);
        return "scheduler";
    }
    bool runtime;
    const plugin_pod *p = broken_plugin(b, &runtime);
    if (p && runtime) {
        snprintf(why, size, "%s on %s: %s", p->ref, p->node, sandbox_failure(b, p->ref));
        next(steps, "containerd-check", p->node);
        return "runtime-handler";
    }
    if (p) {
        snprintf(why, size, "%s on %s is %s", p->ref, p->node, p->status);
        next(steps, "plugin-log", p->ref);
        next(steps, "socket-mount", p->ref);
        return "device-plugin";
    }
    snprintf(why, size,
             b->nplugins ? "device plugin pods run, but no node advertises %s"
                         : "no node advertises %s and no device plugin pod was found",
             b->resource);
    const char *node = lost ? lost : c->n ? c->nodes[0]->name : "<node>";
    next(steps, "kubelet-log", node);
    if (b->nplugins) next(steps, "plugin-log", b->plugins[0].ref);
    if (b->nplugins) next(steps, "socket-mount", b->plugins[0].ref);
    return "node-advertisement";
}

static void verdict(ctx *c, const char *layer, const char *why)
{
    char text[2048];
    snprintf(text, sizeof text, _("%s: the chain breaks at %s: %s"), c->b->ref, layer, why);
    if (strcmp(layer, "none") == 0)
        snprintf(text, sizeof text, _("%s is scheduled: %s"), c->b->ref, why);
    json_object_set_new(c->report, "verdict", json_string(text));
}

static json_t *requests_json(const an_why_pending *b)
{
    json_t *out = json_object();
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    for (size_t i = 0; i < b->nres; i++) {
        if (kube_quantity_is_zero(&b->req[i])) continue;
        kube_quantity_format(&b->req[i], buf);
        json_object_set_new(out, b->names[i], json_string(buf));
    }
    return out;
}

static int by_plugin_ref(const void *x, const void *y)
{
    return strcmp(((const plugin_pod *)x)->ref, ((const plugin_pod *)y)->ref);
}

json_t *an_why_pending_finish(an_why_pending *b, gp_error *err)
{
    ctx c = {.b = b, .evidence = json_array()};
    if (!b->oom && c.evidence) c.nodes = an_node_table_sorted(b->nodes, &c.n);
    if (b->oom || !c.nodes) {
        json_decref(c.evidence);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    /* Sorted so that the report does not depend on the adding order. */
    if (b->nplugins) qsort(b->plugins, b->nplugins, sizeof *b->plugins, by_plugin_ref);
    an_event_log_sort(&b->events);
    const char *bound = kube_str(json_object_get(b->pod, "spec"), "nodeName");
    c.report = json_pack("{s:s, s:s?, s:o, s:s?}", "pod", b->ref, "resource", b->resource,
                         "requests", requests_json(b), "node", *bound ? bound : NULL);
    evidence(&c, "pod", b->ref, ".spec.nodeName", *bound ? bound : NULL);
    json_object_set_new(c.report, "scheduler", scheduler_section(&c));
    size_t advertising;
    json_object_set_new(c.report, "nodes", nodes_section(&c, &advertising));
    json_object_set_new(c.report, "advertising", json_integer((json_int_t)advertising));
    json_object_set_new(c.report, "device_plugin_pods", plugins_section(&c));
    json_object_set_new(c.report, "runtime_class", runtime_section(&c));
    json_object_set_new(c.report, "kubelet_events", kubelet_events(&c));
    json_t *steps = json_array();
    char why[1024];
    const char *layer = *bound ? decide_scheduled(&c, bound, steps, why, sizeof why)
                               : decide_unscheduled(&c, advertising, steps, why, sizeof why);
    json_object_set_new(c.report, "layer", json_string(layer));
    json_object_set_new(c.report, "next", steps);
    verdict(&c, layer, why);
    json_object_set_new(c.report, "evidence", c.evidence);
    json_object_set(c.report, "warnings", b->warnings);
    free(c.nodes);
    return c.report;
}

void an_why_pending_free(an_why_pending *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->nplugins; i++) {
        plugin_pod *p = &b->plugins[i];
        free(p->ref), free(p->name), free(p->node), free(p->runtime_class);
    }
    free(b->plugins);
    an_event_log_free(&b->events);
    free(b->rc_handler);
    an_node_table_free(b->nodes, node_rec_free);
    json_decref(b->warnings);
    json_decref(b->pod);
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
    an_table *t = an_table_new(3);
    const char *head[3] = {_("NODES"), _("REASON"), _("BLOCKER")};
    if (t) an_table_row(t, head);
    size_t i;
    const json_t *it;
    json_array_foreach(json_object_get(json_object_get(s, "parsed"), "reasons"), i, it)
    {
        char count[32];
        snprintf(count, sizeof count, "%lld",
                 (long long)json_integer_value(json_object_get(it, "count")));
        const char *row[3] = {count, kube_str(it, "reason"), kube_str(it, "blocker")};
        if (t) an_table_row(t, row);
    }
    if (json_array_size(json_object_get(json_object_get(s, "parsed"), "reasons")))
        print_table(t, out);
    else
        an_table_free(t);
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

static void render_nodes(const json_t *r, FILE *out)
{
    const char *res = json_string_value(json_object_get(r, "resource"));
    fprintf(out, "\n%s\n", _("Nodes:"));
    an_table *t = an_table_new(6);
    const char *head[6] = {_("NAME"),      _("READY"), _("ALLOCATABLE"),
                           _("REQUESTED"), _("FREE"),  _("RUNTIME HANDLERS")};
    if (t) an_table_row(t, head);
    size_t i;
    const json_t *n;
    const json_t *nodes = json_object_get(r, "nodes");
    json_array_foreach(nodes, i, n)
    {
        if (i >= TEXT_NODE_MAX) break;
        char *h = handler_list(json_object_get(n, "runtime_handlers"));
        const char *row[6] = {kube_str(n, "name"),
                              or_none(json_object_get(n, "ready")),
                              res ? or_none(json_object_get(n, "allocatable")) : "-",
                              res ? kube_str(n, "requested") : "-",
                              res ? kube_str(n, "free") : "-",
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

static void render_text(const json_t *r, FILE *out)
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
    fprintf(out, "\n%s %s\n%s\n", _("Layer:"), kube_str(r, "layer"), _("Next:"));
    json_array_foreach(json_object_get(r, "next"), i, x)
    {
        fputs("  ", out);
        fprintf(out, next_format(kube_str(x, "code"), true), kube_str(x, "target"));
        fputc('\n', out);
    }
    an_render_tail(r, out);
}

static void render_lab(const json_t *report, FILE *out)
{
    fprintf(out, "LAYER=%s\nBLOCKER=%s\n", kube_str(report, "layer"),
            kube_str(json_object_get(report, "scheduler"), "blocker"));
}

char *an_why_pending_render(const json_t *report, an_format fmt)
{
    return an_render(report, fmt, render_text, render_lab);
}

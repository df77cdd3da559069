/* The `gpuop nodes` analyzer (see nodes.h). */
#include "analyze/nodes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemonset.h"
#include "kube/json.h"
#include "kube/pod.h"
#include "kube/pod_print.h"
#include "util/i18n.h"
#include "util/msg.h"

#define DRIVER_LABEL   "nvidia.com/cuda.driver-version.full"
#define GATE_PREFIX    "nvidia.com/gpu.deploy."
#define MIG_CONFIG     "nvidia.com/mig.config"
#define MIG_STATE      "nvidia.com/mig.config.state"
#define UPGRADE_STATE  "nvidia.com/gpu-driver-upgrade-state"
#define NVIDIA_PREFIX  "nvidia.com/"
#define MIG_RES_PREFIX "nvidia.com/mig-"
#define PAUSED         "paused-for-mig-change"

enum { L_PRODUCT, L_MEMORY, L_COUNT, L_REPLICAS, L_SHARING, L_DRIVER, L_N };
static const char *const label_keys[L_N] = {
    "nvidia.com/gpu.product",  "nvidia.com/gpu.memory",           "nvidia.com/gpu.count",
    "nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy", DRIVER_LABEL,
};
static const char *const label_names[L_N] = {"product",  "memory",           "count",
                                             "replicas", "sharing_strategy", "driver_version"};

typedef struct node_info {
    char ready[16];
    char *ready_reason, *ready_message;
    bool unschedulable;
    json_t *taints;               /* spec.taints as Taint.ToString() texts */
    char *capacity, *allocatable; /* of the resource, as the API wrote them; NULL = absent */
    json_t *others; /* every other nvidia.com/ resource: {name: {capacity, allocatable}} */
    char *labels[L_N];
    json_t *operator_labels; /* the GPU Operator's gates and states (gpu-node-facts.md 5, 2.4) */
    bool gpu_labels;         /* hardware or GFD says a GPU is there */
    size_t pods;             /* non-terminated pods requesting the resource */
    char *plugin_pod;        /* a device plugin pod for this node ("ns/name"), NULL when none */
    char plugin_status[64];
    bool plugin_ready;
} node_info;

struct an_nodes {
    char *resource;
    an_node_table *nodes;
    json_t *warnings;
    size_t plugin_pods;   /* device plugin pods seen, on any node */
    size_t pending_plain; /* Pending pods the scheduler refused for want of the resource */
    char *pending_first;
    bool oom;
};

static void node_info_free(void *p)
{
    node_info *ni = p;
    free(ni->ready_reason);
    free(ni->ready_message);
    json_decref(ni->taints);
    free(ni->capacity);
    free(ni->allocatable);
    json_decref(ni->others);
    for (size_t i = 0; i < L_N; i++)
        free(ni->labels[i]);
    json_decref(ni->operator_labels);
    free(ni->plugin_pod);
    free(ni);
}

an_nodes *an_nodes_new(const char *resource, gp_error *err)
{
    an_nodes *b = calloc(1, sizeof *b);
    if (b) b->resource = strdup(resource ? resource : "nvidia.com/gpu");
    if (b) b->nodes = an_node_table_new(1);
    if (b) b->warnings = json_array();
    if (!b || !b->resource || !b->nodes || !b->warnings) {
        an_nodes_free(b);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    return b;
}

static node_info *info_of(an_nodes *b, an_node_entry *e)
{
    if (!e->user) e->user = calloc(1, sizeof(node_info));
    if (!e->user) b->oom = true;
    return e->user;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A resource list value as text (a bare JSON number is accepted too). */
static char *resource_text(const json_t *list, const char *name)
{
    const json_t *v = json_object_get(list, name);
    if (!v) return NULL;
    if (json_is_string(v)) return strdup(json_string_value(v));
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

static json_t *text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* Every nvidia.com/ resource of capacity or allocatable but the one the
 * report is about: a renamed (gpu.shared) or MIG (mig-*) resource is still
 * the node's GPUs (gpu-node-facts.md 1.4, 2.3). */
static json_t *other_gpu_resources(const json_t *status, const char *resource)
{
    json_t *out = json_object();
    static const char *const lists[2] = {"capacity", "allocatable"};
    for (size_t l = 0; l < 2; l++) {
        const char *key;
        json_t *v;
        json_object_foreach(json_object_get(status, lists[l]), key, v)
        {
            if (!starts_with(key, NVIDIA_PREFIX) || strcmp(key, resource) == 0) continue;
            json_t *entry = json_object_get(out, key);
            if (!entry) {
                entry = json_pack("{s:n, s:n}", "capacity", "allocatable");
                json_object_set_new(out, key, entry);
            }
            char *text = resource_text(json_object_get(status, lists[l]), key);
            json_object_set_new(entry, lists[l], text_or_null(text));
            free(text);
        }
    }
    return out;
}

static json_t *operator_labels(const json_t *labels)
{
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)labels, key, v)
    {
        if (!json_is_string(v)) continue;
        if (starts_with(key, GATE_PREFIX) || strcmp(key, MIG_CONFIG) == 0 ||
            strcmp(key, MIG_STATE) == 0 || strcmp(key, UPGRADE_STATE) == 0)
            json_object_set(out, key, v);
    }
    return out;
}

static json_t *taint_texts(const json_t *taints)
{
    json_t *out = json_array();
    size_t i;
    const json_t *t;
    json_array_foreach(taints, i, t)
    {
        char text[700];
        an_taint_text(t, text, sizeof text);
        json_array_append_new(out, json_string(text));
    }
    return out;
}

void an_nodes_add_node(an_nodes *b, const json_t *node)
{
    const json_t *meta = json_object_get(node, "metadata");
    an_node_entry *e = an_node_table_get(b->nodes, kube_str(meta, "name"));
    node_info *ni = e ? info_of(b, e) : NULL;
    if (!ni) {
        b->oom = true;
        return;
    }
    e->seen = true;
    const json_t *ready = kube_condition(node, "Ready");
    snprintf(ni->ready, sizeof ni->ready, "%s", kube_str(ready, "status"));
    ni->ready_reason = strdup(kube_str(ready, "reason"));
    ni->ready_message = strdup(kube_str(ready, "message"));
    ni->unschedulable = json_is_true(kube_path(node, "spec", "unschedulable", NULL));
    ni->taints = taint_texts(kube_path(node, "spec", "taints", NULL));
    const json_t *status = json_object_get(node, "status");
    ni->capacity = resource_text(json_object_get(status, "capacity"), b->resource);
    ni->allocatable = resource_text(json_object_get(status, "allocatable"), b->resource);
    ni->others = other_gpu_resources(status, b->resource);
    const json_t *labels = json_object_get(meta, "labels");
    for (size_t i = 0; i < L_N; i++)
        ni->labels[i] = dup_or_null(json_string_value(json_object_get(labels, label_keys[i])));
    ni->operator_labels = operator_labels(labels);
    ni->gpu_labels = strcmp(kube_str(labels, "nvidia.com/gpu.present"), "true") == 0 ||
                     ni->labels[L_PRODUCT] || ni->labels[L_COUNT];
    if (!ni->ready_reason || !ni->ready_message || !ni->taints || !ni->others ||
        !ni->operator_labels)
        b->oom = true;
}

/* A device plugin pod, by the node it is for (a DaemonSet pod not yet
 * bound names its node in its node affinity). A Ready one wins over one
 * that is not. */
static void add_plugin_pod(an_nodes *b, const json_t *pod)
{
    b->plugin_pods++;
    const char *node = kube_ds_target_node(pod);
    if (!node || kube_pod_terminal(pod)) return;
    an_node_entry *e = an_node_table_get(b->nodes, node);
    node_info *ni = e ? info_of(b, e) : NULL;
    if (!ni || (ni->plugin_pod && ni->plugin_ready)) return;
    char ref[600];
    free(ni->plugin_pod);
    ni->plugin_pod = strdup(an_obj_ref(pod, ref, sizeof ref));
    if (!ni->plugin_pod) b->oom = true;
    kube_pod_status_text(pod, ni->plugin_status, sizeof ni->plugin_status);
    ni->plugin_ready = kube_pod_ready(pod);
}

/* A Pending pod that the scheduler turned away for want of the resource
 * ("Insufficient nvidia.com/gpu" in its PodScheduled condition). */
static void note_pending(an_nodes *b, const json_t *pod)
{
    const json_t *cond = kube_condition(pod, "PodScheduled");
    char want[320];
    snprintf(want, sizeof want, "Insufficient %s", b->resource);
    if (!kube_str_is(cond, "status", "False") || !strstr(kube_str(cond, "message"), want)) return;
    b->pending_plain++;
    char ref[600];
    if (!b->pending_first && !(b->pending_first = strdup(an_obj_ref(pod, ref, sizeof ref))))
        b->oom = true;
}

void an_nodes_add_pod(an_nodes *b, const json_t *pod)
{
    if (an_is_device_plugin_pod(pod)) add_plugin_pod(b, pod);
    const char *node = kube_str(json_object_get(pod, "spec"), "nodeName");
    if (kube_pod_terminal(pod)) return;
    const char *names[1] = {b->resource};
    kube_quantity req;
    gp_error err = {0};
    if (an_pod_requests(pod, names, 1, &req, &err) < 0) {
        json_array_append_new(b->warnings, json_string(err.text));
        return;
    }
    if (kube_quantity_is_zero(&req)) return;
    if (!*node) {
        note_pending(b, pod);
        return;
    }
    an_node_entry *e = an_node_table_get(b->nodes, node);
    node_info *ni = e ? info_of(b, e) : NULL;
    if (!ni) return;
    if (kube_quantity_add(&e->sums[0], &req, &e->sums[0], &err) < 0) {
        json_array_append_new(b->warnings, json_string(err.text));
        return;
    }
    ni->pods++;
}

/* Parses a quantity text; absent, unparsable or NULL reads as zero. */
static kube_quantity quantity_or_zero(const char *text)
{
    kube_quantity q = {0};
    gp_error err;
    if (text && kube_quantity_parse(text, &q, &err) < 0) q = (kube_quantity){0};
    return q;
}

static bool positive(const char *text)
{
    kube_quantity q = quantity_or_zero(text);
    return !kube_quantity_is_zero(&q) && kube_quantity_cmp(&q, &(kube_quantity){0}) > 0;
}

/* ---- flags ---- */

/* The sentence for a flag code (its arguments are the flag's "args"):
 * English for the report, translated for text. */
static const char *flag_format(const char *code, bool translate)
{
    static const struct {
        const char *code, *format;
    } texts[] = {
        {"not-ready", N_("NotReady (Ready=%s %s: %s): its GPUs take no new pods, and its pods "
                         "may be evicted")},
        {"cordoned", N_("cordoned (spec.unschedulable): its idle %s is not counted as free")},
        {"renamed", N_("serves its GPUs as %s=%s instead of %s (renameByDefault: true): the "
                       "documented time-slicing state, but pods asking for plain %s will not "
                       "schedule here")},
        {"mig-resources", N_("serves MIG devices (%s) beside %s: pods asking for plain %s get "
                             "only the GPUs left out of MIG here")},
        {"plain-requests-pending", N_("%s Pending pods ask for plain %s, which this node serves "
                                      "as %s (the first: %s)")},
        {"gpus-lost", N_("Ready, but %s reads 0: its device plugin registered here and is gone "
                         "or unhealthy")},
        {"never-registered", N_("GPU labels present, but %s was never registered: no device "
                                "plugin has advertised it here")},
        {"unhealthy-devices", N_("%s capacity is above allocatable: some devices are marked "
                                 "unhealthy")},
        {"driver-label-missing", N_("label nvidia.com/cuda.driver-version.full is missing while "
                                    "%s pods can still land here: a node that rebooted without "
                                    "its driver would take them")},
        {"gate-off", N_("GPU Operator gate %s=false: the operator deploys no %s here")},
        {"gate-paused", N_("GPU Operator gate %s=paused-for-mig-change: the MIG manager paused "
                           "the %s here (nvidia.com/mig.config.state=%s)")},
        {"mig-config-failed", N_("the MIG layout %s failed to apply (nvidia.com/mig.config.state"
                                 "=failed): the MIG manager may have left operand gates paused")},
        {"driver-upgrade", N_("driver upgrade state %s (nvidia.com/gpu-driver-upgrade-state)")},
        {"no-device-plugin", N_("GPU node without a device plugin pod, while %s device plugin "
                                "pods run on other nodes: nothing will advertise %s here")},
        {"device-plugin-not-ready", N_("its device plugin pod %s is %s, not Ready")},
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        if (strcmp(texts[i].code, code) == 0)
            return translate ? _(texts[i].format) : texts[i].format;
    return "%s";
}

/* Adds {code, severity, args, message}; args are up to four strings
 * (NULL ends the list). */
static void flag(json_t *flags, const char *code, const char *severity, const char *a1,
                 const char *a2, const char *a3, const char *a4)
{
    json_t *args = json_array();
    const char *a[4] = {a1, a2, a3, a4};
    for (size_t i = 0; i < 4 && a[i]; i++)
        json_array_append_new(args, json_string(a[i]));
    char msg[1024];
    an_format_args(msg, sizeof msg, flag_format(code, false), args);
    json_array_append_new(flags, json_pack("{s:s, s:s, s:o, s:s}", "code", code, "severity",
                                           severity, "args", args, "message", msg));
}

static bool is_ready(const node_info *ni)
{
    return strcmp(ni->ready, "True") == 0;
}

static bool gpu_node(const node_info *ni)
{
    return ni->gpu_labels || ni->capacity || ni->allocatable || json_object_size(ni->others);
}

/* The renamed resource (<resource>.shared) the node advertises, or NULL. */
static const char *renamed_to(const an_nodes *b, const node_info *ni, const char **count)
{
    char shared[300];
    snprintf(shared, sizeof shared, "%s.shared", b->resource);
    const char *key;
    json_t *v;
    json_object_foreach(ni->others, key, v)
    {
        const char *alloc = json_string_value(json_object_get(v, "allocatable"));
        const char *cap = json_string_value(json_object_get(v, "capacity"));
        if (strcmp(key, shared) == 0 && (positive(alloc) || positive(cap))) {
            *count = alloc ? alloc : cap;
            return key;
        }
    }
    return NULL;
}

/* The MIG resources the node advertises, "nvidia.com/mig-1g.5gb=16, ...";
 * false when none (or the report is not about nvidia.com/gpu). */
static bool mig_resources(const an_nodes *b, const node_info *ni, char *buf, size_t size)
{
    buf[0] = '\0';
    if (strcmp(b->resource, "nvidia.com/gpu") != 0) return false;
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach(ni->others, key, v)
    {
        const char *alloc = json_string_value(json_object_get(v, "allocatable"));
        const char *cap = json_string_value(json_object_get(v, "capacity"));
        if (!starts_with(key, MIG_RES_PREFIX) || !(positive(alloc) || positive(cap))) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s=%s", n++ ? ", " : "", key, alloc ? alloc : cap);
    }
    return n > 0;
}

static const char *label_of(const node_info *ni, const char *key)
{
    return json_string_value(json_object_get(ni->operator_labels, key));
}

/* The gates (gpu-node-facts.md 5; 2.4 for the pause): a gate that keeps
 * the device plugin away, or a pause the MIG manager did not undo, stops
 * the GPUs; a driver gate at false is how a preinstalled driver is run,
 * worth a warning. Returns whether a device-plugin gate is off or paused. */
static bool gate_flags(const node_info *ni, json_t *flags)
{
    bool plugin_gate = false;
    const char *state = label_of(ni, MIG_STATE);
    bool changing = state && (strcmp(state, "pending") == 0 || strcmp(state, "rebooting") == 0);
    const char *key;
    json_t *v;
    json_object_foreach(ni->operator_labels, key, v)
    {
        if (!starts_with(key, GATE_PREFIX)) continue;
        const char *operand = key + strlen(GATE_PREFIX), *value = json_string_value(v);
        bool plugin = strcmp(operand, "device-plugin") == 0 || strcmp(operand, "operands") == 0;
        if (strcmp(value, "false") == 0) {
            flag(flags, "gate-off", plugin ? "error" : "warning", key, operand, NULL, NULL);
            plugin_gate = plugin_gate || plugin;
        } else if (strcmp(value, PAUSED) == 0) {
            flag(flags, "gate-paused", changing ? "warning" : "error", key, operand,
                 state ? state : "<absent>", NULL);
            plugin_gate = plugin_gate || plugin;
        }
    }
    if (state && strcmp(state, "failed") == 0) {
        const char *layout = label_of(ni, MIG_CONFIG);
        flag(flags, "mig-config-failed", "error", layout ? layout : "<absent>", NULL, NULL, NULL);
    }
    const char *upgrade = label_of(ni, UPGRADE_STATE);
    if (upgrade && strcmp(upgrade, "upgrade-done") != 0)
        flag(flags, "driver-upgrade", strcmp(upgrade, "upgrade-failed") == 0 ? "error" : "warning",
             upgrade, NULL, NULL, NULL);
    return plugin_gate;
}

static void advertisement_flags(const an_nodes *b, const node_info *ni, json_t *flags)
{
    kube_quantity cap = quantity_or_zero(ni->capacity), alloc = quantity_or_zero(ni->allocatable);
    bool zero = (ni->allocatable && kube_quantity_is_zero(&alloc)) ||
                (ni->capacity && kube_quantity_is_zero(&cap));
    const char *count = NULL, *renamed = renamed_to(b, ni, &count);
    char mig[512], pending[32];
    bool has_mig = mig_resources(b, ni, mig, sizeof mig);
    snprintf(pending, sizeof pending, "%zu", b->pending_plain);
    if (renamed) flag(flags, "renamed", "warning", renamed, count, b->resource, b->resource);
    if (has_mig) flag(flags, "mig-resources", "warning", mig, b->resource, b->resource, NULL);
    if ((renamed || has_mig) && b->pending_plain)
        flag(flags, "plain-requests-pending", "error", pending, b->resource,
             renamed ? renamed : mig, b->pending_first);
    bool served_otherwise = renamed || has_mig || json_object_size(ni->others) > 0;
    if (is_ready(ni) && zero && !renamed && !has_mig)
        flag(flags, "gpus-lost", "error", b->resource, NULL, NULL, NULL);
    if (!ni->allocatable && !ni->capacity && ni->gpu_labels && !served_otherwise)
        flag(flags, "never-registered", "error", b->resource, NULL, NULL, NULL);
    if (ni->capacity && ni->allocatable && kube_quantity_cmp(&cap, &alloc) > 0 &&
        !kube_quantity_is_zero(&alloc))
        flag(flags, "unhealthy-devices", "error", b->resource, NULL, NULL, NULL);
    if (!ni->labels[L_DRIVER] && !kube_quantity_is_zero(&alloc) && !ni->unschedulable)
        flag(flags, "driver-label-missing", "error", b->resource, NULL, NULL, NULL);
}

static json_t *node_flags(const an_nodes *b, const node_info *ni)
{
    json_t *flags = json_array();
    if (gpu_node(ni) && !is_ready(ni))
        flag(flags, "not-ready", "error", *ni->ready ? ni->ready : "<absent>", ni->ready_reason,
             ni->ready_message, NULL);
    if (ni->unschedulable && gpu_node(ni))
        flag(flags, "cordoned", "warning", b->resource, NULL, NULL, NULL);
    advertisement_flags(b, ni, flags);
    bool plugin_gate = gate_flags(ni, flags);
    char count[32];
    snprintf(count, sizeof count, "%zu", b->plugin_pods);
    if (ni->gpu_labels && !ni->plugin_pod && b->plugin_pods && !plugin_gate)
        flag(flags, "no-device-plugin", "warning", count, b->resource, NULL, NULL);
    if (ni->plugin_pod && !ni->plugin_ready)
        flag(flags, "device-plugin-not-ready", "warning", ni->plugin_pod, ni->plugin_status, NULL,
             NULL);
    return flags;
}

static bool has_severity(const json_t *flags, const char *severity)
{
    size_t i;
    const json_t *f;
    json_array_foreach(flags, i, f)
    {
        if (kube_str_is(f, "severity", severity)) return true;
    }
    return false;
}

/* ---- the report ---- */

static const char *advertisement(const node_info *ni)
{
    const char *text = ni->allocatable ? ni->allocatable : ni->capacity;
    if (!text) return "absent";
    kube_quantity q = quantity_or_zero(text);
    return kube_quantity_is_zero(&q) ? "zero" : "advertised";
}

/* kubectl get nodes' STATUS: Ready, NotReady or Unknown (no Ready
 * condition), then ",SchedulingDisabled" when cordoned. */
static void node_status(const an_node_entry *e, const node_info *ni, char *buf, size_t size)
{
    const char *s = !e->seen || !*ni->ready ? "Unknown" : is_ready(ni) ? "Ready" : "NotReady";
    snprintf(buf, size, "%s%s", s, ni->unschedulable ? ",SchedulingDisabled" : "");
}

static void add_line(json_t *out, const char *fmt, const char *a, const char *b, const char *c)
{
    char line[1024];
    snprintf(line, sizeof line, fmt, a, b, c);
    json_array_append_new(out, json_string(line));
}

/* "node NAME .path = value" lines for a flagged node. */
static void node_evidence(const an_nodes *b, const char *name, const node_info *ni, json_t *out)
{
    add_line(out, "node %s .status.conditions[Ready].status = %s%s", name,
             *ni->ready ? ni->ready : "<absent>", "");
    if (*ni->ready_reason)
        add_line(out, "node %s .status.conditions[Ready].reason = %s%s", name, ni->ready_reason,
                 "");
    if (ni->unschedulable) add_line(out, "node %s .spec.unschedulable = %s%s", name, "true", "");
    char *taints = json_array_size(ni->taints) ? json_dumps(ni->taints, JSON_COMPACT) : NULL;
    if (taints) add_line(out, "node %s .spec.taints = %s%s", name, taints, "");
    free(taints);
    add_line(out, "node %s .status.capacity.%s = %s", name, b->resource,
             ni->capacity ? ni->capacity : "<absent>");
    add_line(out, "node %s .status.allocatable.%s = %s", name, b->resource,
             ni->allocatable ? ni->allocatable : "<absent>");
    const char *key;
    json_t *v;
    json_object_foreach(ni->others, key, v)
    {
        const char *a = json_string_value(json_object_get(v, "allocatable"));
        add_line(out, "node %s .status.allocatable.%s = %s", name, key, a ? a : "<absent>");
    }
    add_line(out, "node %s .metadata.labels.%s = %s", name, DRIVER_LABEL,
             ni->labels[L_DRIVER] ? ni->labels[L_DRIVER] : "<absent>");
    json_object_foreach(ni->operator_labels, key, v)
    {
        add_line(out, "node %s .metadata.labels.%s = %s", name, key, json_string_value(v));
    }
    if (ni->plugin_pod)
        add_line(out, "pod %s STATUS = %s%s", ni->plugin_pod, ni->plugin_status, "");
}

static json_t *plugin_json(const node_info *ni)
{
    if (!ni->plugin_pod) return json_null();
    return json_pack("{s:s, s:s, s:b}", "pod", ni->plugin_pod, "status", ni->plugin_status, "ready",
                     ni->plugin_ready);
}

/* A new reference to v, else the fallback (itself new). */
static json_t *shared_or(json_t *v, json_t *fallback)
{
    if (!v) return fallback;
    json_decref(fallback);
    return json_incref(v);
}

static json_t *node_report(const an_nodes *b, const an_node_entry *e, const node_info *ni,
                           kube_quantity *free_out, bool *schedulable)
{
    char buf[KUBE_QUANTITY_FORMAT_MAX], status[64];
    kube_quantity alloc = quantity_or_zero(ni->allocatable), idle;
    gp_error err;
    if (kube_quantity_sub(&alloc, &e->sums[0], &idle, &err) < 0) idle = (kube_quantity){0};
    /* A cordoned or NotReady node takes no new pod: its idle GPUs are not
     * free to anyone. */
    *schedulable = e->seen && is_ready(ni) && !ni->unschedulable;
    *free_out = *schedulable ? idle : (kube_quantity){0};
    node_status(e, ni, status, sizeof status);
    json_t *labels = json_object();
    for (size_t i = 0; i < L_N; i++)
        json_object_set_new(labels, label_names[i], text_or_null(ni->labels[i]));
    json_t *n =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:o, s:b, s:b, s:o, s:o, s:s, s:o}", "name",
                  e->name, "status", status, "ready", ni->ready, "ready_reason",
                  ni->ready_reason ? ni->ready_reason : "", "ready_message",
                  ni->ready_message ? ni->ready_message : "", "unschedulable", ni->unschedulable,
                  "taints", shared_or(ni->taints, json_array()), "seen", e->seen, "schedulable",
                  *schedulable, "capacity", text_or_null(ni->capacity), "allocatable",
                  text_or_null(ni->allocatable), "advertisement", advertisement(ni),
                  "other_resources", shared_or(ni->others, json_object()));
    if (!n) return NULL;
    kube_quantity_format(&e->sums[0], buf);
    json_object_set_new(n, "requested", json_string(buf));
    kube_quantity_format(free_out, buf);
    json_object_set_new(n, "free", json_string(buf));
    kube_quantity_format(&idle, buf);
    json_object_set_new(n, "idle", json_string(buf));
    json_object_set_new(n, "pods", json_integer((json_int_t)ni->pods));
    json_object_set_new(n, "labels", labels);
    json_object_set_new(n, "operator",
                        json_pack("{s:o, s:o, s:o, s:o, s:o}", "labels",
                                  shared_or(ni->operator_labels, json_object()), "mig_config",
                                  text_or_null(label_of(ni, MIG_CONFIG)), "mig_config_state",
                                  text_or_null(label_of(ni, MIG_STATE)), "driver_upgrade_state",
                                  text_or_null(label_of(ni, UPGRADE_STATE)), "device_plugin",
                                  plugin_json(ni)));
    json_object_set_new(n, "flags", node_flags(b, ni));
    return n;
}

json_t *an_nodes_finish(an_nodes *b, gp_error *err)
{
    size_t n = 0;
    an_node_entry **sorted = b->oom ? NULL : an_node_table_sorted(b->nodes, &n);
    json_t *nodes = json_array(), *evidence = json_array();
    kube_quantity total_alloc = {0}, total_req = {0}, total_free = {0};
    size_t advertising = 0, flagged = 0, warned = 0;
    gp_error qerr;
    for (size_t i = 0; sorted && nodes && i < n; i++) {
        node_info *ni = info_of(b, sorted[i]);
        if (!ni) break;
        kube_quantity free_q, alloc = quantity_or_zero(ni->allocatable);
        bool schedulable;
        json_t *node = node_report(b, sorted[i], ni, &free_q, &schedulable);
        if (!node) {
            b->oom = true;
            break;
        }
        if (!kube_quantity_is_zero(&alloc)) advertising++;
        const json_t *flags = json_object_get(node, "flags");
        bool error = has_severity(flags, "error");
        flagged += error;
        warned += !error && json_array_size(flags) > 0;
        if (json_array_size(flags)) node_evidence(b, sorted[i]->name, ni, evidence);
        kube_quantity_add(&total_alloc, &alloc, &total_alloc, &qerr);
        kube_quantity_add(&total_req, &sorted[i]->sums[0], &total_req, &qerr);
        kube_quantity_add(&total_free, &free_q, &total_free, &qerr);
        json_array_append_new(nodes, node);
    }
    free(sorted);
    char a[KUBE_QUANTITY_FORMAT_MAX], r[KUBE_QUANTITY_FORMAT_MAX], f[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity_format(&total_alloc, a);
    kube_quantity_format(&total_req, r);
    kube_quantity_format(&total_free, f);
    json_t *report =
        b->oom || !nodes
            ? NULL
            : json_pack("{s:s, s:s, s:o, s:{s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I}, "
                        "s:O, s:o}",
                        "schema", AN_SCHEMA_NODES, "resource", b->resource, "nodes", nodes,
                        "summary", "nodes", (json_int_t)n, "advertising", (json_int_t)advertising,
                        "allocatable", a, "requested", r, "free", f, "flagged", (json_int_t)flagged,
                        "warned", (json_int_t)warned, "device_plugin_pods",
                        (json_int_t)b->plugin_pods, "pending", (json_int_t)b->pending_plain,
                        "warnings", b->warnings, "evidence", evidence);
    if (!report) {
        if (b->oom) json_decref(nodes), json_decref(evidence);
        gp_error_set(err, NULL, 0, 0, "out of memory");
    }
    return report;
}

void an_nodes_free(an_nodes *b)
{
    if (!b) return;
    an_node_table_free(b->nodes, node_info_free);
    json_decref(b->warnings);
    free(b->resource);
    free(b->pending_first);
    free(b);
}

/* ---- rendering ---- */

static const char *or_none(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "<none>";
}

static void render_lab(const json_t *report, FILE *out)
{
    an_table *t = an_table_new(2);
    if (!t) return;
    const char *head[2] = {"NAME", "GPU"};
    an_table_row(t, head);
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(report, "nodes"), i, n)
    {
        if (!json_is_true(json_object_get(n, "seen"))) continue;
        const char *row[2] = {kube_str(n, "name"), or_none(json_object_get(n, "allocatable"))};
        an_table_row(t, row);
    }
    /* kubectl's printers use tabwriter minwidth 6, padding 3. */
    an_table_print(t, out, 6, "");
    an_table_free(t);
}

static void render_verdict(const json_t *report, FILE *out)
{
    const json_t *s = json_object_get(report, "summary");
    const char *res = kube_str(report, "resource");
    json_int_t nodes = json_integer_value(json_object_get(s, "nodes"));
    json_int_t adv = json_integer_value(json_object_get(s, "advertising"));
    json_int_t flagged = json_integer_value(json_object_get(s, "flagged"));
    json_int_t warned = json_integer_value(json_object_get(s, "warned"));
    if (adv == 0)
        gp_msg_fprintf(out, _("no node advertises %s (%lld nodes)"), res, (long long)nodes);
    else
        gp_msg_fprintf(out,
                       _("%lld of %lld nodes advertise %s: %s allocatable, %s requested, %s free"),
                       (long long)adv, (long long)nodes, res, kube_str(s, "allocatable"),
                       kube_str(s, "requested"), kube_str(s, "free"));
    if (flagged) fprintf(out, _("; %lld flagged"), (long long)flagged);
    if (warned) fprintf(out, _("; %lld with warnings"), (long long)warned);
    fputc('\n', out);
}

/* "gpu.shared=16,mig-1g.5gb=8": the other GPU resources, short names. */
static void others_text(const json_t *others, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)others, key, v)
    {
        const char *a = json_string_value(json_object_get(v, "allocatable"));
        const char *c = json_string_value(json_object_get(v, "capacity"));
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s=%s", n++ ? "," : "", key + strlen(NVIDIA_PREFIX),
                 a   ? a
                 : c ? c
                     : "?");
    }
    if (!n) snprintf(buf, size, "<none>");
}

static const char *plugin_cell(const json_t *n)
{
    const json_t *p = kube_path(n, "operator", "device_plugin", NULL);
    return json_is_object(p) ? kube_str(p, "status") : "<none>";
}

#define COLS 14
static void render_table(const json_t *report, FILE *out)
{
    an_table *t = an_table_new(COLS);
    if (!t) return;
    const char *head[COLS] = {_("NAME"),
                              _("STATUS"),
                              _("CAPACITY"),
                              _("ALLOCATABLE"),
                              _("REQUESTED"),
                              _("FREE"),
                              _("OTHER GPU RESOURCES"),
                              _("PRODUCT"),
                              _("MEMORY"),
                              _("COUNT"),
                              _("REPLICAS"),
                              _("SHARING"),
                              _("DRIVER"),
                              _("DEVICE PLUGIN")};
    an_table_row(t, head);
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(report, "nodes"), i, n)
    {
        const json_t *l = json_object_get(n, "labels");
        char others[512];
        others_text(json_object_get(n, "other_resources"), others, sizeof others);
        const char *row[COLS] = {
            kube_str(n, "name"),
            kube_str(n, "status"),
            or_none(json_object_get(n, "capacity")),
            or_none(json_object_get(n, "allocatable")),
            kube_str(n, "requested"),
            kube_str(n, "free"),
            others,
            or_none(json_object_get(l, "product")),
            or_none(json_object_get(l, "memory")),
            or_none(json_object_get(l, "count")),
            or_none(json_object_get(l, "replicas")),
            or_none(json_object_get(l, "sharing_strategy")),
            or_none(json_object_get(l, "driver_version")),
            plugin_cell(n),
        };
        an_table_row(t, row);
    }
    an_table_print(t, out, 0, "");
    an_table_free(t);
}

/* The GPU Operator's word on each node that has any: gates not at true,
 * the MIG layout and its state, the driver upgrade state. */
static void render_operator(const json_t *report, FILE *out)
{
    bool header = false;
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(report, "nodes"), i, n)
    {
        const json_t *labels = kube_path(n, "operator", "labels", NULL);
        char line[1024] = "";
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)labels, key, v)
        {
            const char *value = json_string_value(v);
            if (starts_with(key, GATE_PREFIX) && strcmp(value, "true") == 0) continue;
            size_t len = strlen(line);
            snprintf(line + len, sizeof line - len, " %s=%s", key + strlen(NVIDIA_PREFIX), value);
        }
        if (!*line) continue;
        if (!header)
            fprintf(out, "\n%s\n",
                    _("GPU Operator (gates not true, MIG and driver "
                      "states):"));
        header = true;
        fprintf(out, "  %s:%s\n", kube_str(n, "name"), line);
    }
}

static void render_flags(const json_t *report, FILE *out)
{
    size_t i, j;
    const json_t *n, *f;
    bool header = false;
    json_array_foreach(json_object_get(report, "nodes"), i, n)
    {
        json_array_foreach(json_object_get(n, "flags"), j, f)
        {
            if (!header) fprintf(out, "\n%s\n", _("Flags:"));
            header = true;
            char msg[1024];
            an_format_args(msg, sizeof msg, flag_format(kube_str(f, "code"), true),
                           json_object_get(f, "args"));
            fprintf(out, "  %s: %s (%s): %s\n", kube_str(n, "name"), kube_str(f, "code"),
                    kube_str_is(f, "severity", "error") ? _("error") : _("warning"), msg);
        }
    }
}

static void render_text(const json_t *report, FILE *out)
{
    render_verdict(report, out);
    fputc('\n', out);
    render_table(report, out);
    render_operator(report, out);
    render_flags(report, out);
    an_render_tail(report, out);
}

char *an_nodes_render(const json_t *report, an_format fmt)
{
    return an_render(report, fmt, render_text, render_lab);
}

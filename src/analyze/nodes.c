/* Helpers the analyzers share (pod requests, node table, aligned tables),
 * then the `gpuop nodes` analyzer (see nodes.h). */
#include "analyze/nodes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/pod.h"
#include "kube/pod_requests.h"
#include "util/i18n.h"
#include "util/hash.h"

#define DRIVER_LABEL "nvidia.com/cuda.driver-version.full"

/* ---- objects ---- */

const char *an_obj_ref(const json_t *obj, char *buf, size_t size)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *ns = kube_str(meta, "namespace");
    snprintf(buf, size, "%s%s%s", ns, *ns ? "/" : "", kube_str(meta, "name"));
    return buf;
}

static const char *first_of(const char *a, const char *b)
{
    return *a ? a : b;
}

void an_event_read(const json_t *event, an_event_view *v)
{
    v->object = json_object_get(event, "involvedObject");
    if (!v->object) v->object = json_object_get(event, "regarding");
    v->reason = kube_str(event, "reason");
    v->message = first_of(kube_str(event, "message"), kube_str(event, "note"));
    v->type = kube_str(event, "type");
    v->component = first_of(
        kube_str(json_object_get(event, "source"), "component"),
        first_of(kube_str(event, "reportingComponent"), kube_str(event, "reportingController")));
    const char *series = kube_str(json_object_get(event, "series"), "lastObservedTime");
    v->time = first_of(kube_str(event, "lastTimestamp"),
                       first_of(series, first_of(kube_str(event, "eventTime"),
                                                 kube_str(event, "firstTimestamp"))));
}

const char *const an_pod_fields[] = {
    "kind",
    "apiVersion",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.ownerReferences",
    "metadata.deletionTimestamp",
    "metadata.creationTimestamp",
    "metadata.generation",
    "spec.nodeName",
    "spec.containers.name",
    "spec.containers.image",
    "spec.containers.resources",
    "spec.containers.restartPolicy",
    "spec.containers.ports",
    "spec.initContainers.name",
    "spec.initContainers.image",
    "spec.initContainers.resources",
    "spec.initContainers.restartPolicy",
    "spec.overhead",
    "spec.runtimeClassName",
    "spec.affinity",
    "spec.nodeSelector",
    "spec.tolerations",
    "spec.schedulerName",
    "spec.schedulingGates",
    "spec.priority",
    "spec.restartPolicy",
    "status",
    NULL,
};

/* ---- events kept ---- */

int an_event_log_add(an_event_log *log, const char *object, const an_event_view *ev)
{
    for (size_t i = 0; i < log->n; i++) {
        an_kept_event *k = &log->v[i];
        if (strcmp(k->object, object) || strcmp(k->reason, ev->reason)) continue;
        if (strcmp(ev->time, k->time) < 0) return 0;
        char *t = strdup(ev->time), *m = strdup(ev->message);
        if (!t || !m) {
            free(t);
            free(m);
            return -1;
        }
        free(k->time);
        free(k->message);
        k->time = t;
        k->message = m;
        return 0;
    }
    if (log->n == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 8;
        an_kept_event *v = realloc(log->v, cap * sizeof *v);
        if (!v) return -1;
        log->v = v;
        log->cap = cap;
    }
    an_kept_event *k = &log->v[log->n++];
    k->object = strdup(object);
    k->reason = strdup(ev->reason);
    k->message = strdup(ev->message);
    k->time = strdup(ev->time);
    return k->object && k->reason && k->message && k->time ? 0 : -1;
}

const char *an_event_log_message(const an_event_log *log, const char *object, const char *reason)
{
    for (size_t i = 0; i < log->n; i++)
        if (strcmp(log->v[i].object, object) == 0 && strcmp(log->v[i].reason, reason) == 0)
            return log->v[i].message;
    return NULL;
}

static int by_object_reason(const void *x, const void *y)
{
    const an_kept_event *a = x, *b = y;
    int c = strcmp(a->object, b->object);
    return c ? c : strcmp(a->reason, b->reason);
}

void an_event_log_sort(an_event_log *log)
{
    if (log->n) qsort(log->v, log->n, sizeof *log->v, by_object_reason);
}

void an_event_log_free(an_event_log *log)
{
    for (size_t i = 0; i < log->n; i++) {
        an_kept_event *k = &log->v[i];
        free(k->object);
        free(k->reason);
        free(k->message);
        free(k->time);
    }
    free(log->v);
    memset(log, 0, sizeof *log);
}

/* ---- pod requests ---- */

static void add_name(const char **names, size_t *n, size_t max, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0) return;
    if (*n < max) names[(*n)++] = name;
}

static void add_list_names(const json_t *list, const char **names, size_t *n, size_t max)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)list, key, v) add_name(names, n, max, key);
}

void an_spec_resource_names(const json_t *podspec, const char **names, size_t *n, size_t max)
{
    static const char *const groups[] = {"containers", "initContainers"};
    for (size_t g = 0; g < 2; g++) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(podspec, groups[g]), i, c)
        {
            add_list_names(kube_path(c, "resources", "requests", NULL), names, n, max);
            add_list_names(kube_path(c, "resources", "limits", NULL), names, n, max);
        }
    }
    add_list_names(json_object_get(podspec, "overhead"), names, n, max);
}

int an_pod_requests(const json_t *pod, const char *const *names, size_t n, kube_quantity *out,
                    gp_error *err)
{
    if (kube_pod_requests_of(pod, names, n, out, err) == 0) return 0;
    char ref[320];
    gp_error e = *err;
    gp_error_set(err, NULL, 0, 0, "pod %s: %s", an_obj_ref(pod, ref, sizeof ref), e.text);
    return -1;
}

/* ---- quantities for people ---- */

static bool is_bytes(const char *resource)
{
    return strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
           strncmp(resource, "hugepages-", 10) == 0;
}

void an_quantity_human(const char *resource, const kube_quantity *q,
                       char buf[KUBE_QUANTITY_FORMAT_MAX])
{
    static const char *const units[] = {"Ki", "Mi", "Gi", "Ti", "Pi"};
    int64_t v = kube_quantity_to_units(q);
    if (!is_bytes(resource) || (v < 1024 && v > -1024)) {
        kube_quantity_format(q, buf);
        return;
    }
    double x = (double)v;
    size_t u = 0;
    for (x /= 1024; (x >= 1024 || x <= -1024) && u + 1 < sizeof units / sizeof *units; u++)
        x /= 1024;
    snprintf(buf, KUBE_QUANTITY_FORMAT_MAX, "%.1f", x);
    size_t len = strlen(buf);
    if (len > 2 && strcmp(buf + len - 2, ".0") == 0) buf[len - 2] = '\0';
    strcat(buf, units[u]);
}

/* ---- node table ---- */

struct an_node_table {
    an_node_entry **v; /* arrival order */
    size_t n, cap;
    size_t *slots; /* open addressing: index + 1, 0 = empty */
    size_t nslots;
    size_t nsums;
};

static uint64_t hash_name(const char *s)
{
    return gp_hash_str(GP_HASH_SEED, s);
}

an_node_table *an_node_table_new(size_t nsums)
{
    an_node_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->nsums = nsums;
    t->nslots = 64;
    t->slots = calloc(t->nslots, sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    return t;
}

static size_t *slot_for(const an_node_table *t, const char *name)
{
    size_t i = (size_t)hash_name(name) & (t->nslots - 1);
    while (t->slots[i] && strcmp(t->v[t->slots[i] - 1]->name, name) != 0)
        i = (i + 1) & (t->nslots - 1);
    return &t->slots[i];
}

an_node_entry *an_node_table_find(const an_node_table *t, const char *name)
{
    size_t s = *slot_for(t, name);
    return s ? t->v[s - 1] : NULL;
}

static int rehash(an_node_table *t)
{
    size_t *old = t->slots;
    t->slots = calloc(t->nslots * 2, sizeof *t->slots);
    if (!t->slots) {
        t->slots = old;
        return -1;
    }
    t->nslots *= 2;
    free(old);
    for (size_t i = 0; i < t->n; i++)
        *slot_for(t, t->v[i]->name) = i + 1;
    return 0;
}

static an_node_entry *entry_new(const char *name, size_t nsums)
{
    an_node_entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->name = strdup(name);
    e->sums = calloc(nsums ? nsums : 1, sizeof *e->sums);
    if (!e->name || !e->sums) {
        free(e->name);
        free(e->sums);
        free(e);
        return NULL;
    }
    return e;
}

an_node_entry *an_node_table_get(an_node_table *t, const char *name)
{
    an_node_entry *e = an_node_table_find(t, name);
    if (e) return e;
    if ((t->n + 1) * 2 > t->nslots && rehash(t) < 0) return NULL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        an_node_entry **v = realloc(t->v, cap * sizeof *v);
        if (!v) return NULL;
        t->v = v;
        t->cap = cap;
    }
    e = entry_new(name, t->nsums);
    if (!e) return NULL;
    t->v[t->n++] = e;
    *slot_for(t, name) = t->n;
    return e;
}

static int by_entry_name(const void *a, const void *b)
{
    return strcmp((*(an_node_entry *const *)a)->name, (*(an_node_entry *const *)b)->name);
}

an_node_entry **an_node_table_sorted(const an_node_table *t, size_t *n)
{
    an_node_entry **v = malloc((t->n ? t->n : 1) * sizeof *v);
    if (!v) return NULL;
    if (t->n) memcpy(v, t->v, t->n * sizeof *v); /* t->v is NULL while empty */
    qsort(v, t->n, sizeof *v, by_entry_name);
    *n = t->n;
    return v;
}

void an_node_table_free(an_node_table *t, void (*free_user)(void *))
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        if (free_user && t->v[i]->user) free_user(t->v[i]->user);
        free(t->v[i]->name);
        free(t->v[i]->sums);
        free(t->v[i]);
    }
    free(t->v);
    free(t->slots);
    free(t);
}

/* ---- aligned tables ---- */

struct an_table {
    size_t ncols, nrows, cap;
    char **cells; /* nrows * ncols */
};

an_table *an_table_new(size_t ncols)
{
    an_table *t = calloc(1, sizeof *t);
    if (t) t->ncols = ncols;
    return t;
}

int an_table_row(an_table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **v = realloc(t->cells, cap * t->ncols * sizeof *v);
        if (!v) return -1;
        t->cells = v;
        t->cap = cap;
    }
    char **row = t->cells + t->nrows * t->ncols;
    for (size_t c = 0; c < t->ncols; c++) {
        row[c] = strdup(cells[c] ? cells[c] : "");
        if (!row[c]) {
            for (size_t k = 0; k < c; k++)
                free(row[k]);
            return -1;
        }
    }
    t->nrows++;
    return 0;
}

/* Width as Go's tabwriter counts it: UTF-8 code points. */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

void an_table_print(const an_table *t, FILE *out, size_t minwidth, const char *indent)
{
    size_t *width = calloc(t->ncols ? t->ncols : 1, sizeof *width);
    if (!width) return;
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c + 1 < t->ncols; c++) {
            size_t w = text_width(t->cells[r * t->ncols + c]) + 3;
            if (w < minwidth) w = minwidth;
            if (w > width[c]) width[c] = w;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(indent ? indent : "", out);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            fputs(cell, out);
            if (c + 1 < t->ncols) fprintf(out, "%*s", (int)(width[c] - text_width(cell)), "");
        }
        fputc('\n', out);
    }
    free(width);
}

void an_table_free(an_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}

void an_render_json(const json_t *report, FILE *out)
{
    json_dumpf(report, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
}

void an_render_tail(const json_t *report, FILE *out)
{
    size_t i;
    const json_t *line;
    json_array_foreach(json_object_get(report, "warnings"), i, line)
    {
        fprintf(out, "%s: %s\n", _("warning"), json_string_value(line));
    }
    if (!json_array_size(json_object_get(report, "evidence"))) return;
    fprintf(out, "\n%s\n", _("Evidence:"));
    json_array_foreach(json_object_get(report, "evidence"), i, line)
    {
        fprintf(out, "  %s\n", json_string_value(line));
    }
}

char *an_render(const json_t *report, an_format fmt, an_writer text, an_writer lab)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) return NULL;
    if (fmt == AN_JSON)
        an_render_json(report, out);
    else if (fmt == AN_LAB)
        lab(report, out);
    else
        text(report, out);
    if (fclose(out) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- the nodes analyzer ---- */

enum { L_PRODUCT, L_MEMORY, L_COUNT, L_REPLICAS, L_SHARING, L_DRIVER, L_N };
static const char *const label_keys[L_N] = {
    "nvidia.com/gpu.product",  "nvidia.com/gpu.memory",           "nvidia.com/gpu.count",
    "nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy", DRIVER_LABEL,
};
static const char *const label_names[L_N] = {"product",  "memory",           "count",
                                             "replicas", "sharing_strategy", "driver_version"};

typedef struct node_info {
    char ready[16];
    bool unschedulable;
    char *capacity, *allocatable; /* as the API wrote them; NULL = absent */
    char *labels[L_N];
    bool gpu_labels; /* hardware or GFD says a GPU is there */
    size_t pods;     /* non-terminated pods requesting the resource */
} node_info;

struct an_nodes {
    char *resource;
    an_node_table *nodes;
    json_t *warnings;
    bool oom;
};

static void node_info_free(void *p)
{
    node_info *ni = p;
    free(ni->capacity);
    free(ni->allocatable);
    for (size_t i = 0; i < L_N; i++)
        free(ni->labels[i]);
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

/* A resource list value as text (a bare JSON number is accepted too). */
static char *resource_text(const json_t *list, const char *name)
{
    const json_t *v = json_object_get(list, name);
    if (!v) return NULL;
    if (json_is_string(v)) return strdup(json_string_value(v));
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
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
    snprintf(ni->ready, sizeof ni->ready, "%s", kube_str(kube_condition(node, "Ready"), "status"));
    ni->unschedulable = json_is_true(kube_path(node, "spec", "unschedulable", NULL));
    const json_t *status = json_object_get(node, "status");
    ni->capacity = resource_text(json_object_get(status, "capacity"), b->resource);
    ni->allocatable = resource_text(json_object_get(status, "allocatable"), b->resource);
    const json_t *labels = json_object_get(meta, "labels");
    for (size_t i = 0; i < L_N; i++)
        ni->labels[i] = dup_or_null(json_string_value(json_object_get(labels, label_keys[i])));
    ni->gpu_labels = strcmp(kube_str(labels, "nvidia.com/gpu.present"), "true") == 0 ||
                     ni->labels[L_PRODUCT] || ni->labels[L_COUNT];
}

void an_nodes_add_pod(an_nodes *b, const json_t *pod)
{
    const char *node = kube_str(json_object_get(pod, "spec"), "nodeName");
    if (!*node || kube_pod_terminal(pod)) return;
    const char *names[1] = {b->resource};
    kube_quantity req;
    gp_error err = {0};
    if (an_pod_requests(pod, names, 1, &req, &err) < 0) {
        json_array_append_new(b->warnings, json_string(err.text));
        return;
    }
    if (kube_quantity_is_zero(&req)) return;
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

/* The sentence for a flag code: English for the report, translated for text. */
static const char *flag_format(const char *code, bool translate)
{
    static const struct {
        const char *code, *format;
    } texts[] = {
        {"gpus-lost", N_("Ready, but %s reads 0: its device plugin registered here and is gone "
                         "or unhealthy")},
        {"never-registered", N_("GPU labels present, but %s was never registered: no device "
                                "plugin has advertised it here")},
        {"unhealthy-devices", N_("%s capacity is above allocatable: some devices are marked "
                                 "unhealthy")},
        {"driver-label-missing", N_("label nvidia.com/cuda.driver-version.full is missing while "
                                    "%s pods can still land here: a node that rebooted without "
                                    "its driver would take them")},
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        if (strcmp(texts[i].code, code) == 0)
            return translate ? _(texts[i].format) : texts[i].format;
    return "%s";
}

static void flag(json_t *flags, const char *code, const char *resource)
{
    char msg[512];
    snprintf(msg, sizeof msg, flag_format(code, false), resource);
    json_array_append_new(flags, json_pack("{s:s, s:s}", "code", code, "message", msg));
}

static json_t *node_flags(const an_nodes *b, const node_info *ni)
{
    json_t *flags = json_array();
    kube_quantity cap = quantity_or_zero(ni->capacity), alloc = quantity_or_zero(ni->allocatable);
    bool zero = (ni->allocatable && kube_quantity_is_zero(&alloc)) ||
                (ni->capacity && kube_quantity_is_zero(&cap));
    if (strcmp(ni->ready, "True") == 0 && zero) flag(flags, "gpus-lost", b->resource);
    if (!ni->allocatable && !ni->capacity && ni->gpu_labels)
        flag(flags, "never-registered", b->resource);
    if (ni->capacity && ni->allocatable && kube_quantity_cmp(&cap, &alloc) > 0 &&
        !kube_quantity_is_zero(&alloc))
        flag(flags, "unhealthy-devices", b->resource);
    if (!ni->labels[L_DRIVER] && !kube_quantity_is_zero(&alloc) && !ni->unschedulable)
        flag(flags, "driver-label-missing", b->resource);
    return flags;
}

static json_t *text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static const char *advertisement(const node_info *ni)
{
    const char *text = ni->allocatable ? ni->allocatable : ni->capacity;
    if (!text) return "absent";
    kube_quantity q = quantity_or_zero(text);
    return kube_quantity_is_zero(&q) ? "zero" : "advertised";
}

/* "node NAME .path = value" lines for a flagged node. */
static void node_evidence(const an_nodes *b, const char *name, const node_info *ni, json_t *out)
{
    char line[1024];
    snprintf(line, sizeof line, "node %s .status.conditions[Ready].status = %s", name,
             *ni->ready ? ni->ready : "<absent>");
    json_array_append_new(out, json_string(line));
    snprintf(line, sizeof line, "node %s .status.capacity.%s = %s", name, b->resource,
             ni->capacity ? ni->capacity : "<absent>");
    json_array_append_new(out, json_string(line));
    snprintf(line, sizeof line, "node %s .status.allocatable.%s = %s", name, b->resource,
             ni->allocatable ? ni->allocatable : "<absent>");
    json_array_append_new(out, json_string(line));
    snprintf(line, sizeof line, "node %s .metadata.labels.%s = %s", name, DRIVER_LABEL,
             ni->labels[L_DRIVER] ? ni->labels[L_DRIVER] : "<absent>");
    json_array_append_new(out, json_string(line));
}

static json_t *node_report(const an_nodes *b, const an_node_entry *e, const node_info *ni,
                           kube_quantity *free_out)
{
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity alloc = quantity_or_zero(ni->allocatable), free_q;
    gp_error err;
    if (kube_quantity_sub(&alloc, &e->sums[0], &free_q, &err) < 0) free_q = (kube_quantity){0};
    *free_out = free_q;
    json_t *labels = json_object();
    for (size_t i = 0; i < L_N; i++)
        json_object_set_new(labels, label_names[i], text_or_null(ni->labels[i]));
    json_t *n = json_pack("{s:s, s:s, s:b, s:b, s:o, s:o, s:s}", "name", e->name, "ready",
                          ni->ready, "unschedulable", ni->unschedulable, "seen", e->seen,
                          "capacity", text_or_null(ni->capacity), "allocatable",
                          text_or_null(ni->allocatable), "advertisement", advertisement(ni));
    if (!n) return NULL;
    kube_quantity_format(&e->sums[0], buf);
    json_object_set_new(n, "requested", json_string(buf));
    kube_quantity_format(&free_q, buf);
    json_object_set_new(n, "free", json_string(buf));
    json_object_set_new(n, "pods", json_integer((json_int_t)ni->pods));
    json_object_set_new(n, "labels", labels);
    json_object_set_new(n, "flags", node_flags(b, ni));
    return n;
}

json_t *an_nodes_finish(an_nodes *b, gp_error *err)
{
    size_t n = 0;
    an_node_entry **sorted = b->oom ? NULL : an_node_table_sorted(b->nodes, &n);
    json_t *nodes = json_array(), *evidence = json_array();
    kube_quantity total_alloc = {0}, total_req = {0}, total_free = {0};
    size_t advertising = 0, flagged = 0;
    gp_error qerr;
    for (size_t i = 0; sorted && nodes && i < n; i++) {
        node_info *ni = info_of(b, sorted[i]);
        if (!ni) break;
        kube_quantity free_q, alloc = quantity_or_zero(ni->allocatable);
        json_t *node = node_report(b, sorted[i], ni, &free_q);
        if (!node) {
            b->oom = true;
            break;
        }
        if (!kube_quantity_is_zero(&alloc)) advertising++;
        if (json_array_size(json_object_get(node, "flags"))) {
            flagged++;
            node_evidence(b, sorted[i]->name, ni, evidence);
        }
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
            : json_pack("{s:s, s:o, s:{s:I, s:I, s:s, s:s, s:s, s:I}, "
                        "s:O, s:o}",
                        "resource", b->resource, "nodes", nodes, "summary", "nodes", (json_int_t)n,
                        "advertising", (json_int_t)advertising, "allocatable", a, "requested", r,
                        "free", f, "flagged", (json_int_t)flagged, "warnings", b->warnings,
                        "evidence", evidence);
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
    if (adv == 0)
        fprintf(out, _("no node advertises %s (%lld nodes)"), res, (long long)nodes);
    else
        fprintf(out, _("%lld of %lld nodes advertise %s: %s allocatable, %s requested, %s free"),
                (long long)adv, (long long)nodes, res, kube_str(s, "allocatable"),
                kube_str(s, "requested"), kube_str(s, "free"));
    if (flagged) fprintf(out, _("; %lld flagged"), (long long)flagged);
    fputc('\n', out);
}

static void render_table(const json_t *report, FILE *out)
{
    an_table *t = an_table_new(12);
    if (!t) return;
    const char *head[12] = {_("NAME"),      _("READY"),    _("CAPACITY"), _("ALLOCATABLE"),
                            _("REQUESTED"), _("FREE"),     _("PRODUCT"),  _("MEMORY"),
                            _("COUNT"),     _("REPLICAS"), _("SHARING"),  _("DRIVER")};
    an_table_row(t, head);
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(report, "nodes"), i, n)
    {
        const json_t *l = json_object_get(n, "labels");
        const char *row[12] = {
            kube_str(n, "name"),
            *kube_str(n, "ready") ? kube_str(n, "ready") : "<none>",
            or_none(json_object_get(n, "capacity")),
            or_none(json_object_get(n, "allocatable")),
            kube_str(n, "requested"),
            kube_str(n, "free"),
            or_none(json_object_get(l, "product")),
            or_none(json_object_get(l, "memory")),
            or_none(json_object_get(l, "count")),
            or_none(json_object_get(l, "replicas")),
            or_none(json_object_get(l, "sharing_strategy")),
            or_none(json_object_get(l, "driver_version")),
        };
        an_table_row(t, row);
    }
    an_table_print(t, out, 0, "");
    an_table_free(t);
}

static void render_text(const json_t *report, FILE *out)
{
    render_verdict(report, out);
    fputc('\n', out);
    render_table(report, out);
    size_t i, j;
    const json_t *n, *f;
    bool header = false;
    json_array_foreach(json_object_get(report, "nodes"), i, n)
    {
        json_array_foreach(json_object_get(n, "flags"), j, f)
        {
            if (!header) fprintf(out, "\n%s\n", _("Flags:"));
            header = true;
            fprintf(out, "  %s: %s: ", kube_str(n, "name"), kube_str(f, "code"));
            fprintf(out, flag_format(kube_str(f, "code"), true), kube_str(report, "resource"));
            fputc('\n', out);
        }
    }
    an_render_tail(report, out);
}

char *an_nodes_render(const json_t *report, an_format fmt)
{
    return an_render(report, fmt, render_text, render_lab);
}

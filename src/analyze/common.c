/* Helpers the analyzers share (see common.h). */
#include "analyze/common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/pod.h"
#include "kube/pod_requests.h"
#include "util/i18n.h"
#include "util/hash.h"
#include "util/msg.h"

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

/* ---- device plugin pods ---- */

#define PLUGIN_MARK "nvidia-device-plugin"

bool an_is_device_plugin_pod(const json_t *pod)
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

/* ---- taints and tolerations as kubectl prints them ---- */

void an_taint_text(const json_t *taint, char *buf, size_t size)
{
    const char *value = kube_str(taint, "value");
    snprintf(buf, size, "%s%s%s:%s", kube_str(taint, "key"), *value ? "=" : "", value,
             kube_str(taint, "effect"));
}

void an_toleration_text(const json_t *t, char *buf, size_t size)
{
    const char *key = kube_str(t, "key"), *value = kube_str(t, "value");
    const char *effect = kube_str(t, "effect");
    int n = snprintf(buf, size, "%s%s%s%s%s", key, *value ? "=" : "", value, *effect ? ":" : "",
                     effect);
    if (kube_str_is(t, "operator", "Exists") && !*value && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "%sop=Exists", *key || *effect ? " " : "");
    const json_t *secs = json_object_get(t, "tolerationSeconds");
    if (json_is_integer(secs) && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " for %llds", (long long)json_integer_value(secs));
}

void an_format_args(char *buf, size_t size, const char *fmt, const json_t *args)
{
    const char *a[4];
    for (size_t i = 0; i < 4; i++) {
        const char *s = json_string_value(json_array_get(args, i));
        a[i] = s ? s : "";
    }
    /* Arguments past the format's last %s are ignored (C11 7.21.6.1). */
    gp_msg_snprintf(buf, size, fmt, a[0], a[1], a[2], a[3]);
}

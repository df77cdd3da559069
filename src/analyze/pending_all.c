/* `why-pending --all`: every Pending GPU pod, grouped by cause (see
 * why_pending.h). The cluster is read once; each target gets the report
 * one pod would get. */
#include <stdlib.h>
#include <string.h>

#include "analyze/why_pending.h"
#include "analyze/why_pending_internal.h"
#include "kube/json.h"
#include "kube/pod.h"
#include "util/i18n.h"

#define POD_LIST_MAX 10 /* pods a text group names */

struct an_pending_all {
    wp_cluster c;
    wp_target *targets;
    size_t n, cap;
};

an_pending_all *an_pending_all_new(gp_error *err)
{
    an_pending_all *b = calloc(1, sizeof *b);
    if (!b || wp_cluster_init(&b->c, true) < 0) {
        an_pending_all_free(b);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    return b;
}

void an_pending_all_add_node(an_pending_all *b, const json_t *node)
{
    wp_cluster_add_node(&b->c, node);
}

/* Pending and asking for an nvidia.com/ resource. */
static bool is_target(const json_t *pod)
{
    if (!kube_str_is(kube_obj(pod, "status"), "phase", "Pending") || kube_deleting(pod))
        return false;
    const char *names[WP_MAX_RES];
    size_t n = 0;
    an_spec_resource_names(kube_obj(pod, "spec"), names, &n, WP_MAX_RES);
    for (size_t i = 0; i < n; i++)
        if (strncmp(names[i], "nvidia.com/", 11) == 0) return true;
    return false;
}

void an_pending_all_add_pod(an_pending_all *b, const json_t *pod)
{
    if (!is_target(pod)) {
        wp_cluster_add_pod(&b->c, pod, NULL);
        return;
    }
    if (an_is_device_plugin_pod(pod)) wp_cluster_add_pod(&b->c, pod, NULL);
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        wp_target *v = realloc(b->targets, cap * sizeof *v);
        if (!v) {
            b->c.oom = true;
            return;
        }
        b->targets = v;
        b->cap = cap;
    }
    gp_error err = {0};
    if (wp_target_init(&b->targets[b->n], &b->c, pod, &err) < 0) {
        wp_target_free(&b->targets[b->n]);
        json_array_append_new(b->c.warnings, json_string(err.text));
        return;
    }
    b->n++;
}

void an_pending_all_add_event(an_pending_all *b, const json_t *event)
{
    wp_cluster_add_event(&b->c, event);
}

void an_pending_all_add_runtimeclass(an_pending_all *b, const json_t *runtimeclass)
{
    wp_cluster_add_runtimeclass(&b->c, runtimeclass);
}

static int by_target_ref(const void *x, const void *y)
{
    return strcmp(((const wp_target *)x)->ref, ((const wp_target *)y)->ref);
}

static int by_group_size(const void *x, const void *y)
{
    const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
    json_int_t ca = json_integer_value(json_object_get(a, "count"));
    json_int_t cb = json_integer_value(json_object_get(b, "count"));
    if (ca != cb) return ca > cb ? -1 : 1;
    int c = strcmp(kube_str(a, "layer"), kube_str(b, "layer"));
    return c ? c : strcmp(kube_str(a, "blocker"), kube_str(b, "blocker"));
}

/* The group of (layer, blocker, resource), made when missing. */
static json_t *group_of(json_t *groups, const json_t *report)
{
    const char *layer = kube_str(report, "layer");
    const char *blocker = kube_str(kube_obj(report, "scheduler"), "blocker");
    const char *resource = kube_str(report, "resource");
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g)
    {
        if (kube_str_is(g, "layer", layer) && kube_str_is(g, "blocker", blocker) &&
            kube_str_is(g, "resource", resource))
            return g;
    }
    g = json_pack("{s:s, s:s, s:s, s:I, s:O, s:[], s:O}", "layer", layer, "blocker", blocker,
                  "resource", resource, "count", (json_int_t)0, "verdict",
                  json_object_get(report, "verdict"), "pods", "next",
                  json_object_get(report, "next"));
    json_array_append_new(groups, g);
    return g;
}

static json_t *sorted_groups(json_t *groups)
{
    size_t n = json_array_size(groups);
    json_t **v = calloc(n ? n : 1, sizeof *v);
    json_t *out = json_array();
    if (!v) return out;
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(groups, i);
    qsort(v, n, sizeof *v, by_group_size);
    for (size_t i = 0; i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    return out;
}

json_t *an_pending_all_finish(an_pending_all *b, gp_error *err)
{
    size_t n = 0;
    an_node_entry **nodes = wp_cluster_settle(&b->c, &n);
    if (!nodes) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    if (b->n) qsort(b->targets, b->n, sizeof *b->targets, by_target_ref);
    json_t *groups = json_array(), *reports = json_array();
    for (size_t i = 0; i < b->n; i++) {
        json_t *r = wp_report(&b->c, &b->targets[i], nodes, n);
        if (!r) {
            b->c.oom = true;
            break;
        }
        json_t *g = group_of(groups, r);
        json_object_set_new(g, "count",
                            json_integer(json_integer_value(json_object_get(g, "count")) + 1));
        json_array_append_new(json_object_get(g, "pods"), json_string(b->targets[i].ref));
        json_array_append_new(
            reports, json_pack("{s:s, s:O, s:s, s:O, s:O}", "pod", b->targets[i].ref, "layer",
                               json_object_get(r, "layer"), "blocker",
                               kube_str(kube_obj(r, "scheduler"), "blocker"), "verdict",
                               json_object_get(r, "verdict"), "next", json_object_get(r, "next")));
        json_decref(r);
    }
    free(nodes);
    json_t *report = NULL;
    if (!b->c.oom)
        report = json_pack("{s:s, s:I, s:o, s:o, s:O}", "schema", AN_SCHEMA_PENDING_ALL, "pods",
                           (json_int_t)b->n, "groups", sorted_groups(groups), "reports", reports,
                           "warnings", b->c.warnings);
    else
        json_decref(reports);
    json_decref(groups);
    if (!report) gp_error_set(err, NULL, 0, 0, "out of memory");
    return report;
}

void an_pending_all_free(an_pending_all *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->n; i++)
        wp_target_free(&b->targets[i]);
    free(b->targets);
    wp_cluster_free(&b->c);
    free(b);
}

/* ---- rendering ---- */

static void render_text(const json_t *r, FILE *out)
{
    json_int_t pods = json_integer_value(json_object_get(r, "pods"));
    const json_t *groups = json_object_get(r, "groups");
    if (!pods) {
        fprintf(out, "%s\n", _("no Pending pod asks for a GPU"));
        an_render_tail(r, out);
        return;
    }
    fprintf(out, _("Pending GPU pods: %lld; causes: %zu\n"), (long long)pods,
            json_array_size(groups));
    size_t i, j;
    const json_t *g, *p;
    json_array_foreach(groups, i, g)
    {
        fprintf(out, "\n%s (%s), %s %lld\n", kube_str(g, "layer"), kube_str(g, "blocker"),
                _("pods:"), (long long)json_integer_value(json_object_get(g, "count")));
        fprintf(out, "  %s\n", kube_str(g, "verdict"));
        json_array_foreach(json_object_get(g, "pods"), j, p)
        {
            if (j == POD_LIST_MAX) {
                fprintf(out, _("    ... and %zu more\n"),
                        json_array_size(json_object_get(g, "pods")) - POD_LIST_MAX);
                break;
            }
            fprintf(out, "    %s\n", json_string_value(p));
        }
        fprintf(out, "  %s\n", _("Next:"));
        wp_render_next(g, out, "    ");
    }
    an_render_tail(r, out);
}

static void render_lab(const json_t *r, FILE *out)
{
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(r, "groups"), i, g)
    {
        fprintf(out, "LAYER=%s BLOCKER=%s PODS=%lld\n", kube_str(g, "layer"),
                kube_str(g, "blocker"), (long long)json_integer_value(json_object_get(g, "count")));
    }
}

char *an_pending_all_render(const json_t *report, an_format fmt)
{
    return an_render(report, fmt, render_text, render_lab);
}

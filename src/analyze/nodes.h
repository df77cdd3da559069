/* `gpuop nodes`: what each node advertises of one extended resource
 * (default nvidia.com/gpu), what pods on it request, its GPU Feature
 * Discovery labels and readiness, and the nodes to worry about
 * (gpu-node-facts.md 1.6 and 5).
 *
 *   an_nodes *b = an_nodes_new("nvidia.com/gpu", &err);
 *   ... an_nodes_add_node(b, node) / an_nodes_add_pod(b, pod), any order ...
 *   json_t *report = an_nodes_finish(b, &err);
 *   char *text = an_nodes_render(report, AN_TEXT);
 *
 * The builder keeps per node only its summary and the sum of requests; a
 * pod is read once and forgotten.
 *
 * Report (`-o json`):
 *   {"resource": "nvidia.com/gpu",
 *    "nodes": [{"name", "ready" ("True"|"False"|"Unknown"|""),
 *               "unschedulable": bool, "seen": bool (false: only pods named it),
 *               "capacity", "allocatable": quantity text or null (absent),
 *               "advertisement": "advertised"|"zero"|"absent",
 *               "requested", "free": quantity text, "pods": pods requesting it,
 *               "labels": {"product","memory","count","replicas",
 *                          "sharing_strategy","driver_version"} (null = absent),
 *               "flags": [{"code", "message"}]}],        sorted by name
 *    "summary": {"nodes", "advertising", "allocatable", "requested", "free",
 *                "flagged"},
 *    "warnings": ["pod gpu-lab/x: ..."]}
 * Flag codes: gpus-lost (Ready, the resource reads 0: the plugin registered
 * and is gone), never-registered (GPU labels but the resource is absent),
 * unhealthy-devices (capacity above allocatable), driver-label-missing
 * (nvidia.com/cuda.driver-version.full absent while the node still takes
 * GPU pods: allocatable above 0 and not cordoned).
 *
 * Renderings: AN_TEXT a verdict line, the table, the flags and the evidence;
 * AN_LAB the table of lab step 6 as `kubectl get nodes -o custom-columns=
 * NAME:.metadata.name,GPU:.status.allocatable.nvidia\.com/gpu` prints it. */
#ifndef GPUOP_ANALYZE_NODES_H
#define GPUOP_ANALYZE_NODES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "kube/quantity.h"
#include "util/error.h"

typedef struct an_nodes an_nodes;

/* resource NULL means nvidia.com/gpu. */
an_nodes *an_nodes_new(const char *resource, gp_error *err);
void an_nodes_add_node(an_nodes *b, const json_t *node);
void an_nodes_add_pod(an_nodes *b, const json_t *pod);
/* NULL with err set when memory ran out while adding or finishing. */
json_t *an_nodes_finish(an_nodes *b, gp_error *err);
void an_nodes_free(an_nodes *b);
/* malloc'd text; NULL when out of memory. */
char *an_nodes_render(const json_t *report, an_format fmt);

/* ---- shared by the analyzers (nodes, why-pending, rollout) ---- */

/* Every field of a Pod that the analyzers read (dotted paths, arrays
 * transparent; NULL-terminated): a client that lists pods for them may
 * build only these (client/list_stream.h). A test checks that reports from
 * pods pruned to this list equal reports from whole pods. */
extern const char *const an_pod_fields[];

/* Adds to names[0..*n) (at most max, each name once, borrowed from the
 * spec) every resource a pod spec's containers, init containers and
 * overhead request or limit, in that order. */
void an_spec_resource_names(const json_t *podspec, const char **names, size_t *n, size_t max);

/* kube_pod_requests_of (resourcehelper.PodRequests) for the resources
 * `names`, with the pod named in the error of a quantity that does not
 * parse. */
int an_pod_requests(const json_t *pod, const char *const *names, size_t n, kube_quantity *out,
                    gp_error *err);

/* "ns/name" into buf. */
const char *an_obj_ref(const json_t *obj, char *buf, size_t size);

/* An Event as either API shows it: core/v1 (involvedObject, message,
 * lastTimestamp) or events.k8s.io/v1 (regarding, note, eventTime). */
typedef struct an_event_view {
    const json_t *object; /* involvedObject / regarding */
    const char *reason, *message, *type, *component;
    const char *time; /* the latest time the event carries, RFC 3339; "" if none */
} an_event_view;
void an_event_read(const json_t *event, an_event_view *v);

/* The latest event per object and reason, as an analyzer keeps them while
 * events stream in (any order: times compare as RFC 3339 text). */
typedef struct an_kept_event {
    char *object, *reason, *message, *time;
} an_kept_event;
typedef struct an_event_log {
    an_kept_event *v;
    size_t n, cap;
} an_event_log;
/* -1 when out of memory. */
int an_event_log_add(an_event_log *log, const char *object, const an_event_view *ev);
/* The kept message, or NULL. */
const char *an_event_log_message(const an_event_log *log, const char *object, const char *reason);
/* Sorted by object, then reason: a report must not depend on adding order. */
void an_event_log_sort(an_event_log *log);
void an_event_log_free(an_event_log *log);

/* A memory-like quantity for people: 34359738368 -> "32Gi", 34252364185.6
 * -> "31.9Gi"; other names use the canonical text. */
void an_quantity_human(const char *resource, const kube_quantity *q,
                       char buf[KUBE_QUANTITY_FORMAT_MAX]);

/* Nodes by name, in arrival order, with a per-node slot of tracked sums.
 * A node named by a pod before the Node object arrives gets an entry too. */
typedef struct an_node_entry {
    char *name;
    bool seen;           /* the Node object was added */
    kube_quantity *sums; /* nsums tracked quantities, zero-initialised */
    void *user;          /* the analyzer's own per-node data */
} an_node_entry;

typedef struct an_node_table an_node_table;
an_node_table *an_node_table_new(size_t nsums);
/* Finds or creates; NULL when out of memory. */
an_node_entry *an_node_table_get(an_node_table *t, const char *name);
an_node_entry *an_node_table_find(const an_node_table *t, const char *name);
/* Entries sorted by name (malloc'd array of borrowed pointers; *n set). */
an_node_entry **an_node_table_sorted(const an_node_table *t, size_t *n);
void an_node_table_free(an_node_table *t, void (*free_user)(void *));

/* An aligned text table as kubectl's tabwriter prints it (padding 3, cells
 * at least `minwidth` wide, the last column unpadded). */
typedef struct an_table an_table;
an_table *an_table_new(size_t ncols);
/* ncols cells (NULL prints as ""), copied. -1 when out of memory. */
int an_table_row(an_table *t, const char *const *cells);
void an_table_print(const an_table *t, FILE *out, size_t minwidth, const char *indent);
void an_table_free(an_table *t);

/* The report as `-o json` prints it: indented, members in report order, a
 * final newline. */
void an_render_json(const json_t *report, FILE *out);

/* The end of every text report: its "warnings", then its "evidence" lines
 * (when there are any). */
void an_render_tail(const json_t *report, FILE *out);

/* An analyzer's *_render: JSON, or the given text or lab writer, into a
 * malloc'd string (NULL when out of memory). */
typedef void (*an_writer)(const json_t *report, FILE *out);
char *an_render(const json_t *report, an_format fmt, an_writer text, an_writer lab);

#endif

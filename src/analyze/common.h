/* What the analyzers share (nodes, why-pending, rollout, slots): the pod
 * fields they read, requests, events as either API shows them, per-node
 * sums, aligned tables, quantities for people, device plugin pods, and
 * the report renderers' common parts. */
#ifndef GPUOP_ANALYZE_COMMON_H
#define GPUOP_ANALYZE_COMMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "kube/quantity.h"
#include "util/error.h"

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

/* A device plugin pod: its name or one of its label values holds
 * "nvidia-device-plugin" (the GPU Operator's DaemonSet
 * nvidia-device-plugin-daemonset, the Helm chart's
 * app.kubernetes.io/name=nvidia-device-plugin). */
bool an_is_device_plugin_pod(const json_t *pod);

/* Taint.ToString() of k8s.io/api core/v1: "key=value:effect", or
 * "key:effect" without a value. */
void an_taint_text(const json_t *taint, char *buf, size_t size);

/* One toleration as `kubectl describe pod` prints it
 * (printTolerationsMultilineWithIndent, kubectl 1.32 describe.go):
 * key[=value][:effect], " op=Exists" for Exists without a value (just
 * "op=Exists" when there is no key and no effect either), then
 * " for Ns" when tolerationSeconds is set. */
void an_toleration_text(const json_t *toleration, char *buf, size_t size);

/* `fmt` with up to four %s filled from `args` (an array of strings; a
 * missing one reads as ""), into buf: how a report's message code and
 * arguments become text, in English for the JSON and translated for
 * people. */
void an_format_args(char *buf, size_t size, const char *fmt, const json_t *args);

#endif

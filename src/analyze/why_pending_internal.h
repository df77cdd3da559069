/* What why-pending for one pod and for every Pending GPU pod share: the
 * cluster as the pods' reports read it (nodes, other pods reduced to
 * per-node sums, device plugin pods, events, RuntimeClasses) and one
 * report per target pod. */
#ifndef GPUOP_ANALYZE_WHY_PENDING_INTERNAL_H
#define GPUOP_ANALYZE_WHY_PENDING_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "analyze/common.h"
#include "kube/quantity.h"
#include "util/error.h"

/* Resources summed per node: cpu, memory and what the targets ask for
 * (one target), or every name any pod asks for (all Pending pods). */
#define WP_MAX_RES 64

typedef struct wp_plugin_pod {
    char *ref, *ns, *name, *uid, *node, *runtime_class;
    char phase[32], status[64];
    bool ready;
} wp_plugin_pod;

typedef struct wp_cluster {
    char *names[WP_MAX_RES];
    size_t nres;
    bool dynamic; /* a name first seen in a pod is added */
    an_node_table *nodes;
    wp_plugin_pod *plugins;
    size_t nplugins, pcap;
    an_event_log events;    /* Pod events by "ns/name@uid" (or "ns/name") */
    json_t *runtimeclasses; /* name -> handler */
    json_t *label_keys;     /* node labels kept (NULL: all): a big fleet's are not */
    json_t *warnings;
    bool names_full, oom;
} wp_cluster;

typedef struct wp_target {
    json_t *pod;
    char ref[600], ns[256], name[256], uid[128];
    size_t slot[WP_MAX_RES]; /* the cluster's index of each requested name */
    kube_quantity req[WP_MAX_RES];
    size_t nres;
    const char *resource; /* the extended resource that matters, or NULL */
    size_t res;           /* its index among the target's names */
} wp_target;

int wp_cluster_init(wp_cluster *c, bool dynamic);
void wp_cluster_free(wp_cluster *c);
void wp_cluster_add_node(wp_cluster *c, const json_t *node);
/* Sums a pod onto its node (unless it is `skip_ref`) and keeps device
 * plugin pods. */
void wp_cluster_add_pod(wp_cluster *c, const json_t *pod, const char *skip_ref);
void wp_cluster_add_event(wp_cluster *c, const json_t *event);
void wp_cluster_add_runtimeclass(wp_cluster *c, const json_t *runtimeclass);
/* The namespaces of the device plugin pods (a new array). */
json_t *wp_cluster_plugin_namespaces(const wp_cluster *c);
/* Sorts what was kept, so that reports do not depend on adding order;
 * returns the nodes by name (malloc'd) or NULL when out of memory. */
an_node_entry **wp_cluster_settle(wp_cluster *c, size_t *n);

/* -1 with err set (the pod's name in it) when a quantity does not parse
 * or memory runs out. */
int wp_target_init(wp_target *t, wp_cluster *c, const json_t *pod, gp_error *err);
void wp_target_free(wp_target *t);

/* The report of one target (see why_pending.h); NULL when out of memory. */
json_t *wp_report(const wp_cluster *c, const wp_target *t, an_node_entry **nodes, size_t n);

/* The text of one report's next steps and verdict, translated. */
void wp_render_next(const json_t *report, FILE *out, const char *indent);
void wp_render_report(const json_t *report, FILE *out);

#endif

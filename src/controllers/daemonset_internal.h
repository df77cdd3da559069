/* Shared by daemonset*.c: one sync's working state and the steps that the
 * separate files implement (node fitness, history, rolling update). */
#ifndef GPUOP_CONTROLLERS_DAEMONSET_INTERNAL_H
#define GPUOP_CONTROLLERS_DAEMONSET_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "controllers/daemonset.h"
#include "kube/json.h"
#include "kube/label_selector.h"
#include "kube/pod.h"
#include "util/error.h"

#define CTL_DS_HASH_LABEL            "controller-revision-hash"
#define CTL_DS_GENERATION_LABEL      "pod-template-generation"
#define CTL_DS_GENERATION_ANNOTATION "deprecated.daemonset.template.generation"

/* strcmp with NULL read as "", Go's zero string. */
bool ctl_ds_streq(const char *a, const char *b);

/* ---- node fitness (daemonset_node.c) ---- */

/* The template's tolerations after AddOrUpdateDaemonPodTolerations: a new
 * array, NULL when out of memory. */
json_t *ctl_ds_daemon_tolerations(const json_t *pod_spec);

/* NodeShouldRunDaemonPod with the tolerations above already worked out. */
bool ctl_ds_should_run_spec(const json_t *pod_spec, const json_t *tolerations, const json_t *node,
                            bool *should_continue);

/* ---- one sync ---- */

/* The claimed pods that target one node name (nodeToDaemonPods[name]),
 * terminal pods that are being deleted left out. */
typedef struct ctl_ds_slot {
    const char *name;
    const json_t *node; /* NULL: no Node of that name exists */
    bool should_run, should_continue;
    const json_t **pods;
    size_t npods, cap;
} ctl_ds_slot;

typedef struct ctl_ds_ctx {
    const json_t *ds;
    const char *name, *ns, *uid;
    const json_t *spec, *tmpl;
    const json_t *status;
    long long generation;
    bool has_template_generation;
    long long template_generation;
    long long min_ready_seconds;
    time_t now;

    const json_t *nodes, *revisions;
    /* Every claimed pod (terminal ones being deleted included), and the
     * slots in ascending node name order. */
    const json_t **claimed;
    size_t nclaimed, claimed_cap;
    ctl_ds_slot *slots;
    size_t nslots;

    /* The current revision's hash, owned here. */
    char *hash;
    /* Old revisions (not current), borrowed from `revisions`. */
    const json_t **old;
    size_t nold;

    ctl_ds_plan *plan;
    gp_error *err;
    bool oom;
} ctl_ds_ctx;

/* Appends a new reference to `arr`, recording a failure in ctx->oom. */
void ctl_ds_append(ctl_ds_ctx *c, json_t *arr, json_t *item_new);
/* {"type","reason","message"} onto plan->events. */
void ctl_ds_event(ctl_ds_ctx *c, const char *type, const char *reason, const char *message);
/* The {"apiVersion":"apps/v1","kind":"DaemonSet",...,"controller":true,
 * "blockOwnerDeletion":true} reference; NULL when out of memory. */
json_t *ctl_ds_controller_ref(const ctl_ds_ctx *c);

/* Pod helpers (daemonset_pods.c). */
const char *ctl_ds_pod_name(const json_t *pod);
/* IsPodUpdated: the hash label equals the current hash, or the
 * pod-template-generation label equals the template generation. */
bool ctl_ds_pod_updated(const ctl_ds_ctx *c, const json_t *pod);
const char *ctl_ds_pod_label(const json_t *pod, const char *key);
/* podByCreationTimestampAndPhase: scheduled first, then oldest, then name. */
void ctl_ds_sort_pods(const json_t **pods, size_t n);
/* ClaimPods into c->claimed, with adoption and release patches in
 * plan->patch_pods; *invalid for a selector the controller refuses. */
void ctl_ds_claim_pods(ctl_ds_ctx *c, const json_t *pods, bool *invalid);

/* ---- manage and status (daemonset.c) ---- */

/* The slot of a node name, NULL when no node or pod has that name. */
ctl_ds_slot *ctl_ds_slot_find(const ctl_ds_ctx *c, const char *node_name);

/* Queues deletes and creates as syncNodes does (each capped at the burst
 * limit, with their events); `create_nodes` are node names. */
void ctl_ds_sync_nodes(ctl_ds_ctx *c, const char *const *delete_names, size_t ndelete,
                       const char *const *create_nodes, size_t ncreate);

/* ---- history and rolling update (daemonset_update.c) ---- */

/* constructHistory: finds or plans the current revision, sets c->hash and
 * c->old. `pods` are the namespace's pods, for relabelling when duplicate
 * current revisions are merged. Returns 0, or 1 after a hash collision (status carries the new
 * collisionCount and the sync stops; also for an invalid selector), or -1
 * when out of memory. */
int ctl_ds_construct_history(ctl_ds_ctx *c, const json_t *pods);

/* rollingUpdate for RollingUpdate DaemonSets. Returns 0, or 1 with c->err set
 * when the real controller would fail (an invalid maxUnavailable/maxSurge). */
int ctl_ds_rolling_update(ctl_ds_ctx *c);

/* cleanupHistory. */
void ctl_ds_cleanup_history(ctl_ds_ctx *c);

#endif

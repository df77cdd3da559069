/* What the controllers' runtime shares between its files: its state, the
 * snapshot a pass works on (controllers_snapshot.c builds it), and the
 * small readers every part uses. Not an interface: include it only from
 * controllers*.c. */
#ifndef GPUOP_CONTROLLERS_CONTROLLERS_INTERNAL_H
#define GPUOP_CONTROLLERS_CONTROLLERS_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/list_stream.h"
#include "apiserver/resources.h"
#include "apiserver/routes.h"
#include "apiserver/table.h"
#include "controllers/controllers.h"
#include "controllers/event_correlator_internal.h"
#include "controllers/inflight_internal.h"
#include "controllers/lru_internal.h"
#include "controllers/node_lifecycle_internal.h"
#include "controllers/rate_limit_internal.h"
#include "controllers/object_cache_internal.h"
#include "controllers/scheduler.h"
#include "controllers/write_queue_internal.h"
#include "kube/json.h"

struct ctl_loop {
    as_api *api;
    ctl_loop_options opt;
    pthread_t thread;
    bool running, stopping;
    pthread_mutex_t lock;
    /* What the scheduler remembers of a failed pod: uid -> the fingerprint
     * of the cluster it failed in. It tries again only when nodes or bound
     * pods have changed since. Rebuilt each pass from the pending pods. */
    json_t *failed;
    ctl_events *events; /* client-go's event correlator */
    unsigned tie_break;
    /* The objects of the last snapshot, parsed, per resource
     * (object_cache.h): a pass parses only what has changed. */
    struct {
        char id[128]; /* "group/resource" */
        ctl_object_cache *cache;
    } caches[16];
    size_t cache_count;
    kc_fields *settled_pod_fields, *metadata_fields, *lease_fields;
    /* the snapshot's last node and lease indexes: a pass whose nodes and
     * Leases are the same names at the same places reuses them */
    json_t *node_index, *lease_index;
    json_t *terminating; /* names of the namespaces being deleted, this pass */
    ctl_wq *wq;
    ctl_inflight *inflight;     /* pod and node writes sent and not yet seen */
    ctl_sched_memo *sched_memo; /* bound pods parsed for the scheduler */
    size_t failed_writes;       /* of this pass, found when the queue drains */
    uint64_t collected_at;      /* the store's deletion count at the last full GC */
    bool collected_once;
    /* The DaemonSet controller's rate-limited requeues: a DaemonSet whose
     * sync failed waits (ds_retry: "ns/name" -> ds_retry) for the backoff. */
    ctl_backoff *ds_backoff;
    ctl_lru *ds_retry;
    /* The node lifecycle and taint eviction controllers (node_lifecycle_loop.c). */
    ctl_nlc *nlc;
    int64_t grace_ms, lease_renew_ms;
    int64_t next_monitor_ms, next_kubelet_sweep_ms;
    ctl_lru
        *noschedule_seen; /* node -> the resourceVersion its NoSchedule taints were fixed from */
    ctl_lru *not_ready_marks; /* "ns/name" -> pod_mark: pods marked not ready */
    ctl_lru *evictions;       /* "ns/name" -> eviction: the taint eviction controller's work */
    unsigned long long pass;
    /* The earliest time a pass has work (a retry, an eviction, a heartbeat):
     * the loop waits no longer than that for a change. */
    int64_t wake_ms;
    /* With simulated nodes (opt.agents): this pass's facts of each node,
     * position for position with the snapshot's nodes (has_facts false
     * where there are none), and the nodes whose kubelet is a new process
     * since the last pass (resync: their pods are started again). `boots`:
     * node name -> the kubelet process its pods were last synced with. */
    ctl_node_facts *facts;
    bool *has_facts, *resync;
    size_t facts_cap;
    bool any_resync;
    json_t *boots;
};

static inline uint64_t rv_of(const json_t *obj)
{
    const char *rv = kube_str_or_null(kube_obj(obj, "metadata"), "resourceVersion");
    return rv ? strtoull(rv, NULL, 10) : 0;
}

/* The loop runs again no later than `at` (ms), for work due then. */
static inline void ctl_wake_at(ctl_loop *c, int64_t at)
{
    if (at < c->wake_ms) c->wake_ms = at;
}

/* What the controllers read of every pod and node on every pass, read once
 * per stored version (kept beside the object in its cache): a pass at
 * 150,000 pods made millions of JSON lookups for these few fields. The
 * strings point into the object. */
typedef struct pod_summary {
    const char *ns, *name, *uid;
    const char *node, *ip; /* NULL when empty */
    uint64_t rv;
    bool deleting, terminal, wants_scheduling;
} pod_summary;

typedef struct node_summary {
    const char *name;
    uint64_t rv;
    bool managed, held_down, ready;
    /* its NoSchedule condition taints are what its conditions say
     * (ctl_nlc_noschedule_diff), and whether it has a NoExecute taint */
    bool noschedule_ok, noexecute;
    bool beat_known; /* lastHeartbeatTime parsed into beat */
    time_t beat;
    unsigned jitter;
} node_summary;

typedef struct lease_summary {
    const char *node; /* the name of a Lease in kube-node-lease, else NULL */
} lease_summary;

typedef struct snapshot {
    json_t *nodes, *pods, *daemonsets, *revisions, *namespaces, *runtimeclasses, *configmaps;
    /* beside nodes and pods, position for position */
    const node_summary **node_sums;
    const pod_summary **pod_sums;
    json_t *leases;
    const lease_summary **lease_sums; /* beside leases */
    /* node name -> its position in nodes, and in leases of its Lease in
     * kube-node-lease (integers) */
    json_t *node_index, *lease_index;
    json_t *pod_ips;    /* node name -> {ip: true} of its pods; see pod_ips() */
    uint64_t listed_rv; /* the store's version before the first listing */
    json_t *all;        /* [{resource, group, object}] for the garbage collector */
} snapshot;

/* The pass's view of the cluster (controllers_snapshot.c): every object the
 * controllers read, parsed once per stored version. */
void ctl_take_snapshot(ctl_loop *c, snapshot *s);
void ctl_free_snapshot(snapshot *s);
/* node name -> {ip: true} of the pods on the nodes that hand out an
 * address this pass, and of the addresses on their way; built once a pass. */
json_t *ctl_pod_ips(ctl_loop *c, snapshot *s);
/* The caches and field lists of the snapshot, made with the controllers. */
int ctl_snapshot_init(ctl_loop *c);
void ctl_snapshot_fini(ctl_loop *c);
/* The node of that name in the snapshot, or NULL. */
const json_t *ctl_node_named(const snapshot *s, const char *name);
/* The Lease of the node of that name (kube-node-lease), or NULL. */
const json_t *ctl_node_lease(const snapshot *s, const char *name);

/* ---- requests (requests.c) ---- */

#define CTL_SMP   "application/strategic-merge-patch+json"
#define CTL_MERGE "application/merge-patch+json"

/* /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]], or /apis/GROUP/v1/... */
void ctl_object_path(char *buf, size_t size, const char *group, const char *resource,
                     const char *ns, const char *name, const char *sub);
/* Queues a request (write_queue_internal.h): it is counted as a write now,
 * and the pass subtracts what failed when it drains the queue. Failures are
 * expected now and then (a conflict with a client): the next pass sees the
 * new state. With `answer`, the request is sent now, after what is queued,
 * and the answer returned; true when it succeeded (2xx). */
bool ctl_send(ctl_loop *c, const char *method, const char *path, const char *query,
              const char *type, const json_t *body, json_t **answer);
/* Sent now, after what is queued, where what follows depends on the
 * outcome; true when it succeeded. */
bool ctl_send_now(ctl_loop *c, const char *method, const char *path, const char *query,
                  const char *type, const json_t *body);
/* The whole object at `path` as the API server has it now, or NULL: for
 * the few fields a snapshot keeps no longer (a settled pod's tolerations). */
json_t *ctl_get(ctl_loop *c, const char *path);
/* The in-flight table's name for an object: "pods|ns/name", "nodes|/name". */
void ctl_inflight_key(char *buf, size_t size, const char *resource, const char *ns,
                      const char *name);
/* Whether an object of the snapshot, at version rv, still waits for a
 * write of ours: it is left alone this pass. */
bool ctl_waiting_at(ctl_loop *c, const snapshot *s, const char *resource, const char *ns,
                    const char *name, uint64_t rv);
bool ctl_pod_waiting(ctl_loop *c, const snapshot *s, const pod_summary *p);
/* Queues w (and its follow-ups), a change of `obj` computed from the
 * snapshot's version of it; node and ip an address it hands out. 1 when
 * queued. */
int ctl_send_tracked(ctl_loop *c, ctl_wq_write *w, const char *resource, const json_t *obj,
                     const char *node, const char *ip);

/* ---- events (events.c) ---- */

/* An event as a write to queue, after the correlator: NULL when it is held
 * back or out of memory; a repeat is patched here (*sent then). */
ctl_wq_write *ctl_event_write_in(ctl_loop *c, const ctl_event_in *in, int64_t now_ms, bool *sent);
/* The same about `obj` (its reference: name, namespace, uid, version). */
ctl_wq_write *ctl_event_write(ctl_loop *c, const json_t *obj, const char *kind,
                              const char *api_version, const char *type, const char *reason,
                              const char *message, const char *component, int64_t now_ms,
                              bool *sent);
/* Records it (queued or patched); how many writes that made (0 or 1). */
int ctl_record(ctl_loop *c, const ctl_event_in *in, int64_t now_ms);
int ctl_record_event(ctl_loop *c, const json_t *obj, const char *kind, const char *api_version,
                     const char *type, const char *reason, const char *message,
                     const char *component, int64_t now_ms);

/* ---- node lifecycle and taint eviction (node_lifecycle_loop.c) ---- */

int ctl_nlc_loop_init(ctl_loop *c, int64_t now_ms);
void ctl_nlc_loop_fini(ctl_loop *c);
/* This pass's share of the two controllers; how many writes it made. */
int ctl_node_lifecycle(ctl_loop *c, const snapshot *s, int64_t now_ms);
/* Whether the fake kubelet of this node is down (gpuop.io/not-ready=true):
 * it posts nothing and touches none of its pods. */
bool ctl_node_held_down(const json_t *node);

#endif

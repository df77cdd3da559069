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
#include "controllers/inflight_internal.h"
#include "controllers/object_cache_internal.h"
#include "controllers/scheduler.h"
#include "controllers/write_queue_internal.h"

/* A repeated event is one object with a count, as the event recorder's
 * correlator makes it. */
typedef struct event_memo {
    char name[300];
    char ns[254];
    long count;
} event_memo;

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
    event_memo *events;
    size_t event_count, event_cap;
    json_t *event_index; /* key -> position in events */
    unsigned tie_break;
    /* The objects of the last snapshot, parsed, per resource
     * (object_cache.h): a pass parses only what has changed. */
    struct {
        char id[128]; /* "group/resource" */
        ctl_object_cache *cache;
    } caches[16];
    size_t cache_count;
    kc_fields *settled_pod_fields, *metadata_fields;
    json_t *terminating; /* names of the namespaces being deleted, this pass */
    ctl_wq *wq;
    ctl_inflight *inflight;     /* pod and node writes sent and not yet seen */
    ctl_sched_memo *sched_memo; /* bound pods parsed for the scheduler */
    size_t failed_writes;       /* of this pass, found when the queue drains */
    uint64_t collected_at;      /* the store's deletion count at the last full GC */
    bool collected_once;
};

static inline const char *str_at(const json_t *obj, const char *a, const char *b)
{
    const json_t *v = json_object_get(obj, a);
    if (b) v = json_object_get(v, b);
    return json_string_value(v);
}

static inline const char *meta(const json_t *obj, const char *key)
{
    return str_at(obj, "metadata", key);
}

static inline uint64_t rv_of(const json_t *obj)
{
    const char *rv = meta(obj, "resourceVersion");
    return rv ? strtoull(rv, NULL, 10) : 0;
}

/* The first object of `array` whose string `key` is `value` (a condition
 * by type, an owner reference by kind), or NULL. */
static inline const json_t *element_where(const json_t *array, const char *key, const char *value)
{
    size_t i;
    json_t *e;
    json_array_foreach(array, i, e)
    {
        const char *v = json_string_value(json_object_get(e, key));
        if (v && strcmp(v, value) == 0) return e;
    }
    return NULL;
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
    bool beat_known; /* lastHeartbeatTime parsed into beat */
    time_t beat;
    unsigned jitter;
} node_summary;

typedef struct snapshot {
    json_t *nodes, *pods, *daemonsets, *revisions, *namespaces, *runtimeclasses, *configmaps;
    /* beside nodes and pods, position for position */
    const node_summary **node_sums;
    const pod_summary **pod_sums;
    json_t *leases;
    json_t *node_index;  /* node name -> its position in nodes (an integer) */
    json_t *lease_index; /* node name -> its Lease in kube-node-lease */
    json_t *pod_ips;     /* node name -> {ip: true} of its pods; see pod_ips() */
    uint64_t listed_rv;  /* the store's version before the first listing */
    json_t *all;         /* [{resource, group, object}] for the garbage collector */
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

#endif

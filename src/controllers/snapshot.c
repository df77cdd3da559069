/* The snapshot a controller pass works on: every object of the resources
 * the controllers read, parsed once per stored version (object_cache_internal.h),
 * settled pods cut to what they read, and a summary of each pod and node
 * for the loops that look at all of them on every pass. */
#include <stdio.h>
#include <string.h>

#include "controllers/controllers_internal.h"
#include "controllers/kubelet_internal.h"
#include "controllers/taint_eviction_internal.h"
#include "kube/pod.h"
#include "kube/time.h"

/* A lab drill takes a node down with `kubectl annotate node X
 * gpuop.io/not-ready=true`: its kubelet is down until the annotation goes
 * (no heartbeat, no Lease, none of its pods touched); the node lifecycle
 * controller notices after its grace period. */
#define NOT_READY_ANNOTATION "gpuop.io/not-ready"

bool ctl_node_held_down(const json_t *node)
{
    return kube_str_is(kube_path(node, "metadata", "annotations", NULL), NOT_READY_ANNOTATION,
                       "true");
}

const json_t *ctl_node_named(const snapshot *s, const char *name)
{
    const json_t *at = name ? json_object_get(s->node_index, name) : NULL;
    return at ? json_array_get(s->nodes, (size_t)json_integer_value(at)) : NULL;
}

const json_t *ctl_node_lease(const snapshot *s, const char *name)
{
    const json_t *at = name ? json_object_get(s->lease_index, name) : NULL;
    return at ? json_array_get(s->leases, (size_t)json_integer_value(at)) : NULL;
}

static bool node_ready(const json_t *node)
{
    return kube_str_is(kube_condition(node, "Ready"), "status", "True");
}

static const char *nonempty_or_null(const char *v)
{
    return v && *v ? v : NULL;
}

static void *summarize_pod(const json_t *pod)
{
    pod_summary *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->ns = kube_str_or_null(kube_obj(pod, "metadata"), "namespace");
    p->name = kube_str_or_null(kube_obj(pod, "metadata"), "name");
    p->uid = kube_str_or_null(kube_obj(pod, "metadata"), "uid");
    p->node = nonempty_or_null(kube_str_or_null(kube_get(pod, "spec"), "nodeName"));
    p->ip = nonempty_or_null(kube_str_or_null(kube_get(pod, "status"), "podIP"));
    p->rv = rv_of(pod);
    p->deleting = kube_deleting(pod);
    p->terminal = kube_pod_terminal(pod);
    p->wants_scheduling = ctl_sched_wants(pod);
    return p;
}

static void *summarize_node(const json_t *node)
{
    node_summary *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->name = kube_str_or_null(kube_obj(node, "metadata"), "name");
    n->rv = rv_of(node);
    n->managed = ctl_kubelet_manages(node);
    n->held_down = ctl_node_held_down(node);
    n->ready = node_ready(node);
    json_t *add, *remove;
    n->noschedule_ok = !ctl_nlc_noschedule_diff(node, 0, &add, &remove);
    json_decref(add);
    json_decref(remove);
    json_t *noexecute = ctl_te_noexecute_taints(node);
    n->noexecute = json_array_size(noexecute) > 0;
    json_decref(noexecute);
    const json_t *conds = json_object_get(json_object_get(node, "status"), "conditions");
    const char *last = kube_str_or_null(json_array_get(conds, 0), "lastHeartbeatTime");
    n->beat_known = last && kube_time_parse_seconds(last, &n->beat) == 0;
    for (const char *q = n->name; q && *q; q++)
        n->jitter = n->jitter * 31 + (unsigned char)*q;
    return n;
}

static void *summarize_lease(const json_t *lease)
{
    lease_summary *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    const json_t *meta = kube_obj(lease, "metadata");
    if (kube_str_is(meta, "namespace", "kube-node-lease")) l->node = kube_str_or_null(meta, "name");
    return l;
}

/* How much of an object the cache keeps. A pod is whole while a controller
 * may still act on it, and cut to what they read once it has settled
 * (bound, Running with an address, not being deleted, not a DaemonSet's):
 * at a hundred thousand pods the whole ones would take gigabytes. Of what only the
 * garbage collector reads (events...), metadata is enough. */
typedef enum keep_policy {
    KEEP_WHOLE,
    /* a Lease: its metadata and spec.renewTime, the node lifecycle
     * controller's heartbeat */
    KEEP_LEASE,
    KEEP_SETTLED_POD_FIELDS,
    /* metadata, of an object the collector has work with: one with owners,
     * finalizers or a deletion, or in a namespace being deleted. The
     * others (most events) are remembered as null: 150,000 events cost
     * 200 MB parsed, and nothing reads them. */
    KEEP_COLLECTABLE_METADATA,
} keep_policy;

/* What the controllers read of a settled pod: the scheduler its node,
 * requests, host ports, priority and start (for preemption), the kubelet
 * its address and deletion, the garbage collector its owners and
 * finalizers, the DaemonSet controller its labels and owners (it adopts
 * orphans its selector matches). */
static const char *const SETTLED_POD_FIELDS[] = {"metadata.name",
                                                 "metadata.namespace",
                                                 "metadata.uid",
                                                 "metadata.resourceVersion",
                                                 "metadata.labels",
                                                 "metadata.ownerReferences",
                                                 "metadata.finalizers",
                                                 "metadata.deletionTimestamp",
                                                 "spec.nodeName",
                                                 "spec.priority",
                                                 "spec.overhead",
                                                 "spec.containers.resources",
                                                 "spec.containers.ports",
                                                 "spec.initContainers.resources",
                                                 "spec.initContainers.restartPolicy",
                                                 "status.phase",
                                                 "status.podIP",
                                                 "status.startTime",
                                                 NULL};
static const char *const METADATA_FIELDS[] = {"metadata", NULL};
static const char *const LEASE_FIELDS[] = {"metadata", "spec.renewTime", NULL};

static bool owned_by_daemonset(const json_t *obj)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    return kube_find(refs, "kind", "DaemonSet") != NULL;
}

/* Settled: nothing left for the kubelet (it acts on pods without an
 * address or being deleted), the scheduler (bound) or the DaemonSet
 * controller (not its pod). */
static bool pod_settled(const json_t *pod)
{
    const char *node = kube_str_or_null(kube_get(pod, "spec"), "nodeName"),
               *ip = kube_str_or_null(kube_get(pod, "status"), "podIP");
    return node && *node && ip && *ip && !kube_deleting(pod) && !owned_by_daemonset(pod);
}

static bool collectable(const ctl_loop *c, const json_t *obj)
{
    const json_t *m = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(m, "namespace"));
    return json_array_size(json_object_get(m, "ownerReferences")) > 0 ||
           json_array_size(json_object_get(m, "finalizers")) > 0 || kube_deleting(obj) ||
           (ns && json_object_get(c->terminating, ns));
}

/* What the scheduler reads of a settled pod goes into its memo, and out of
 * the pod, which then keeps only what the others read (bench/controllers_bench.sh
 * measures the memory a pod costs).
 * A pod whose requests do not parse is kept as it is (the scheduler then
 * reports the error). */
static json_t *strip_settled(ctl_loop *c, json_t *pod)
{
    gp_error err = {0};
    if (ctl_sched_memo_prime(c->sched_memo, pod, pod, &err) != 0) return pod;
    json_t *spec = json_object_get(pod, "spec");
    json_object_del(spec, "containers");
    json_object_del(spec, "initContainers");
    json_object_del(spec, "overhead");
    json_object_del(spec, "priority");
    json_object_del(json_object_get(pod, "status"), "startTime");
    return pod;
}

/* Whether a pod's stored text may be of a settled pod: a settled pod has a
 * podIP, and a text without that key cannot have one. Two of a pod's
 * three first versions (created, bound) have none, and for them the cut
 * parse before the whole one would be wasted. A key spelled with escapes
 * is missed here and only costs the whole parse, never a wrong cut. */
static bool may_be_settled(const as_blob *b)
{
    static const char key[] = "\"podIP\"";
    return strstr(b->text, key) != NULL; /* stored JSON holds no NUL byte */
}

/* A new reference: the object as the policy keeps it; for one remembered as
 * nothing, its namespace as a string (or "" when it has none). NULL when
 * the text does not parse. */
static json_t *parse_kept(ctl_loop *c, keep_policy policy, const as_blob *b)
{
    if (policy == KEEP_LEASE) return kc_object_parse(c->lease_fields, b->text, b->len);
    if (policy == KEEP_COLLECTABLE_METADATA) {
        json_t *m = kc_object_parse(c->metadata_fields, b->text, b->len);
        if (!m || collectable(c, m)) return m;
        const char *ns = kube_str_or_null(kube_obj(m, "metadata"), "namespace");
        json_t *marker = json_string(ns ? ns : "");
        json_decref(m);
        return marker;
    }
    if (policy == KEEP_SETTLED_POD_FIELDS && may_be_settled(b)) {
        json_t *cut = kc_object_parse(c->settled_pod_fields, b->text, b->len);
        if (cut && pod_settled(cut)) return strip_settled(c, cut);
        json_decref(cut);
    }
    return kc_object_parse_dumped(b->text, b->len);
}

/* The cache of one resource ("group/resource"), made on first use. */
static ctl_object_cache *cache_of(ctl_loop *c, const char *id)
{
    for (size_t i = 0; i < c->cache_count; i++)
        if (strcmp(c->caches[i].id, id) == 0) return c->caches[i].cache;
    if (c->cache_count == sizeof c->caches / sizeof c->caches[0]) return NULL;
    ctl_object_cache *oc = ctl_ocache_new();
    if (!oc) return NULL;
    snprintf(c->caches[c->cache_count].id, sizeof c->caches[0].id, "%s", id);
    c->caches[c->cache_count++].cache = oc;
    return oc;
}

/* Whether a version remembered as nothing (its namespace, a string) must
 * be looked at again: its namespace is being deleted. */
static bool stale(const ctl_loop *c, const json_t *kept)
{
    return json_is_string(kept) && json_object_get(c->terminating, json_string_value(kept));
}

/* Every object of one resource, parsed. The store lock is held only while
 * the objects' versions are taken (a reference to each blob); an object
 * whose version was in the last listing is reused, not parsed again
 * (object_cache_internal.h; snapshots are never modified). */
typedef void *summarize_fn(const json_t *obj);

static json_t *list_summarized(ctl_loop *c, const char *group, const char *resource,
                               keep_policy policy, json_t *all, summarize_fn *summarize,
                               void ***sums);

static json_t *list_resource(ctl_loop *c, const char *group, const char *resource,
                             keep_policy policy, json_t *all)
{
    return list_summarized(c, group, resource, policy, all, NULL, NULL);
}

/* The same, with what summarize makes of each object (once per version)
 * in *sums, position for position with the list (malloc'd; the summaries
 * are the cache's, valid until the next listing of the resource). */
static json_t *list_summarized(ctl_loop *c, const char *group, const char *resource,
                               keep_policy policy, json_t *all, summarize_fn *summarize,
                               void ***sums)
{
    if (sums) *sums = NULL;
    const as_resource *r = as_resource_find(group, "v1", resource);
    json_t *out = json_array();
    char id[128];
    snprintf(id, sizeof id, "%s/%s", group, resource);
    ctl_object_cache *cache = r ? cache_of(c, id) : NULL;
    if (!cache) return out;
    as_store *store = c->api->store;
    as_store_lock(store);
    const as_object **objs;
    size_t n = as_store_list(store, r, NULL, &objs);
    as_blob **blobs = calloc(n ? n : 1, sizeof *blobs);
    for (size_t i = 0; blobs && i < n; i++)
        blobs[i] = as_blob_ref(objs[i]->json);
    as_store_unlock(store);
    free(objs);
    void **summaries = sums ? calloc(n ? n : 1, sizeof *summaries) : NULL;
    if (!blobs || (sums && !summaries) || ctl_ocache_begin(cache, n) != 0) {
        for (size_t i = 0; blobs && i < n; i++)
            as_blob_unref(blobs[i]);
        free(blobs);
        free(summaries);
        return out;
    }
    for (size_t i = 0; i < n; i++) {
        void *sum = NULL;
        json_t *obj = ctl_ocache_find(cache, blobs[i], &sum);
        if (obj && !stale(c, obj) && (sum || !summarize)) {
            as_blob_unref(blobs[i]); /* the cache has its own */
        } else {
            obj = parse_kept(c, policy, blobs[i]);
            if (!obj) {
                as_blob_unref(blobs[i]);
                continue;
            }
            sum = summarize && json_is_object(obj) ? summarize(obj) : NULL;
            if (summarize && json_is_object(obj) && !sum) { /* out of memory */
                json_decref(obj);
                as_blob_unref(blobs[i]);
                continue;
            }
            ctl_ocache_put(cache, blobs[i], obj, sum);
        }
        if (!json_is_object(obj)) continue; /* remembered as nothing */
        if (summaries) summaries[json_array_size(out)] = sum;
        json_array_append(out, obj);
        if (all)
            json_array_append_new(all, json_pack("{s:s, s:s, s:O}", "resource", resource, "group",
                                                 group, "object", obj));
    }
    ctl_ocache_end(cache);
    free(blobs);
    if (sums) *sums = summaries;
    return out;
}

/* Whether `index` maps names[i] to i for every name given (NULL: none),
 * and nothing else. */
static bool index_holds(const json_t *index, const char *const *names, size_t n)
{
    size_t named = 0;
    for (size_t i = 0; i < n; i++) {
        if (!names[i]) continue;
        named++;
        const json_t *at = json_object_get(index, names[i]);
        if (!at || json_integer_value(at) != (json_int_t)i) return false;
    }
    return named == json_object_size(index);
}

/* name -> position of names[0..n) (NULL ones left out): the last one made
 * (*last) when it still holds, which is most passes at a thousand nodes,
 * else a new one, then kept in *last. A new reference. */
static json_t *position_index(json_t **last, const char *const *names, size_t n)
{
    if (*last && index_holds(*last, names, n)) return json_incref(*last);
    json_t *index = json_object();
    for (size_t i = 0; i < n; i++)
        if (names[i]) json_object_set_new(index, names[i], json_integer((json_int_t)i));
    json_decref(*last);
    *last = json_incref(index);
    return index;
}

static bool any_deleting(const json_t *list)
{
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) if (kube_deleting(o)) return true;
    return false;
}

/* Whether the garbage collector and the namespace controller have work: an
 * object was removed since they last looked (its dependents may be
 * orphans), or something is being deleted. Otherwise the snapshot leaves
 * out what only they read (events, leases...), which at a thousand nodes is
 * most of a pass. */
static bool collection_due(ctl_loop *c, const snapshot *s)
{
    as_store_lock(c->api->store);
    uint64_t deletions = as_store_deletions(c->api->store);
    as_store_unlock(c->api->store);
    bool pods_deleting = false;
    for (size_t i = 0; i < json_array_size(s->pods) && !pods_deleting; i++)
        pods_deleting = s->pod_sums[i]->deleting;
    bool due = !c->collected_once || deletions != c->collected_at || pods_deleting ||
               any_deleting(s->daemonsets) || any_deleting(s->namespaces) ||
               any_deleting(s->revisions) || any_deleting(s->configmaps);
    c->collected_at = deletions;
    c->collected_once = true;
    return due;
}

void ctl_take_snapshot(ctl_loop *c, snapshot *s)
{
    s->all = NULL;
    as_store_lock(c->api->store);
    s->listed_rv = as_store_rv(c->api->store);
    as_store_unlock(c->api->store);
    s->nodes =
        list_summarized(c, "", "nodes", KEEP_WHOLE, NULL, summarize_node, (void ***)&s->node_sums);
    s->pods = list_summarized(c, "", "pods", KEEP_SETTLED_POD_FIELDS, NULL, summarize_pod,
                              (void ***)&s->pod_sums);
    if (!s->node_sums || !s->pod_sums) { /* out of memory: an empty pass */
        json_array_clear(s->nodes);
        json_array_clear(s->pods);
    }
    s->daemonsets = list_resource(c, "apps", "daemonsets", KEEP_WHOLE, NULL);
    s->revisions = list_resource(c, "apps", "controllerrevisions", KEEP_WHOLE, NULL);
    s->namespaces = list_resource(c, "", "namespaces", KEEP_WHOLE, NULL);
    s->runtimeclasses = list_resource(c, "node.k8s.io", "runtimeclasses", KEEP_WHOLE, NULL);
    s->configmaps = list_resource(c, "", "configmaps", KEEP_WHOLE, NULL);
    s->leases = list_summarized(c, "coordination.k8s.io", "leases", KEEP_LEASE, NULL,
                                summarize_lease, (void ***)&s->lease_sums);
    if (collection_due(c, s)) {
        json_object_clear(c->terminating);
        size_t k;
        json_t *ns;
        json_array_foreach(s->namespaces, k, ns) if (kube_deleting(ns)) json_object_set_new(
            c->terminating, kube_str_or_null(kube_obj(ns, "metadata"), "name"), json_true());
        /* every object, as the collector needs: what the pass listed,
         * and what only the collector reads */
        s->all = json_array();
        const struct {
            const char *group, *resource;
            json_t *listed;
        } listed[] = {{"", "nodes", s->nodes},
                      {"", "pods", s->pods},
                      {"apps", "daemonsets", s->daemonsets},
                      {"apps", "controllerrevisions", s->revisions},
                      {"", "namespaces", s->namespaces},
                      {"node.k8s.io", "runtimeclasses", s->runtimeclasses},
                      {"", "configmaps", s->configmaps},
                      {"coordination.k8s.io", "leases", s->leases}};
        for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++) {
            size_t j;
            json_t *o;
            json_array_foreach(listed[i].listed, j, o) json_array_append_new(
                s->all, json_pack("{s:s, s:s, s:O}", "resource", listed[i].resource, "group",
                                  listed[i].group, "object", o));
        }
        static const char *const only_collected[][2] = {
            {"", "serviceaccounts"}, {"", "events"}, {"events.k8s.io", "events"}};
        for (size_t i = 0; i < sizeof only_collected / sizeof only_collected[0]; i++)
            json_decref(list_resource(c, only_collected[i][0], only_collected[i][1],
                                      KEEP_COLLECTABLE_METADATA, s->all));
    }
    size_t n = json_array_size(s->nodes);
    const char **names = calloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; names && i < n; i++)
        names[i] = s->node_sums[i]->name;
    s->node_index = position_index(&c->node_index, names, names ? n : 0);
    free(names);
    /* A node's Lease is looked up once a node a pass: by name, not by a
     * walk over every lease (which made a pass quadratic in nodes). */
    n = s->lease_sums ? json_array_size(s->leases) : 0;
    names = calloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; names && i < n; i++)
        names[i] = s->lease_sums[i]->node;
    s->lease_index = position_index(&c->lease_index, names, names ? n : 0);
    free(names);
    s->pod_ips = NULL; /* built by the first pod that needs an address */
}

static void add_address(void *ud, const char *node, const char *ip)
{
    json_t *ips = ud, *set = json_object_get(ips, node);
    if (!set) json_object_set_new(ips, node, set = json_object());
    json_object_set_new(set, ip, json_true());
}

json_t *ctl_pod_ips(ctl_loop *c, snapshot *s)
{
    if (s->pod_ips) return s->pod_ips;
    s->pod_ips = json_object();
    size_t n = json_array_size(s->pods);
    /* only the nodes of pods waiting for an address: their sets first */
    for (size_t i = 0; i < n; i++) {
        const pod_summary *p = s->pod_sums[i];
        if (p->node && !p->ip && !json_object_get(s->pod_ips, p->node))
            json_object_set_new(s->pod_ips, p->node, json_object());
    }
    for (size_t i = 0; i < n; i++) {
        const pod_summary *p = s->pod_sums[i];
        json_t *set = p->node && p->ip ? json_object_get(s->pod_ips, p->node) : NULL;
        if (set) json_object_set_new(set, p->ip, json_true());
    }
    /* and those handed out by status patches still on their way */
    ctl_inflight_addresses(c->inflight, add_address, s->pod_ips);
    return s->pod_ips;
}

void ctl_free_snapshot(snapshot *s)
{
    json_decref(s->nodes);
    json_decref(s->pods);
    free(s->node_sums);
    free(s->pod_sums);
    json_decref(s->daemonsets);
    json_decref(s->revisions);
    json_decref(s->namespaces);
    json_decref(s->runtimeclasses);
    json_decref(s->configmaps);
    json_decref(s->leases);
    free(s->lease_sums);
    json_decref(s->node_index);
    json_decref(s->lease_index);
    json_decref(s->pod_ips);
    json_decref(s->all);
}

int ctl_snapshot_init(ctl_loop *c)
{
    c->settled_pod_fields = kc_fields_new(SETTLED_POD_FIELDS);
    c->metadata_fields = kc_fields_new(METADATA_FIELDS);
    c->lease_fields = kc_fields_new(LEASE_FIELDS);
    return c->settled_pod_fields && c->metadata_fields && c->lease_fields ? 0 : -1;
}

void ctl_snapshot_fini(ctl_loop *c)
{
    for (size_t i = 0; i < c->cache_count; i++)
        ctl_ocache_free(c->caches[i].cache);
    kc_fields_free(c->settled_pod_fields);
    kc_fields_free(c->metadata_fields);
    kc_fields_free(c->lease_fields);
    json_decref(c->node_index);
    json_decref(c->lease_index);
}

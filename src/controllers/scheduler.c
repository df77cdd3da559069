/* kube-scheduler 1.32's decision for one pod over one snapshot (see sched.h).
 *
 * The structure follows pkg/scheduler so that each message can be traced to
 * the code that writes it: PreFilter (NodeAffinity's node-name set), the
 * nominated node first, the Filter plugins in profile order, scoring, then
 * DefaultPreemption's PostFilter, and FitError.Error() to render both the
 * filter and the preemption diagnosis.
 *
 * Resource arithmetic mirrors the Go types on purpose: a pod's requests are
 * summed and maxed as exact quantities (resourcehelper.PodRequests), then
 * turned into int64 milli-cpu and whole units (framework.Resource), and a
 * node's usage is the int64 sum of its pods' requests. Rounding ("0.5" bytes
 * is 1) therefore happens where kube-scheduler rounds. */
#include "controllers/scheduler.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/intstr.h"
#include "kube/json.h"
#include "kube/node_affinity.h"
#include "kube/pod.h"
#include "kube/pod_requests.h"
#include "kube/quantity.h"
#include "kube/selector.h"
#include "kube/taints.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/hash.h"

__extension__ typedef __int128 i128;

/* Texts of pkg/scheduler v1.32 (plugin ErrReason constants and messages). */
#define MSG_NO_NODES        "no nodes available to schedule pods"
#define R_UNSCHEDULABLE     "node(s) were unschedulable"
#define R_NODE_NAME         "node(s) didn't match the requested node name"
#define R_AFFINITY          "node(s) didn't match Pod's node affinity/selector"
#define R_AFFINITY_CONFLICT "pod affinity terms conflict"
#define R_AFFINITY_ABSENT   "node(s) didn't satisfy plugin(s) [NodeAffinity]"
#define R_PORTS             "node(s) didn't have free ports for the requested pod ports"
#define R_TOO_MANY_PODS     "Too many pods"
#define R_NO_VICTIMS        "No preemption victims found for incoming pod"
#define R_NOT_HELPFUL       "Preemption is not helpful for scheduling"
#define MSG_POLICY_NEVER    "not eligible due to preemptionPolicy=Never."
#define MSG_TERMINATING     "not eligible due to a terminating pod on the nominated node."
#define TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"
#define DEFAULT_MILLI_CPU   "100m"  /* schedutil.DefaultMilliCPURequest */
#define DEFAULT_MEMORY      "200Mi" /* schedutil.DefaultMemoryRequest */
#define MAX_NODE_SCORE      100
#define NOTE_LIMIT          1024 /* events validation.NoteLengthLimit */
#define NOTE_SUFFIX         " ..."

static int oom(gp_error *err)
{
    gp_error_set(err, NULL, 0, 0, "out of memory");
    return -1;
}

/* ---- reading ---------------------------------------------------------------- */

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- scheduler resources (framework.Resource) ----------------------------- */

typedef struct amount {
    const char *name;
    int64_t value;
} amount;

typedef struct resources {
    int64_t milli_cpu, memory, ephemeral, pods;
    amount *scalars; /* extended, hugepages-*, attachable-volumes-*, */
    size_t nscalars; /* kubernetes.io/ prefixed: in list order */
} resources;

typedef enum rkind { RK_IGNORED, RK_CPU, RK_MEMORY, RK_EPHEMERAL, RK_PODS, RK_SCALAR } rkind;

/* Which field of framework.Resource a name lands in: anything with a '/'
 * (extended or kubernetes.io/-prefixed), hugepages and attachable volumes are
 * scalars (schedutil.IsScalarResourceName); other bare names are ignored. */
static rkind resource_kind(const char *name)
{
    if (strcmp(name, "cpu") == 0) return RK_CPU;
    if (strcmp(name, "memory") == 0) return RK_MEMORY;
    if (strcmp(name, "ephemeral-storage") == 0) return RK_EPHEMERAL;
    if (strcmp(name, "pods") == 0) return RK_PODS;
    if (strchr(name, '/') || has_prefix(name, "hugepages-") ||
        has_prefix(name, "attachable-volumes-"))
        return RK_SCALAR;
    return RK_IGNORED;
}

static void resources_free(resources *r)
{
    free(r->scalars);
    memset(r, 0, sizeof *r);
}

static int64_t scalar_of(const resources *r, const char *name)
{
    for (size_t i = 0; i < r->nscalars; i++)
        if (strcmp(r->scalars[i].name, name) == 0) return r->scalars[i].value;
    return 0;
}

/* Resource.Add over a list: cpu as MilliValue, the rest as Value. */
static int to_resources(const kube_resource_list *l, resources *r, gp_error *err)
{
    memset(r, 0, sizeof *r);
    r->scalars = calloc(l->n + 1, sizeof *r->scalars);
    if (!r->scalars) return oom(err);
    for (size_t i = 0; i < l->n; i++) {
        const kube_resource *e = &l->v[i];
        switch (resource_kind(e->name)) {
        case RK_CPU:
            if (kube_quantity_to_milli(&e->q, &r->milli_cpu, err) < 0) return -1;
            break;
        case RK_MEMORY:
            r->memory = kube_quantity_to_units(&e->q);
            break;
        case RK_EPHEMERAL:
            r->ephemeral = kube_quantity_to_units(&e->q);
            break;
        case RK_PODS:
            r->pods = kube_quantity_to_units(&e->q);
            break;
        case RK_SCALAR:
            r->scalars[r->nscalars].name = e->name;
            r->scalars[r->nscalars].value = kube_quantity_to_units(&e->q);
            r->nscalars++;
            break;
        case RK_IGNORED:
            break;
        }
    }
    return 0;
}

/* ---- pods and nodes of the snapshot --------------------------------------- */

typedef struct host_port {
    const char *ip;    /* "" read as 0.0.0.0 */
    const char *proto; /* "" read as TCP */
    int64_t port;
} host_port;

typedef struct pod_info {
    const json_t *obj;
    int64_t priority;
    const char *start_time; /* NULL: not started, which reads as now */
    resources req;
    int64_t nonzero_milli_cpu, nonzero_memory; /* for scoring */
    host_port *ports;
    size_t nports;
    bool borrowed; /* a ctl_sched_memo's: freed by it, not with the node */
    /* Copies of the strings above, when the info must outlive the parts of
     * the object they were read from (ctl_sched_memo_prime). */
    char **owned;
    size_t nowned;
} pod_info;

typedef struct node_info {
    const json_t *obj;
    const char *name;
    /* read by every filter of every pod: looked up once */
    const json_t *labels, *taints;
    bool unschedulable;
    resources alloc;
    bool alloc_borrowed; /* a ctl_sched_memo's: freed by it, not with the node */
    pod_info *pods;
    size_t npods;
} node_info;

typedef struct sched {
    size_t next_start; /* where the next decision starts filtering */
    const json_t *pod;
    /* the pod's fields the filters read on every node, looked up once a
     * decision (at 1,000 nodes a pod is filtered against hundreds) */
    const json_t *tolerations, *node_selector, *required;
    const char *node_name;
    pod_info self;
    node_info *nodes;
    size_t n;
    kube_non_missing nz;
    gp_error err;
} sched;

static void pod_info_free(pod_info *p)
{
    if (p->borrowed) return;
    for (size_t i = 0; i < p->nowned; i++)
        free(p->owned[i]);
    free(p->owned);
    resources_free(&p->req);
    free(p->ports);
}

/* The hostPorts of regular containers: 1.32's NodePorts (getContainerPorts
 * and NodeInfo.updateUsedPorts) does not look at sidecars yet. */
static int collect_ports(pod_info *p, gp_error *err)
{
    size_t cap = 0, i, j;
    const json_t *c, *port;
    json_array_foreach(kube_get(kube_get(p->obj, "spec"), "containers"), i, c)
    {
        json_array_foreach(kube_get(c, "ports"), j, port)
        {
            const json_t *hp = kube_get(port, "hostPort");
            if (!json_is_integer(hp) || json_integer_value(hp) <= 0) continue;
            if (p->nports == cap) {
                cap = cap ? cap * 2 : 4;
                host_port *v = realloc(p->ports, cap * sizeof *v);
                if (!v) return oom(err);
                p->ports = v;
            }
            host_port *h = &p->ports[p->nports++];
            h->ip = *kube_str(port, "hostIP") ? kube_str(port, "hostIP") : "0.0.0.0";
            h->proto = *kube_str(port, "protocol") ? kube_str(port, "protocol") : "TCP";
            h->port = json_integer_value(hp);
        }
    }
    return 0;
}

static int nonzero_requests(pod_info *p, const kube_non_missing *nz, gp_error *err)
{
    kube_resource_list l = {0};
    int rc = kube_pod_requests(p->obj, nz, &l, err);
    const kube_resource *cpu = kube_resource_list_find(&l, "cpu"),
                        *mem = kube_resource_list_find(&l, "memory");
    if (rc == 0 && cpu) rc = kube_quantity_to_milli(&cpu->q, &p->nonzero_milli_cpu, err);
    if (rc == 0 && mem) p->nonzero_memory = kube_quantity_to_units(&mem->q);
    kube_resource_list_free(&l);
    return rc;
}

static int pod_info_init(pod_info *p, const json_t *pod, const kube_non_missing *nz, gp_error *err)
{
    memset(p, 0, sizeof *p);
    p->obj = pod;
    const json_t *prio = kube_get(kube_get(pod, "spec"), "priority");
    p->priority = json_is_integer(prio) ? json_integer_value(prio) : 0;
    const json_t *start = kube_get(kube_get(pod, "status"), "startTime");
    p->start_time = json_is_string(start) ? json_string_value(start) : NULL;
    kube_resource_list l = {0};
    int rc = kube_pod_requests(pod, NULL, &l, err);
    if (rc == 0) rc = to_resources(&l, &p->req, err);
    kube_resource_list_free(&l);
    if (rc == 0) rc = nonzero_requests(p, nz, err);
    if (rc == 0) rc = collect_ports(p, err);
    return rc;
}

static void node_info_free(node_info *ni)
{
    for (size_t i = 0; i < ni->npods; i++)
        pod_info_free(&ni->pods[i]);
    free(ni->pods);
    if (!ni->alloc_borrowed) resources_free(&ni->alloc);
}

/* ---- pod infos kept from one pass to the next ---------------------------- */

/* A bound pod's requests, ports and priority, parsed once while its object
 * is unchanged: the caller's objects are immutable and held here (a
 * reference), so the same pointer is the same pod at the same version. */
typedef struct memo_entry {
    const json_t *pod; /* NULL: a free slot */
    pod_info info;
    unsigned used; /* a recent entry's: the build that last read it */
} memo_entry;

typedef struct memo_table {
    memo_entry *slots;
    size_t cap, count; /* cap a power of two, or 0 */
} memo_table;

/* Two tables. `settled` holds what ctl_sched_memo_prime was told of pods
 * the caller keeps cut down: it cannot be parsed again, so it stays until
 * the caller lets the pod go. `recent` holds pods bound but not settled
 * (waiting for their kubelet): parsed at their first build and kept while
 * each build reads them, so a burst of bindings is not parsed again on
 * every pass until the pods run. */
/* A node's own part of its info (no pods), read once per version of its
 * object: the same pointer is the same node at the same version, as for
 * pods. Entries a build did not read are of versions gone. */
typedef struct node_memo {
    const json_t *node; /* NULL: a free slot */
    node_info own;
    unsigned used; /* the build that last read it */
} node_memo;

typedef struct node_memo_table {
    node_memo *slots;
    size_t cap, count; /* cap a power of two, or 0 */
} node_memo_table;

struct ctl_sched_memo {
    memo_table settled, recent;
    node_memo_table nodes;
    unsigned build;     /* numbers the builds, for `used` */
    size_t recent_read; /* recent entries the current build read */
    size_t nodes_read;  /* node entries the current build read */
};

ctl_sched_memo *ctl_sched_memo_new(void)
{
    return calloc(1, sizeof(ctl_sched_memo));
}

static void memo_entry_free(memo_entry *e)
{
    e->info.borrowed = false;
    pod_info_free(&e->info);
    json_decref((json_t *)e->pod);
    memset(e, 0, sizeof *e);
}

static void table_free(memo_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].pod) memo_entry_free(&t->slots[i]);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static void node_memo_free(node_memo *e)
{
    resources_free(&e->own.alloc);
    json_decref((json_t *)e->node);
    memset(e, 0, sizeof *e);
}

static void node_table_free(node_memo_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].node) node_memo_free(&t->slots[i]);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void ctl_sched_memo_free(ctl_sched_memo *m)
{
    if (!m) return;
    table_free(&m->settled);
    table_free(&m->recent);
    node_table_free(&m->nodes);
    free(m);
}

static memo_entry *memo_slot(const memo_table *t, const json_t *pod)
{
    size_t i = gp_hash_ptr(pod, t->cap);
    while (t->slots[i].pod && t->slots[i].pod != pod)
        i = (i + 1) & (t->cap - 1);
    return &t->slots[i];
}

static memo_entry *memo_find(const memo_table *t, const json_t *pod)
{
    if (!t->cap) return NULL;
    memo_entry *e = memo_slot(t, pod);
    return e->pod ? e : NULL;
}

/* Whether an entry goes at a rehash. */
typedef bool memo_drop_fn(const memo_entry *e, unsigned build);

/* Rehashes into `cap` slots, without the entries `drop` names. */
static int memo_rehash(memo_table *t, size_t cap, memo_drop_fn *drop, unsigned build)
{
    memo_entry *old = t->slots;
    size_t old_cap = t->cap;
    memo_entry *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    t->slots = slots;
    t->cap = cap;
    t->count = 0;
    for (size_t i = 0; i < old_cap; i++) {
        memo_entry *e = &old[i];
        if (!e->pod) continue;
        if (drop && drop(e, build)) {
            memo_entry_free(e);
            continue;
        }
        *memo_slot(t, e->pod) = *e;
        t->count++;
    }
    free(old);
    return 0;
}

/* A free slot for `pod` (not in the table), growing the table first. */
static memo_entry *memo_insert_slot(memo_table *t, const json_t *pod)
{
    if ((t->count + 1) * 2 > t->cap && memo_rehash(t, t->cap ? t->cap * 2 : 1024, NULL, 0) < 0)
        return NULL;
    return memo_slot(t, pod);
}

/* Only the memo still holds the pod: the caller has let go of it (gone,
 * or replaced by a new version). */
static bool only_memo_holds(const memo_entry *e, unsigned build)
{
    (void)build;
    return e->pod->refcount == 1;
}

static bool unread_by(const memo_entry *e, unsigned build)
{
    return e->used != build;
}

/* The info of a bound pod, borrowed from the memo; parsed into the recent
 * table the first time. Out of memory there, it is parsed for this build
 * only (out->borrowed false). */
static int memo_info(ctl_sched_memo *m, const json_t *pod, const kube_non_missing *nz,
                     pod_info *out, gp_error *err)
{
    memo_entry *e = memo_find(&m->settled, pod);
    if (e) {
        *out = e->info;
        return 0;
    }
    if ((e = memo_find(&m->recent, pod))) {
        if (e->used != m->build) m->recent_read++;
        e->used = m->build;
        *out = e->info;
        return 0;
    }
    if (pod_info_init(out, pod, nz, err) < 0) return -1;
    e = memo_insert_slot(&m->recent, pod);
    if (!e) return 0;
    e->pod = json_incref((json_t *)pod);
    e->info = *out;
    e->info.borrowed = true;
    e->used = m->build;
    m->recent.count++;
    m->recent_read++;
    out->borrowed = true;
    return 0;
}

static node_memo *node_slot(const node_memo_table *t, const json_t *node)
{
    size_t i = gp_hash_ptr(node, t->cap);
    while (t->slots[i].node && t->slots[i].node != node)
        i = (i + 1) & (t->cap - 1);
    return &t->slots[i];
}

/* Rehashes into `cap` slots, without the entries the current build did
 * not read (unless keep_all). */
static int node_rehash(node_memo_table *t, size_t cap, bool keep_all, unsigned build)
{
    node_memo *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    node_memo *old = t->slots;
    size_t old_cap = t->cap;
    t->slots = slots;
    t->cap = cap;
    t->count = 0;
    for (size_t i = 0; i < old_cap; i++) {
        node_memo *e = &old[i];
        if (!e->node) continue;
        if (!keep_all && e->used != build) {
            node_memo_free(e);
            continue;
        }
        *node_slot(t, e->node) = *e;
        t->count++;
    }
    free(old);
    return 0;
}

static int node_own_init(node_info *ni, const json_t *node, gp_error *err)
{
    memset(ni, 0, sizeof *ni);
    ni->obj = node;
    ni->name = kube_str(kube_get(node, "metadata"), "name");
    ni->labels = kube_get(kube_get(node, "metadata"), "labels");
    ni->taints = kube_get(kube_get(node, "spec"), "taints");
    ni->unschedulable = json_is_true(kube_get(kube_get(node, "spec"), "unschedulable"));
    kube_resource_list l = {0};
    int rc = kube_resource_list_read(kube_get(kube_get(node, "status"), "allocatable"), &l, err);
    if (rc == 0) rc = to_resources(&l, &ni->alloc, err);
    kube_resource_list_free(&l);
    return rc;
}

/* The node's own part of its info: from the memo (its alloc borrowed),
 * read into it the first time. Out of memory there, it is read for this
 * build only. */
static int node_own(ctl_sched_memo *m, node_info *ni, const json_t *node, gp_error *err)
{
    if (!m) return node_own_init(ni, node, err);
    node_memo_table *t = &m->nodes;
    node_memo *e = t->cap ? node_slot(t, node) : NULL;
    if (!e || !e->node) {
        if (node_own_init(ni, node, err) < 0) return -1;
        if ((t->count + 1) * 2 > t->cap &&
            node_rehash(t, t->cap ? t->cap * 2 : 1024, true, m->build) < 0)
            return 0;
        e = node_slot(t, node);
        e->node = json_incref((json_t *)node);
        e->own = *ni;
        e->used = m->build - 1; /* counted as read below */
        t->count++;
    }
    if (e->used != m->build) m->nodes_read++;
    e->used = m->build;
    *ni = e->own;
    ni->alloc_borrowed = true;
    return 0;
}

/* After a build: the recent pods it did not read have changed (a new
 * version, settled or gone), and their entries go; swept once they could
 * be half the table, so that a pass does not rebuild it. So do the nodes'
 * entries of versions gone. */
static void memo_end_build(ctl_sched_memo *m)
{
    node_memo_table *nodes = &m->nodes;
    if (nodes->count > 2 * m->nodes_read + 256) node_rehash(nodes, nodes->cap, false, m->build);
    m->nodes_read = 0;
    memo_table *t = &m->recent;
    if (t->count > 2 * m->recent_read + 256) {
        size_t cap = t->cap;
        while (cap > 1024 && (m->recent_read + 1) * 8 < cap)
            cap /= 2; /* after a burst */
        memo_rehash(t, cap, unread_by, m->build);
    }
    m->recent_read = 0;
    m->build++;
}

/* Copies *field into p's own strings and points it there. */
static int own_string(pod_info *p, const char **field)
{
    if (!*field) return 0;
    char **v = realloc(p->owned, (p->nowned + 1) * sizeof *v);
    if (!v) return -1;
    p->owned = v;
    if (!(v[p->nowned] = strdup(*field))) return -1;
    *field = v[p->nowned++];
    return 0;
}

static int own_strings(pod_info *p)
{
    int rc = own_string(p, &p->start_time);
    for (size_t i = 0; rc == 0 && i < p->req.nscalars; i++)
        rc = own_string(p, &p->req.scalars[i].name);
    for (size_t i = 0; rc == 0 && i < p->nports; i++) {
        rc = own_string(p, &p->ports[i].ip);
        if (rc == 0) rc = own_string(p, &p->ports[i].proto);
    }
    return rc;
}

void ctl_sched_memo_trim(ctl_sched_memo *m, size_t live)
{
    /* a sweep rebuilds the table: only once the dead could be a fifth */
    memo_table *t = &m->settled;
    if (t->count > live + live / 4 + 1024) memo_rehash(t, t->cap, only_memo_holds, 0);
}

int ctl_sched_memo_prime(ctl_sched_memo *m, const json_t *key, const json_t *pod, gp_error *err)
{
    kube_non_missing nz;
    if (kube_quantity_parse(DEFAULT_MILLI_CPU, &nz.cpu, err) < 0 ||
        kube_quantity_parse(DEFAULT_MEMORY, &nz.memory, err) < 0)
        return -1;
    if (memo_find(&m->settled, key)) return 0; /* known already */
    memo_entry *e = memo_insert_slot(&m->settled, key);
    if (!e) return oom(err);
    pod_info info;
    if (pod_info_init(&info, pod, &nz, err) < 0 || own_strings(&info) < 0) {
        pod_info_free(&info);
        return err->text[0] ? -1 : oom(err);
    }
    info.obj = key;
    info.borrowed = true;
    e->info = info;
    e->pod = json_incref((json_t *)key);
    m->settled.count++;
    return 0;
}

static int node_info_init(node_info *ni, const ctl_sched_node *in, const kube_non_missing *nz,
                          ctl_sched_memo *memo, gp_error *err)
{
    if (node_own(memo, ni, in->node, err) < 0) return -1;
    ni->pods = calloc(in->pod_count + 1, sizeof *ni->pods);
    if (!ni->pods) return oom(err);
    for (; ni->npods < in->pod_count; ni->npods++) {
        const json_t *pod = in->pods[ni->npods];
        pod_info *info = &ni->pods[ni->npods];
        if ((memo ? memo_info(memo, pod, nz, info, err) : pod_info_init(info, pod, nz, err)) < 0) {
            ni->npods++; /* so that node_info_free frees the partial one */
            return -1;
        }
    }
    return 0;
}

/* ---- filter statuses (framework.Status) ----------------------------------- */

typedef enum st_code { ST_SUCCESS = 0, ST_UNSCHEDULABLE, ST_UNRESOLVABLE } st_code;

typedef struct status {
    bool set; /* present in NodeToStatus; absent nodes get the absent status */
    st_code code;
    char **reasons;
    size_t n;
} status;

static void status_clear(status *st)
{
    for (size_t i = 0; i < st->n; i++)
        free(st->reasons[i]);
    free(st->reasons);
    memset(st, 0, sizeof *st);
}

static void statuses_free(status *st, size_t n)
{
    for (size_t i = 0; st && i < n; i++)
        status_clear(&st[i]);
    free(st);
}

static int status_fail(status *st, st_code code, gp_error *err, const char *fmt, ...)
    GP_PRINTF(4, 5);

static int status_fail(status *st, st_code code, gp_error *err, const char *fmt, ...)
{
    char **v = realloc(st->reasons, (st->n + 1) * sizeof *v);
    if (!v) return oom(err);
    st->reasons = v;
    va_list ap;
    va_start(ap, fmt);
    char *text = gp_vformat(fmt, ap);
    va_end(ap);
    if (!text) return oom(err);
    st->reasons[st->n++] = text;
    st->code = code;
    return 0;
}

/* ---- node affinity ------------------------------------------------------- */

static const json_t *required_affinity(const json_t *pod)
{
    return kube_required_node_affinity(kube_get(pod, "spec"));
}

/* ---- NodeAffinity PreFilter: the node-name set ---------------------------- */

typedef enum prefilter_mode { PF_ALL, PF_SET, PF_CONFLICT } prefilter_mode;

typedef struct name_set {
    const char **v;
    size_t n;
    bool defined; /* a Go nil set is undefined, an empty one is defined */
} name_set;

static bool name_set_has(const name_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0) return true;
    return false;
}

static int name_set_add(name_set *s, const char *name, gp_error *err)
{
    s->defined = true;
    if (name_set_has(s, name)) return 0;
    const char **v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v) return oom(err);
    v[s->n++] = name;
    s->v = v;
    return 0;
}

/* One requirement's values intersected into the term's set (the term's
 * requirements are ANDed). */
static int intersect_values(name_set *term, const json_t *values, gp_error *err)
{
    size_t i;
    const json_t *x;
    if (!term->defined) {
        term->defined = true;
        json_array_foreach(values, i, x)
        {
            if (json_is_string(x) && name_set_add(term, json_string_value(x), err) < 0) return -1;
        }
        return 0;
    }
    size_t kept = 0;
    for (size_t k = 0; k < term->n; k++)
        if (kube_has_string(values, term->v[k])) term->v[kept++] = term->v[k];
    term->n = kept;
    return 0;
}

/* The names one term pins (matchFields metadata.name In); undefined when the
 * term pins none, which lets every node through. */
static int term_names(const json_t *term, name_set *out, gp_error *err)
{
    size_t i;
    const json_t *r;
    json_array_foreach(kube_get(term, "matchFields"), i, r)
    {
        if (strcmp(kube_str(r, "key"), "metadata.name") != 0 ||
            strcmp(kube_str(r, "operator"), "In") != 0)
            continue;
        if (intersect_values(out, kube_get(r, "values"), err) < 0) return -1;
    }
    return 0;
}

/* NodeAffinity.PreFilter: the union of the terms' node names when every
 * term names nodes; PF_CONFLICT when that union is empty. */
static int prefilter(const json_t *pod, name_set *names, prefilter_mode *mode, gp_error *err)
{
    *mode = PF_ALL;
    const json_t *terms = kube_get(required_affinity(pod), "nodeSelectorTerms");
    size_t i;
    const json_t *term;
    json_array_foreach(terms, i, term)
    {
        name_set one = {0};
        int rc = term_names(term, &one, err);
        bool defined = one.defined;
        for (size_t k = 0; rc == 0 && k < one.n; k++)
            rc = name_set_add(names, one.v[k], err);
        free(one.v);
        if (rc < 0) return -1;
        if (!defined) {
            names->n = 0;
            return 0;
        }
        names->defined = true;
    }
    if (names->defined) *mode = names->n ? PF_SET : PF_CONFLICT;
    return 0;
}

/* ---- Filter plugins ------------------------------------------------------- */

static int filter_unschedulable(sched *s, const node_info *ni, status *st)
{
    if (!ni->unschedulable) return 0;
    if (kube_tolerations_tolerate(s->tolerations, TAINT_UNSCHEDULABLE, "", "NoSchedule")) return 0;
    return status_fail(st, ST_UNRESOLVABLE, &s->err, "%s", R_UNSCHEDULABLE);
}

static int filter_node_name(sched *s, const node_info *ni, status *st)
{
    const char *want = s->node_name;
    if (!*want || strcmp(want, ni->name) == 0) return 0;
    return status_fail(st, ST_UNRESOLVABLE, &s->err, "%s", R_NODE_NAME);
}

/* The first NoSchedule/NoExecute taint, in the node's order, that no
 * toleration tolerates. */
static int filter_taints(sched *s, const node_info *ni, status *st)
{
    const json_t *taint = kube_untolerated_taint(ni->taints, s->tolerations,
                                                 KUBE_TAINT_NO_SCHEDULE | KUBE_TAINT_NO_EXECUTE);
    if (!taint) return 0;
    return status_fail(st, ST_UNRESOLVABLE, &s->err, "node(s) had untolerated taint {%s: %s}",
                       kube_str(taint, "key"), kube_str(taint, "value"));
}

static int filter_affinity(sched *s, const node_info *ni, status *st)
{
    if (kube_node_affinity_matches(s->node_selector, s->required, ni->labels, ni->name)) return 0;
    return status_fail(st, ST_UNRESOLVABLE, &s->err, "%s", R_AFFINITY);
}

/* HostPortInfo.CheckConflict: 0.0.0.0 on either side clashes with any IP. */
static bool port_conflicts(const host_port *want, const host_port *used)
{
    if (want->port != used->port || strcmp(want->proto, used->proto) != 0) return false;
    if (strcmp(want->ip, "0.0.0.0") == 0 || strcmp(used->ip, "0.0.0.0") == 0) return true;
    return strcmp(want->ip, used->ip) == 0;
}

static bool pod_port_conflicts(const host_port *want, const pod_info *p)
{
    for (size_t k = 0; k < p->nports; k++)
        if (port_conflicts(want, &p->ports[k])) return true;
    return false;
}

static int filter_ports(sched *s, const node_info *ni, const bool *removed, status *st)
{
    for (size_t w = 0; w < s->self.nports; w++)
        for (size_t j = 0; j < ni->npods; j++) {
            if (removed && removed[j]) continue;
            if (pod_port_conflicts(&s->self.ports[w], &ni->pods[j]))
                return status_fail(st, ST_UNSCHEDULABLE, &s->err, "%s", R_PORTS);
        }
    return 0;
}

/* Sums that Go keeps in int64; saturating keeps absurd inputs harmless. */
static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* request > allocatable - used, without overflow. */
static bool exceeds(int64_t request, int64_t allocatable, int64_t used)
{
    return (i128)request > (i128)allocatable - (i128)used;
}

typedef struct usage {
    int64_t pods, milli_cpu, memory, ephemeral;
} usage;

static usage node_usage(const node_info *ni, const bool *removed)
{
    usage u = {0};
    for (size_t j = 0; j < ni->npods; j++) {
        if (removed && removed[j]) continue;
        const resources *r = &ni->pods[j].req;
        u.pods++;
        u.milli_cpu = add_sat(u.milli_cpu, r->milli_cpu);
        u.memory = add_sat(u.memory, r->memory);
        u.ephemeral = add_sat(u.ephemeral, r->ephemeral);
    }
    return u;
}

static int64_t scalar_usage(const node_info *ni, const bool *removed, const char *name)
{
    int64_t sum = 0;
    for (size_t j = 0; j < ni->npods; j++)
        if (!removed || !removed[j]) sum = add_sat(sum, scalar_of(&ni->pods[j].req, name));
    return sum;
}

static int fit_scalars(sched *s, const node_info *ni, const bool *removed, status *st)
{
    const resources *want = &s->self.req;
    for (size_t k = 0; k < want->nscalars; k++) {
        const amount *a = &want->scalars[k];
        if (a->value == 0) continue;
        if (!exceeds(a->value, scalar_of(&ni->alloc, a->name), scalar_usage(ni, removed, a->name)))
            continue;
        if (status_fail(st, ST_UNSCHEDULABLE, &s->err, "Insufficient %s", a->name) < 0) return -1;
    }
    return 0;
}

/* NodeResourcesFit (fitsRequest): every insufficient resource is reported. */
static int filter_fit(sched *s, const node_info *ni, const bool *removed, status *st)
{
    const resources *want = &s->self.req, *alloc = &ni->alloc;
    gp_error *err = &s->err;
    usage used = node_usage(ni, removed);
    if (used.pods + 1 > alloc->pods &&
        status_fail(st, ST_UNSCHEDULABLE, err, "%s", R_TOO_MANY_PODS) < 0)
        return -1;
    if (want->milli_cpu == 0 && want->memory == 0 && want->ephemeral == 0 && want->nscalars == 0)
        return 0;
    if (want->milli_cpu > 0 && exceeds(want->milli_cpu, alloc->milli_cpu, used.milli_cpu) &&
        status_fail(st, ST_UNSCHEDULABLE, err, "Insufficient cpu") < 0)
        return -1;
    if (want->memory > 0 && exceeds(want->memory, alloc->memory, used.memory) &&
        status_fail(st, ST_UNSCHEDULABLE, err, "Insufficient memory") < 0)
        return -1;
    if (want->ephemeral > 0 && exceeds(want->ephemeral, alloc->ephemeral, used.ephemeral) &&
        status_fail(st, ST_UNSCHEDULABLE, err, "Insufficient ephemeral-storage") < 0)
        return -1;
    return fit_scalars(s, ni, removed, st);
}

/* The Filter plugins in profile order, stopping at the first that fails.
 * `removed` (may be NULL) hides pods, as preemption's dry run does. */
static int run_filters(sched *s, const node_info *ni, const bool *removed, status *st)
{
    status_clear(st);
    if (filter_unschedulable(s, ni, st) < 0 || st->code) return st->code ? 0 : -1;
    if (filter_node_name(s, ni, st) < 0 || st->code) return st->code ? 0 : -1;
    if (filter_taints(s, ni, st) < 0 || st->code) return st->code ? 0 : -1;
    if (filter_affinity(s, ni, st) < 0 || st->code) return st->code ? 0 : -1;
    if (filter_ports(s, ni, removed, st) < 0 || st->code) return st->code ? 0 : -1;
    return filter_fit(s, ni, removed, st);
}

/* ---- scoring: NodeResourcesFit LeastAllocated over cpu and memory --------- */

static int64_t least_requested(int64_t requested, int64_t capacity)
{
    if (capacity == 0 || requested > capacity) return 0;
    return (int64_t)(((i128)capacity - requested) * MAX_NODE_SCORE / capacity);
}

static int64_t least_allocated_score(const sched *s, const node_info *ni)
{
    int64_t cpu = s->self.nonzero_milli_cpu, mem = s->self.nonzero_memory;
    for (size_t j = 0; j < ni->npods; j++) {
        cpu = add_sat(cpu, ni->pods[j].nonzero_milli_cpu);
        mem = add_sat(mem, ni->pods[j].nonzero_memory);
    }
    int64_t score = 0, weights = 0;
    if (ni->alloc.milli_cpu != 0) {
        score += least_requested(cpu, ni->alloc.milli_cpu);
        weights++;
    }
    if (ni->alloc.memory != 0) {
        score += least_requested(mem, ni->alloc.memory);
        weights++;
    }
    return weights ? score / weights : 0;
}

static int choose(const sched *s, const bool *feasible, unsigned tie_break)
{
    int best = -1;
    int64_t best_score = -1;
    for (size_t k = 0; k < s->n; k++) {
        size_t i = ((size_t)tie_break % s->n + k) % s->n;
        if (!feasible[i]) continue;
        int64_t score = least_allocated_score(s, &s->nodes[i]);
        if (score > best_score) {
            best_score = score;
            best = (int)i;
        }
    }
    return best;
}

/* ---- FitError.Error() ----------------------------------------------------- */

typedef struct bucket {
    const char *reason;
    size_t count;
} bucket;

static void bucket_add(bucket *b, size_t *nb, const char *reason, size_t count)
{
    for (size_t i = 0; i < *nb; i++)
        if (strcmp(b[i].reason, reason) == 0) {
            b[i].count += count;
            return;
        }
    b[*nb].reason = reason;
    b[*nb].count = count;
    (*nb)++;
}

static int cmp_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "<count> <reason>" for every reason, sorted as Go's sort.Strings does
 * (bytes: "10 x" sorts before "2 x"), joined with ", ". */
static void histogram(gp_buf *out, const status *st, size_t n, const char *absent)
{
    size_t total = 0, explicit = 0, nb = 0;
    for (size_t i = 0; i < n; i++)
        total += st[i].set ? st[i].n : 0;
    bucket *b = calloc(total + 1, sizeof *b);
    char **lines = calloc(total + 1, sizeof *lines);
    if (!b || !lines) out->state = GP_BUF_NO_MEMORY;
    for (size_t i = 0; !gp_buf_failed(out) && i < n; i++) {
        if (!st[i].set) continue;
        explicit ++;
        for (size_t r = 0; r < st[i].n; r++)
            bucket_add(b, &nb, st[i].reasons[r], 1);
    }
    if (!gp_buf_failed(out) && absent && explicit < n) bucket_add(b, &nb, absent, n - explicit);
    size_t nl = 0;
    for (; !gp_buf_failed(out) && nl < nb; nl++) {
        lines[nl] = gp_format("%zu %s", b[nl].count, b[nl].reason);
        if (!lines[nl]) out->state = GP_BUF_NO_MEMORY;
    }
    if (!gp_buf_failed(out) && nl) {
        qsort(lines, nl, sizeof *lines, cmp_strings);
        gp_buf_add(out, " ");
        gp_buf_join(out, (const char *const *)lines, nl, ", ");
        gp_buf_add(out, ".");
    }
    for (size_t i = 0; lines && i < nl; i++)
        free(lines[i]);
    free(lines);
    free(b);
}

/* `pre` is a PreFilter rejection (then node statuses are not listed); `post`
 * the PostFilter message, appended after a space. */
static char *fit_error(size_t n, const char *pre, const status *st, const char *absent,
                       const char *post)
{
    gp_buf b = {0};
    gp_buf_addf(&b, "0/%zu nodes are available:", n);
    if (pre)
        gp_buf_addf(&b, " %s.", pre);
    else
        histogram(&b, st, n, absent);
    if (post && *post) gp_buf_addf(&b, " %s", post);
    return gp_buf_take(&b);
}

/* ---- DefaultPreemption ---------------------------------------------------- */

/* MoreImportantPod: higher priority, then the earlier start. A pod that has
 * not started reads as starting now, later than any recorded time; times are
 * RFC 3339 UTC as the API writes them, so they order as text. */
static bool starts_before(const char *a, const char *b)
{
    if (!a) return false;
    if (!b) return true;
    return strcmp(a, b) < 0;
}

static bool more_important(const pod_info *a, const pod_info *b)
{
    if (a->priority != b->priority) return a->priority > b->priority;
    return starts_before(a->start_time, b->start_time);
}

static void sort_by_importance(const node_info *ni, size_t *idx, size_t k)
{
    for (size_t i = 1; i < k; i++) {
        size_t v = idx[i], j = i;
        for (; j > 0 && more_important(&ni->pods[v], &ni->pods[idx[j - 1]]); j--)
            idx[j] = idx[j - 1];
        idx[j] = v;
    }
}

typedef struct candidate {
    size_t node;
    size_t *victims; /* pod indices on the node, most important first */
    size_t nvictims;
} candidate;

/* Puts back the potential victims one by one, most important first, keeping
 * each that still lets the pod fit; the rest are the victims. */
static int reprieve(sched *s, const node_info *ni, bool *removed, size_t *order, size_t k,
                    candidate *c)
{
    sort_by_importance(ni, order, k);
    status tmp = {0};
    for (size_t i = 0; i < k; i++) {
        removed[order[i]] = false;
        if (run_filters(s, ni, removed, &tmp) < 0) {
            status_clear(&tmp);
            return -1;
        }
        if (tmp.code == ST_SUCCESS) continue;
        removed[order[i]] = true;
        c->victims[c->nvictims++] = order[i];
    }
    status_clear(&tmp);
    return 0;
}

/* The pods of lower priority than the incoming one, marked removed. */
static size_t potential_victims(const sched *s, const node_info *ni, bool *removed, size_t *order)
{
    size_t k = 0;
    for (size_t j = 0; j < ni->npods; j++)
        if (ni->pods[j].priority < s->self.priority) {
            removed[j] = true;
            order[k++] = j;
        }
    return k;
}

/* SelectVictimsOnNode: 1 with c filled when removing every lower-priority
 * pod makes room, else 0 with the node's preemption status in st. */
static int select_victims(sched *s, size_t node, status *st, candidate *c)
{
    const node_info *ni = &s->nodes[node];
    bool *removed = calloc(ni->npods + 1, sizeof *removed);
    size_t *order = calloc(ni->npods + 1, sizeof *order);
    c->node = node;
    c->victims = calloc(ni->npods + 1, sizeof *c->victims);
    int rc = removed && order && c->victims ? 0 : oom(&s->err);
    size_t k = rc == 0 ? potential_victims(s, ni, removed, order) : 0;
    if (rc == 0 && k == 0)
        rc = status_fail(st, ST_UNRESOLVABLE, &s->err, "%s", R_NO_VICTIMS);
    else if (rc == 0)
        rc = run_filters(s, ni, removed, st);
    if (rc == 0 && k > 0 && st->code == ST_SUCCESS) {
        rc = reprieve(s, ni, removed, order, k, c);
        /* With all of them back the pod did not fit, so someone stays out. */
        if (rc == 0) rc = c->nvictims ? 1 : 0;
    }
    st->set = st->code != ST_SUCCESS;
    free(removed);
    free(order);
    return rc;
}

static int64_t victims_sum(const node_info *ni, const candidate *c)
{
    int64_t sum = 0;
    for (size_t i = 0; i < c->nvictims; i++)
        sum = add_sat(sum, ni->pods[c->victims[i]].priority + (int64_t)INT32_MAX + 1);
    return sum;
}

/* GetEarliestPodStartTime: the earliest start among the highest-priority
 * victims (NULL: now). */
static const char *earliest_start(const node_info *ni, const candidate *c)
{
    const pod_info *first = &ni->pods[c->victims[0]];
    const char *earliest = first->start_time;
    int64_t top = first->priority;
    for (size_t i = 1; i < c->nvictims; i++) {
        const pod_info *p = &ni->pods[c->victims[i]];
        if (p->priority > top) {
            top = p->priority;
            earliest = p->start_time;
        } else if (p->priority == top && starts_before(p->start_time, earliest)) {
            earliest = p->start_time;
        }
    }
    return earliest;
}

/* pickOneNodeForPreemption without PDBs: the lowest highest-priority victim,
 * then the lowest priority sum, the fewest victims, the latest start. */
static bool better_candidate(const sched *s, const candidate *a, const candidate *b)
{
    const node_info *na = &s->nodes[a->node], *nb = &s->nodes[b->node];
    int64_t ha = na->pods[a->victims[0]].priority, hb = nb->pods[b->victims[0]].priority;
    if (ha != hb) return ha < hb;
    int64_t sa = victims_sum(na, a), sb = victims_sum(nb, b);
    if (sa != sb) return sa < sb;
    if (a->nvictims != b->nvictims) return a->nvictims < b->nvictims;
    return starts_before(earliest_start(nb, b), earliest_start(na, a));
}

static int take_candidate(const sched *s, const candidate *c, ctl_sched_result *out, gp_error *err)
{
    const node_info *ni = &s->nodes[c->node];
    out->victims = calloc(c->nvictims, sizeof *out->victims);
    if (!out->victims) return oom(err);
    for (size_t i = 0; i < c->nvictims; i++)
        out->victims[i] = ni->pods[c->victims[i]].obj;
    out->victim_count = c->nvictims;
    out->nominated = (int)c->node;
    return 0;
}

static int find_node(const sched *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->nodes[i].name, name) == 0) return (int)i;
    return -1;
}

/* podTerminatingByPreemption. */
static bool terminating_by_preemption(const json_t *pod)
{
    if (!kube_deleting(pod)) return false;
    const json_t *c = kube_condition(pod, "DisruptionTarget");
    return kube_str_is(c, "status", "True") && kube_str_is(c, "reason", "PreemptionByScheduler");
}

/* PodEligibleToPreemptOthers: NULL when eligible, else why not. */
static const char *not_eligible(const sched *s, const status *st)
{
    if (strcmp(kube_str(kube_get(s->pod, "spec"), "preemptionPolicy"), "Never") == 0)
        return MSG_POLICY_NEVER;
    const char *name = kube_str(kube_get(s->pod, "status"), "nominatedNodeName");
    int k = *name ? find_node(s, name) : -1;
    if (k < 0 || !st[k].set || st[k].code == ST_UNRESOLVABLE) return NULL;
    const node_info *ni = &s->nodes[k];
    for (size_t j = 0; j < ni->npods; j++)
        if (ni->pods[j].priority < s->self.priority && terminating_by_preemption(ni->pods[j].obj))
            return MSG_TERMINATING;
    return NULL;
}

/* Dry-runs preemption on every Unschedulable node; 1 when a candidate was
 * taken into out, 0 with pst filled otherwise. */
static int find_candidates(sched *s, const status *st, status *pst, ctl_sched_result *out)
{
    candidate best = {0}, c = {0};
    bool found = false;
    int rc = 0;
    for (size_t i = 0; rc >= 0 && i < s->n; i++) {
        if (!st[i].set || st[i].code != ST_UNSCHEDULABLE) continue;
        memset(&c, 0, sizeof c);
        rc = select_victims(s, i, &pst[i], &c);
        if (rc == 1 && (!found || better_candidate(s, &c, &best))) {
            free(best.victims);
            best = c;
            found = true;
        } else {
            free(c.victims);
        }
    }
    if (rc >= 0 && found)
        rc = take_candidate(s, &best, out, &s->err) < 0 ? -1 : 1;
    else if (rc >= 0)
        rc = 0;
    free(best.victims);
    return rc;
}

/* DefaultPreemption.PostFilter: the "preemption: ..." text, or NULL in *post
 * when a node was nominated (success adds no text). */
static int preempt(sched *s, const status *st, ctl_sched_result *out, char **post)
{
    *post = NULL;
    const char *why = not_eligible(s, st);
    if (why) {
        *post = gp_format("preemption: %s", why);
        return *post ? 0 : oom(&s->err);
    }
    status *pst = calloc(s->n, sizeof *pst);
    if (!pst) return oom(&s->err);
    int rc = find_candidates(s, st, pst, out);
    if (rc == 0) {
        out->clear_nominated = true;
        char *inner = fit_error(s->n, NULL, pst, R_NOT_HELPFUL, NULL);
        *post = inner ? gp_format("preemption: %s", inner) : NULL;
        free(inner);
        rc = *post ? 0 : oom(&s->err);
    }
    statuses_free(pst, s->n);
    return rc < 0 ? -1 : 0;
}

/* ---- one attempt ---------------------------------------------------------- */

/* Filters the nominated node first (schedule_one.go evaluateNominatedNode);
 * *chosen is it when it fits. A failure stays recorded, as it does in Go. */
static int try_nominated(sched *s, status *st, int *chosen)
{
    *chosen = -1;
    const char *name = kube_str(kube_get(s->pod, "status"), "nominatedNodeName");
    int k = *name ? find_node(s, name) : -1;
    if (k < 0) return 0;
    if (run_filters(s, &s->nodes[k], NULL, &st[k]) < 0) return -1;
    st[k].set = st[k].code != ST_SUCCESS;
    if (!st[k].set) *chosen = k;
    return 0;
}

/* kube-scheduler's numFeasibleNodesToFind with percentageOfNodesToScore
 * unset (schedule_one.go): every node below 100 nodes; else an adaptive
 * 50% - n/125 (at least 5%), and never fewer than 100 nodes. Filtering
 * stops once that many feasible nodes are found. */
static size_t feasible_to_find(size_t n)
{
    if (n < 100) return n;
    long percent = 50 - (long)(n / 125);
    if (percent < 5) percent = 5;
    size_t k = n * (size_t)percent / 100;
    return k < 100 ? 100 : k;
}

/* Filters the nodes from where the last decision stopped (its
 * nextStartNodeIndex), so that successive pods spread over the nodes. A
 * failure visits every node, so the FitError counts them all. */
static int filter_all(sched *s, prefilter_mode mode, const name_set *names, status *st,
                      bool *feasible, size_t *nfeasible)
{
    *nfeasible = 0;
    size_t want = feasible_to_find(s->n), visited = 0;
    size_t start = s->n ? s->next_start % s->n : 0;
    for (; visited < s->n && *nfeasible < want; visited++) {
        size_t i = (start + visited) % s->n;
        if (mode == PF_SET && !name_set_has(names, s->nodes[i].name)) continue;
        if (run_filters(s, &s->nodes[i], NULL, &st[i]) < 0) return -1;
        st[i].set = st[i].code != ST_SUCCESS;
        feasible[i] = !st[i].set;
        *nfeasible += feasible[i];
    }
    s->next_start = s->n ? (start + visited) % s->n : 0;
    return 0;
}

/* The unschedulable outcome: the filter diagnosis, then preemption's. */
static int fail_message(sched *s, const char *pre, const status *st, const char *absent,
                        ctl_sched_result *out)
{
    char *post = NULL;
    if (preempt(s, st, out, &post) < 0) return -1;
    out->message = fit_error(s->n, pre, st, absent, post);
    free(post);
    return out->message ? 0 : oom(&s->err);
}

/* After PreFilter: the nominated node, then every node PreFilter let
 * through; the best feasible node, or the failure message. */
static int filter_and_choose(sched *s, prefilter_mode mode, const name_set *names, status *st,
                             unsigned tie_break, ctl_sched_result *out)
{
    if (try_nominated(s, st, &out->chosen) < 0) return -1;
    if (out->chosen >= 0) return 0;
    bool *feasible = calloc(s->n, sizeof *feasible);
    if (!feasible) return oom(&s->err);
    size_t nfeasible = 0;
    int rc = filter_all(s, mode, names, st, feasible, &nfeasible);
    if (rc == 0 && nfeasible)
        out->chosen = choose(s, feasible, tie_break);
    else if (rc == 0)
        rc = fail_message(s, NULL, st, mode == PF_SET ? R_AFFINITY_ABSENT : NULL, out);
    free(feasible);
    return rc;
}

static int decide(sched *s, unsigned tie_break, ctl_sched_result *out)
{
    name_set names = {0};
    prefilter_mode mode = PF_ALL;
    status *st = calloc(s->n, sizeof *st);
    int rc = st ? prefilter(s->pod, &names, &mode, &s->err) : oom(&s->err);
    /* A PreFilter rejection leaves every node absent, with its status. */
    if (rc == 0 && mode == PF_CONFLICT)
        rc = fail_message(s, R_AFFINITY_CONFLICT, st, NULL, out);
    else if (rc == 0)
        rc = filter_and_choose(s, mode, &names, st, tie_break, out);
    free(names.v);
    statuses_free(st, s->n);
    return rc;
}

static int fail_error(ctl_sched_result *out, const gp_error *err)
{
    ctl_sched_result_free(out);
    out->error = true;
    out->message = strdup(err->text);
    return -1;
}

/* The nodes and their pods, parsed once for many decisions. */
struct ctl_sched_cluster {
    sched s; /* s.self and s.pod are set per decision */
};

ctl_sched_cluster *ctl_sched_cluster_new(const ctl_sched_node *nodes, size_t n, gp_error *err)
{
    return ctl_sched_cluster_new_memo(nodes, n, NULL, err);
}

ctl_sched_cluster *ctl_sched_cluster_new_memo(const ctl_sched_node *nodes, size_t n,
                                              ctl_sched_memo *memo, gp_error *err)
{
    ctl_sched_cluster *c = calloc(1, sizeof *c);
    if (!c) {
        oom(err);
        return NULL;
    }
    sched *s = &c->s;
    if (kube_quantity_parse(DEFAULT_MILLI_CPU, &s->nz.cpu, err) < 0 ||
        kube_quantity_parse(DEFAULT_MEMORY, &s->nz.memory, err) < 0)
        goto fail;
    s->nodes = calloc(n ? n : 1, sizeof *s->nodes);
    if (!s->nodes) {
        oom(err);
        goto fail;
    }
    for (; s->n < n; s->n++)
        if (node_info_init(&s->nodes[s->n], &nodes[s->n], &s->nz, memo, err) < 0) {
            s->n++;
            goto fail;
        }
    if (memo) {
        size_t passed = 0;
        for (size_t i = 0; i < n; i++)
            passed += nodes[i].pod_count;
        ctl_sched_memo_trim(memo, passed);
        memo_end_build(memo);
    }
    return c;
fail:
    ctl_sched_cluster_free(c);
    return NULL;
}

int ctl_sched_cluster_assume(ctl_sched_cluster *c, size_t node, const json_t *pod, gp_error *err)
{
    if (node >= c->s.n) return 0;
    node_info *ni = &c->s.nodes[node];
    pod_info *v = realloc(ni->pods, (ni->npods + 2) * sizeof *v);
    if (!v) return oom(err);
    ni->pods = v;
    if (pod_info_init(&ni->pods[ni->npods], pod, &c->s.nz, err) < 0) {
        pod_info_free(&ni->pods[ni->npods]);
        return -1;
    }
    ni->npods++;
    return 0;
}

void ctl_sched_cluster_free(ctl_sched_cluster *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->s.n; i++)
        node_info_free(&c->s.nodes[i]);
    free(c->s.nodes);
    free(c);
}

int ctl_sched_schedule_in(ctl_sched_cluster *c, const json_t *pod, unsigned tie_break,
                          ctl_sched_result *out)
{
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    out->nominated = -1;
    if (c->s.n == 0) {
        /* ErrNoNodesAvailable: UnschedulableAndUnresolvable, so the reason is
         * still Unschedulable, and the nominated node is cleared. */
        out->clear_nominated = true;
        out->message = strdup(MSG_NO_NODES);
        if (out->message) return 0;
        gp_error err;
        oom(&err);
        return fail_error(out, &err);
    }
    sched *s = &c->s;
    memset(&s->err, 0, sizeof s->err);
    s->pod = pod;
    s->tolerations = kube_get(kube_get(pod, "spec"), "tolerations");
    s->node_selector = kube_get(kube_get(pod, "spec"), "nodeSelector");
    s->required = required_affinity(pod);
    s->node_name = kube_str(kube_get(pod, "spec"), "nodeName");
    int rc = pod_info_init(&s->self, pod, &s->nz, &s->err);
    if (rc == 0) rc = decide(s, tie_break, out);
    if (rc < 0) fail_error(out, &s->err);
    pod_info_free(&s->self);
    memset(&s->self, 0, sizeof s->self);
    s->pod = NULL;
    return rc < 0 ? -1 : 0;
}

int ctl_sched_schedule(const json_t *pod, const ctl_sched_node *nodes, size_t n, unsigned tie_break,
                       ctl_sched_result *out)
{
    gp_error err = {0};
    ctl_sched_cluster *c = ctl_sched_cluster_new(nodes, n, &err);
    if (!c) {
        memset(out, 0, sizeof *out);
        out->chosen = -1;
        out->nominated = -1;
        return fail_error(out, &err);
    }
    int rc = ctl_sched_schedule_in(c, pod, tie_break, out);
    ctl_sched_cluster_free(c);
    return rc;
}

void ctl_sched_result_free(ctl_sched_result *r)
{
    if (!r) return;
    free(r->message);
    free(r->victims);
    memset(r, 0, sizeof *r);
    r->chosen = -1;
    r->nominated = -1;
}

/* ---- what the caller writes ----------------------------------------------- */

static json_t *condition(const char *reason, const char *message, const char *now)
{
    json_t *c = json_object();
    if (!c) return NULL;
    if (json_object_set_new(c, "type", json_string("PodScheduled")) < 0 ||
        json_object_set_new(c, "status", json_string("False")) < 0 ||
        json_object_set_new(c, "lastProbeTime", json_null()) < 0 ||
        json_object_set_new(c, "lastTransitionTime", json_string(now)) < 0 ||
        json_object_set_new(c, "reason", json_string(reason)) < 0 ||
        json_object_set_new(c, "message", json_string(message)) < 0) {
        json_decref(c);
        return NULL;
    }
    return c;
}

json_t *ctl_sched_unschedulable_condition(const char *message, const char *now_rfc3339)
{
    return condition("Unschedulable", message, now_rfc3339);
}

json_t *ctl_sched_error_condition(const char *message, const char *now_rfc3339)
{
    return condition("SchedulerError", message, now_rfc3339);
}

char *ctl_sched_event_note(const char *message)
{
    size_t len = strlen(message);
    if (len <= NOTE_LIMIT) return strdup(message);
    size_t keep = NOTE_LIMIT - strlen(NOTE_SUFFIX);
    char *note = malloc(NOTE_LIMIT + 1);
    if (!note) return NULL;
    memcpy(note, message, keep);
    memcpy(note + keep, NOTE_SUFFIX, sizeof NOTE_SUFFIX);
    return note;
}

bool ctl_sched_wants(const json_t *pod)
{
    const json_t *spec = kube_get(pod, "spec");
    if (*kube_str(spec, "nodeName")) return false;
    const char *scheduler = kube_str(spec, "schedulerName");
    if (*scheduler && strcmp(scheduler, "default-scheduler") != 0) return false;
    if (kube_deleting(pod)) return false;
    if (json_array_size(kube_get(spec, "schedulingGates")) > 0) return false;
    return !kube_pod_terminal(pod);
}

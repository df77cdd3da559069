#include "controllers/controllers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/controllers_internal.h"
#include "controllers/daemonset.h"
#include "controllers/garbage_collector_internal.h"
#include "controllers/namespace_internal.h"
#include "controllers/kubelet_internal.h"
#include "controllers/kubelet_runtime_internal.h"
#include "controllers/namespace_defaults.h"
#include "kube/time.h"
#include "util/hash.h"

/* kwok re-stamps node heartbeats every 20 s plus up to 25 s of jitter. */
#define HEARTBEAT_SECONDS 20
#define HEARTBEAT_JITTER  25
/* kwok holds each node's Lease (40 s) and renews it every quarter of that,
 * plus up to 4 % (pkg/kwok/controllers/controller.go: leaseDuration / 4,
 * jitter 0.04, as the kubelet's lease controller): the heartbeat the node
 * lifecycle controller reads. Under a grace period shorter than 40 s the
 * renewals come every quarter of it instead, so that a quick test cluster
 * keeps its nodes. */
#define LEASE_DURATION_SECONDS 40
#define LEASE_RENEW_MS         10000
#define LEASE_JITTER_PERMILLE  40
/* Heartbeats and renewals are looked at this often (or twice a renewal
 * interval, when that is shorter), not on every pass: a thousand nodes'
 * renewals then come in one pass a second instead of a pass each. */
#define KUBELET_SWEEP_MS 1000
/* A quiet cluster is still looked at this often (heartbeats, retries). */
#define TICK_MS 1000
/* Pods the scheduler binds in one pass: then the kubelet and the DaemonSet
 * controller get their turn, so a burst of pods starts running while the
 * rest are still being scheduled (kube-scheduler, too, binds one at a time
 * while the kubelets work). A pass takes tens of milliseconds at thousands
 * of pods, so this also bounds binds a second; the value was chosen with
 * bench/controllers_bench.sh (pods Running per second at 1,000 nodes). */
#define MAX_BINDS_PER_PASS 500
/* Threads that send the controllers' writes (write_queue_internal.h): with the
 * thread that decides, they keep both cores of a small machine busy. */
#define WRITE_WORKERS 2
/* Passes in a row that keep writing before the runtime takes a breath. */
#define MAX_BUSY_PASSES 1000

/* ---- fake kubelet ------------------------------------------------------------ */

static const json_t *find_by_name(const json_t *list, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const char *n = kube_str_or_null(kube_obj(o, "metadata"), "name");
        if (n && name && strcmp(n, name) == 0) return o;
    }
    return NULL;
}

static const char *internal_ip(const json_t *node)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(json_object_get(node, "status"), "addresses"), i, a)
    {
        const char *t = json_string_value(json_object_get(a, "type"));
        if (t && strcmp(t, "InternalIP") == 0)
            return json_string_value(json_object_get(a, "address"));
    }
    return NULL;
}

/* When the node's heartbeat is due: 20 s after the last, plus a jitter of
 * up to 25 s that is fixed per node (its name picks it). */
static bool heartbeat_due(const node_summary *n, time_t now)
{
    if (!n->beat_known) return true;
    return now - n->beat >= HEARTBEAT_SECONDS + (time_t)(n->jitter % (HEARTBEAT_JITTER + 1));
}

static const json_t *lease_of(const snapshot *s, const char *node)
{
    return ctl_node_lease(s, node);
}

/* Whether the node's Lease is due for renewal: the renewal interval after
 * its renewTime, plus a jitter of up to 4 % of it fixed per node. */
static bool lease_due(const ctl_loop *c, const node_summary *n, const json_t *lease, int64_t now_ms)
{
    kube_time t;
    if (!kube_time_parse(kube_str(kube_obj(lease, "spec"), "renewTime"), &t)) return true;
    int64_t renewed = t.sec * 1000 + t.nsec / 1000000;
    int64_t jitter = c->lease_renew_ms * (int64_t)(n->jitter % (LEASE_JITTER_PERMILLE + 1)) / 1000;
    return now_ms - renewed >= c->lease_renew_ms + jitter;
}

/* The kubelet's node Lease (kube-node-lease/NODE), created with the node's
 * first status and renewed every renewal interval; kubectl describe node
 * shows it, and the node lifecycle controller takes its renewTime for a
 * heartbeat. */
static int renew_lease(ctl_loop *c, const snapshot *s, const json_t *node, int64_t now_ms)
{
    const char *name = kube_str_or_null(kube_obj(node, "metadata"), "name");
    char when[48], path[400];
    kube_time_format(now_ms / 1000, when);
    /* MicroTime: six decimals */
    snprintf(when + strlen(when) - 1, sizeof when - strlen(when) + 1, ".%03d000Z",
             (int)(now_ms % 1000));
    if (lease_of(s, name)) {
        ctl_object_path(path, sizeof path, "coordination.k8s.io", "leases", "kube-node-lease", name,
                        NULL);
        json_t *patch = json_pack("{s:{s:s}}", "spec", "renewTime", when);
        int w = ctl_send(c, "PATCH", path, NULL, CTL_MERGE, patch, NULL);
        json_decref(patch);
        return w;
    }
    ctl_object_path(path, sizeof path, "coordination.k8s.io", "leases", "kube-node-lease", NULL,
                    NULL);
    json_t *lease = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:[{s:s, s:s, s:s, s:s}]}, s:{s:s, s:i, s:s}}", "apiVersion",
        "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", name, "namespace",
        "kube-node-lease", "ownerReferences", "apiVersion", "v1", "kind", "Node", "name", name,
        "uid", kube_str_or_null(kube_obj(node, "metadata"), "uid"), "spec", "holderIdentity", name,
        "leaseDurationSeconds", LEASE_DURATION_SECONDS, "renewTime", when);
    int w = ctl_send(c, "POST", path, NULL, NULL, lease, NULL);
    json_decref(lease);
    return w;
}

/* ---- the fake kubelet over simulated nodes ---- */

/* Room for this pass's facts, one per node. */
static int facts_room(ctl_loop *c, size_t n)
{
    if (n <= c->facts_cap) return 0;
    ctl_node_facts *f = realloc(c->facts, n * sizeof *f);
    if (f) c->facts = f;
    bool *has = f ? realloc(c->has_facts, n * sizeof *has) : NULL;
    if (has) c->has_facts = has;
    bool *re = has ? realloc(c->resync, n * sizeof *re) : NULL;
    if (re) c->resync = re;
    if (!f || !has || !re) return -1;
    c->facts_cap = n;
    return 0;
}

/* What every managed node's agent says this pass (controllers.h), and which
 * nodes have a new kubelet process. */
static void observe_nodes(ctl_loop *c, const snapshot *s, int64_t now_ms)
{
    size_t n = json_array_size(s->nodes);
    c->any_resync = false;
    if (facts_room(c, n) != 0) n = c->facts_cap; /* the rest waits for memory */
    const ctl_node_agents *a = c->opt.agents;
    for (size_t i = 0; i < n; i++) {
        const node_summary *ns = s->node_sums[i];
        c->has_facts[i] = false;
        c->resync[i] = false;
        if (!ns->managed || !ns->name) continue;
        ctl_node_facts *f = &c->facts[i];
        if (a->observe(a->ctx, ns->name, now_ms, f) != 0) continue;
        c->has_facts[i] = true;
        json_int_t seen = json_integer_value(json_object_get(c->boots, ns->name));
        if (f->kubelet_running && (unsigned long)seen != f->boot) {
            /* a new kubelet process starts the node's running pods again;
             * so does the first one this loop sees: a node made now has
             * none, and the pods a restarted API server finds Running were
             * started by agents that are gone (their nodes rebooted) */
            c->resync[i] = true;
            c->any_resync |= c->resync[i];
            json_object_set_new(c->boots, ns->name, json_integer((json_int_t)f->boot));
        }
    }
}

/* The facts of the node at position i of the snapshot, or NULL. */
static const ctl_node_facts *facts_at(const ctl_loop *c, size_t i)
{
    return c->opt.agents && i < c->facts_cap && c->has_facts[i] ? &c->facts[i] : NULL;
}

static const ctl_node_facts *facts_of(const ctl_loop *c, const snapshot *s, const char *node,
                                      size_t *at)
{
    const json_t *pos = node ? json_object_get(s->node_index, node) : NULL;
    if (!pos) return NULL;
    *at = (size_t)json_integer_value(pos);
    return facts_at(c, *at);
}

/* A kubelet over a simulated node: nothing while its process is down; else
 * its status as the node's facts make it (and heartbeats when due), the
 * labels the node publishes, and its Lease. */
static int kubelet_agent_node(ctl_loop *c, const snapshot *s, const json_t *node, size_t i,
                              int64_t now_ms, bool sweep)
{
    const node_summary *n = s->node_sums[i];
    const ctl_node_facts *f = facts_at(c, i);
    if (!f || !f->kubelet_running) return 0;
    int writes = 0;
    const json_t *lease = lease_of(s, n->name);
    if (!lease || (sweep && lease_due(c, n, lease, now_ms)))
        writes += renew_lease(c, s, node, now_ms);
    const char *ip = internal_ip(node);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "10.89.0.%zu", i % 250 + 2);
    bool beat = sweep && heartbeat_due(n, (time_t)(now_ms / 1000));
    json_t *patch = ctl_kubelet_runtime_node_status(node, f, ip ? ip : fallback, now_ms, beat);
    char path[400];
    if (patch) {
        ctl_object_path(path, sizeof path, "", "nodes", NULL, n->name, "status");
        writes += ctl_send_tracked(c, ctl_wq_write_new("PATCH", path, NULL, CTL_SMP, patch),
                                   "nodes", node, NULL, NULL);
    }
    json_t *labels = ctl_kubelet_runtime_labels(node, f);
    if (labels) {
        ctl_object_path(path, sizeof path, "", "nodes", NULL, n->name, NULL);
        writes += ctl_send(c, "PATCH", path, NULL, CTL_MERGE, labels, NULL);
        json_decref(labels);
    }
    return writes;
}

/* The fake kubelet of every managed node that is up: its first status at
 * once, then heartbeats and Lease renewals when due (looked at on `sweep`
 * passes). A node whose kubelet is down posts nothing. */
static int kubelet_nodes(ctl_loop *c, const snapshot *s, int64_t now_ms, bool sweep)
{
    time_t now = (time_t)(now_ms / 1000);
    int writes = 0;
    if (c->opt.agents) observe_nodes(c, s, now_ms);
    size_t i;
    json_t *node;
    json_array_foreach(s->nodes, i, node)
    {
        const node_summary *n = s->node_sums[i];
        if (!n->managed || n->held_down || ctl_waiting_at(c, s, "nodes", NULL, n->name, n->rv))
            continue;
        if (c->opt.agents) {
            writes += kubelet_agent_node(c, s, node, i, now_ms, sweep);
            continue;
        }
        json_t *patch = NULL;
        const json_t *lease = lease_of(s, n->name);
        bool renew = !lease || (sweep && lease_due(c, n, lease, now_ms));
        if (!n->ready) {
            const char *ip = internal_ip(node);
            char fallback[32];
            snprintf(fallback, sizeof fallback, "10.89.0.%zu", i % 250 + 2);
            patch = ctl_kubelet_node_init(node, ip ? ip : fallback, now);
            renew = true;
        } else if (sweep && heartbeat_due(n, now)) {
            patch = ctl_kubelet_node_heartbeat(node, now);
        }
        if (renew) writes += renew_lease(c, s, node, now_ms);
        if (!patch) continue;
        char path[400];
        ctl_object_path(path, sizeof path, "", "nodes", NULL,
                        kube_str_or_null(kube_obj(node, "metadata"), "name"), "status");
        writes += ctl_send_tracked(c, ctl_wq_write_new("PATCH", path, NULL, CTL_SMP, patch),
                                   "nodes", node, NULL, NULL);
    }
    return writes;
}

/* The pod-ready patch with an address no other pod on the node has; the
 * address is then taken. With `crashed`, that container waits in
 * CrashLoopBackOff (a simulated node's start of it failed). */
static json_t *ready_patch(ctl_loop *c, const json_t *pod, const json_t *node, snapshot *s,
                           const char *crashed, time_t now)
{
    const char *name = kube_str_or_null(kube_obj(node, "metadata"), "name");
    json_t *ips = ctl_pod_ips(c, s);
    json_t *used = json_object_get(ips, name);
    if (!used) json_object_set_new(ips, name, used = json_object());
    for (unsigned index = 0; index < 4096; index++) {
        char ip[CTL_KUBELET_IP_MAX];
        if (!ctl_kubelet_pod_address(pod, node, index, ip)) return NULL;
        if (json_object_get(used, ip)) continue;
        /* the pod has no address yet (kubelet_pods): pod-ready's status */
        json_t *patch = ctl_kubelet_pod_started(pod, node, ip, crashed, now);
        if (patch) json_object_set_new(used, ip, json_true());
        return patch;
    }
    return NULL;
}

static const json_t *runtime_class_of(const snapshot *s, const json_t *pod)
{
    const char *rc = kube_str_or_null(kube_get(pod, "spec"), "runtimeClassName");
    return rc ? find_by_name(s->runtimeclasses, rc) : NULL;
}

/* Whether the pod's status shows container `name` (NULL: any) waiting in
 * CrashLoopBackOff. */
static bool shows_crash(const json_t *pod, const char *name)
{
    size_t i;
    const json_t *cs;
    json_array_foreach(json_object_get(kube_obj(pod, "status"), "containerStatuses"), i, cs)
    {
        if (name && !kube_str_is(cs, "name", name)) continue;
        if (kube_str_is(kube_get(kube_get(cs, "state"), "waiting"), "reason", "CrashLoopBackOff"))
            return true;
    }
    return false;
}

static int send_pod_status(ctl_loop *c, const json_t *pod, const char *path, json_t *patch,
                           const char *node, const char *ip)
{
    char spath[620];
    snprintf(spath, sizeof spath, "%s/status", path);
    return ctl_send_tracked(c, ctl_wq_write_new("PATCH", spath, NULL, CTL_SMP, patch), "pods", pod,
                            node, ip);
}

/* kuberuntime_manager.go doBackOff's event about the container. */
static int backoff_event(ctl_loop *c, const json_t *pod, const char *container, time_t now)
{
    const json_t *m = kube_obj(pod, "metadata");
    char note[900];
    snprintf(note, sizeof note, "Back-off restarting failed container %s in pod %s_%s(%s)",
             container, kube_str(m, "name"), kube_str(m, "namespace"), kube_str(m, "uid"));
    return ctl_record_event(c, pod, "Pod", "v1", "Warning", "BackOff", note, "kubelet",
                            (int64_t)now * 1000);
}

/* A running pod of a node whose kubelet is a new process (a reboot): its
 * containers are started again, and the node's agent says how that goes. */
static int restart_pod(ctl_loop *c, snapshot *s, const json_t *node, const char *path, time_t now)
{
    json_t *pod = ctl_get(c, path); /* the snapshot keeps a settled pod cut */
    if (!pod) return 0;
    const ctl_node_agents *a = c->opt.agents;
    char crashed[256] = "";
    ctl_pod_start how = a->pod_start(a->ctx, node, pod, s->configmaps, (int64_t)now * 1000, crashed,
                                     sizeof crashed);
    bool crashes = how == CTL_POD_CRASHES && crashed[0];
    int writes = 0;
    if (crashes != shows_crash(pod, crashes ? crashed : NULL)) {
        const char *ip = kube_str_or_null(kube_obj(pod, "status"), "podIP");
        json_t *patch = ctl_kubelet_pod_started(pod, node, ip, crashes ? crashed : NULL, now);
        if (patch) writes += send_pod_status(c, pod, path, patch, NULL, NULL);
        if (patch && crashes) writes += backoff_event(c, pod, crashed, now);
    }
    json_decref(pod);
    return writes;
}

/* The sandbox of a pod on a simulated node: the handler its RuntimeClass
 * names must be one the node's CRI serves now. An error (the caller frees
 * it) when it is not. */
static char *sandbox_error(const snapshot *s, const json_t *pod, const ctl_node_facts *f)
{
    const json_t *rc = runtime_class_of(s, pod);
    const char *handler = kube_str_or_null(rc, "handler");
    if (!handler) return NULL; /* the default runtime, which a running CRI has */
    for (size_t i = 0; i < f->loaded_count; i++)
        if (strcmp(f->loaded[i], handler) == 0) return NULL;
    char error[600];
    ctl_kubelet_no_runtime_error(pod, handler, f->sandbox_error_v2, error, sizeof error);
    return strdup(error);
}

static int kubelet_pods(ctl_loop *c, snapshot *s, time_t now)
{
    int writes = 0;
    const ctl_node_agents *agents = c->opt.agents;
    size_t i;
    json_t *pod;
    json_array_foreach(s->pods, i, pod)
    {
        /* running with an address and not being deleted: nothing for the
         * kubelet (pod-ready and the sandbox check want no address), and
         * at 150,000 pods not looking further is most of a pass; but a
         * simulated node that rebooted starts its pods again */
        const pod_summary *p = s->pod_sums[i];
        if ((p->ip && !p->deleting && !c->any_resync) || !p->node || ctl_pod_waiting(c, s, p))
            continue;
        const char *node_name = p->node;
        size_t at = 0;
        const ctl_node_facts *f = agents ? facts_of(c, s, node_name, &at) : NULL;
        if (p->ip && !p->deleting && !(f && c->resync[at])) continue;
        const json_t *node = ctl_node_named(s, node_name);
        /* a node whose kubelet is down leaves its pods as they are: not
         * Running, not deleted once Terminating */
        if (!node || !ctl_kubelet_manages(node) || ctl_node_held_down(node)) continue;
        /* on a simulated node, also while its kubelet does not run, and
         * while the runtime does not answer (kubelet.go syncLoop: "Skipping
         * pod synchronization" while runtimeErrors says anything; a sync
         * in the 30 s before that fails on the runtime all the same) */
        if (agents && (!f || !f->kubelet_running || !f->runtime_up)) continue;
        const char *ns = kube_str_or_null(kube_obj(pod, "metadata"), "namespace"),
                   *name = kube_str_or_null(kube_obj(pod, "metadata"), "name");
        char path[600];
        ctl_object_path(path, sizeof path, "", "pods", ns, name, NULL);
        if (p->ip && !p->deleting) {
            writes += restart_pod(c, s, node, path, now);
            continue;
        }
        if (kube_deleting(pod)) {
            if (!ctl_kubelet_should_finish_delete(pod)) continue;
            if (agents) agents->pod_stop(agents->ctx, node_name, pod, (int64_t)now * 1000);
            json_t *fin = ctl_kubelet_pod_finalizers_patch(pod);
            ctl_wq_write *del =
                ctl_wq_write_new("DELETE", path, "gracePeriodSeconds=0", NULL, NULL);
            ctl_wq_write *w = del;
            if (fin) { /* finalizers emptied first, then the delete completes */
                w = ctl_wq_write_new("PATCH", path, NULL, CTL_MERGE, fin);
                ctl_wq_write_then(w, del);
            }
            writes += ctl_send_tracked(c, w, "pods", pod, NULL, NULL) * (fin ? 2 : 1);
            continue;
        }
        json_t *patch = NULL;
        char *note = NULL;
        const json_t *rc = runtime_class_of(s, pod);
        if (f) {
            char *error = sandbox_error(s, pod, f);
            if (error) patch = ctl_kubelet_pod_sandbox_failed(pod, node, error, now, &note);
            free(error);
        } else if (c->opt.runtime_check && rc) {
            patch = ctl_kubelet_pod_runtime_missing(pod, node, rc, now, &note);
        }
        if (patch) {
            /* held: said once, when the pod first gets stuck (an empty
             * patch means it shows that already) */
            if (json_object_size(patch) > 0) {
                writes += send_pod_status(c, pod, path, json_incref(patch), NULL, NULL);
                writes += ctl_record_event(c, pod, "Pod", "v1", CTL_KUBELET_SANDBOX_EVENT_TYPE,
                                           CTL_KUBELET_SANDBOX_EVENT_REASON, note, "kubelet",
                                           (int64_t)now * 1000);
            }
            json_decref(patch);
            free(note);
            continue;
        }
        free(note);
        char crashed[256] = "";
        if (f && agents->pod_start(agents->ctx, node, pod, s->configmaps, (int64_t)now * 1000,
                                   crashed, sizeof crashed) != CTL_POD_CRASHES)
            crashed[0] = '\0';
        patch = ready_patch(c, pod, node, s, crashed[0] ? crashed : NULL, now);
        if (!patch) continue;
        char given[64];
        const char *addr = kube_str_or_null(kube_get(patch, "status"), "podIP");
        snprintf(given, sizeof given, "%s", addr ? addr : "");
        writes +=
            send_pod_status(c, pod, path, patch, addr ? node_name : NULL, addr ? given : NULL);
        if (crashed[0]) writes += backoff_event(c, pod, crashed, now);
    }
    return writes;
}

/* ---- scheduler ---------------------------------------------------------------- */

/* What the scheduler's decisions depend on besides the pod itself: the
 * nodes and the pods bound to them. */
static unsigned long long cluster_fingerprint(const snapshot *s)
{
    uint64_t h = GP_HASH_SEED;
    for (size_t i = 0; i < json_array_size(s->nodes); i++)
        h = gp_hash_u64(h, s->node_sums[i]->rv);
    for (size_t i = 0; i < json_array_size(s->pods); i++) {
        const pod_summary *p = s->pod_sums[i];
        if (p->node && !p->terminal) h = gp_hash_str(h, p->uid);
    }
    return h;
}

/* Node views for the scheduler: each node with the non-terminal pods bound
 * to it (or assumed there earlier in this pass). */
typedef struct node_view {
    ctl_sched_node *nodes;
    const json_t ***pods;
    size_t n;
} node_view;

static void add_bound(node_view *v, size_t k, const json_t *pod)
{
    const json_t **list = realloc(v->pods[k], (v->nodes[k].pod_count + 1) * sizeof *list);
    if (!list) return;
    list[v->nodes[k].pod_count++] = pod;
    v->pods[k] = list;
    v->nodes[k].pods = list;
}

static void build_view(ctl_loop *c, const snapshot *s, node_view *v)
{
    v->n = json_array_size(s->nodes);
    v->nodes = calloc(v->n ? v->n : 1, sizeof *v->nodes);
    v->pods = calloc(v->n ? v->n : 1, sizeof *v->pods);
    for (size_t k = 0; k < v->n; k++)
        v->nodes[k].node = json_array_get(s->nodes, k);
    size_t i;
    json_t *pod;
    json_array_foreach(s->pods, i, pod)
    {
        const pod_summary *p = s->pod_sums[i];
        const char *node = p->node;
        char bound[256];
        if (!node && ctl_pod_waiting(c, s, p)) {
            /* its binding is on the way: counted where it goes */
            char key[600];
            ctl_inflight_key(key, sizeof key, "pods", p->ns, p->name);
            if (ctl_inflight_node(c->inflight, key, bound, sizeof bound)) node = bound;
        }
        if (!node || p->terminal) continue;
        const json_t *at = json_object_get(s->node_index, node);
        if (at) add_bound(v, (size_t)json_integer_value(at), pod);
    }
}

static void free_view(node_view *v)
{
    for (size_t k = 0; k < v->n; k++)
        free(v->pods[k]);
    free(v->pods);
    free(v->nodes);
}

static const json_t *scheduled_condition(const json_t *pod)
{
    const json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions");
    return kube_find(conds, "type", "PodScheduled");
}

/* handleSchedulingFailure: the condition only when it changed, the event
 * every attempt. */
static int schedule_failed(ctl_loop *c, const json_t *pod, const ctl_sched_result *r, time_t now)
{
    char when[32], path[600];
    kube_time_format(now, when);
    json_t *cond = r->error ? ctl_sched_error_condition(r->message, when)
                            : ctl_sched_unschedulable_condition(r->message, when);
    const json_t *old = scheduled_condition(pod);
    int writes = 0;
    bool same = old &&
                json_equal(json_object_get(old, "status"), json_object_get(cond, "status")) &&
                json_equal(json_object_get(old, "reason"), json_object_get(cond, "reason")) &&
                json_equal(json_object_get(old, "message"), json_object_get(cond, "message"));
    if (!same) {
        const json_t *old_status = json_object_get(old, "status");
        if (old && json_equal(old_status, json_object_get(cond, "status")))
            json_object_set(cond, "lastTransitionTime", json_object_get(old, "lastTransitionTime"));
        json_t *patch = json_pack("{s:{s:[O]}}", "status", "conditions", cond);
        ctl_object_path(path, sizeof path, "", "pods",
                        kube_str_or_null(kube_obj(pod, "metadata"), "namespace"),
                        kube_str_or_null(kube_obj(pod, "metadata"), "name"), "status");
        writes += ctl_send_tracked(c, ctl_wq_write_new("PATCH", path, NULL, CTL_SMP, patch), "pods",
                                   pod, NULL, NULL);
    }
    json_decref(cond);
    char *note = ctl_sched_event_note(r->message);
    writes += ctl_record_event(c, pod, "Pod", "v1", "Warning", "FailedScheduling", note,
                               "default-scheduler", (int64_t)now * 1000);
    free(note);
    return writes;
}

static int bind(ctl_loop *c, const json_t *pod, const char *node, time_t now)
{
    char path[600], message[800];
    const char *ns = kube_str_or_null(kube_obj(pod, "metadata"), "namespace"),
               *name = kube_str_or_null(kube_obj(pod, "metadata"), "name");
    ctl_object_path(path, sizeof path, "", "pods", ns, name, "binding");
    json_t *b = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}}", "apiVersion", "v1", "kind",
                          "Binding", "metadata", "name", name, "namespace", ns, "uid",
                          kube_str_or_null(kube_obj(pod, "metadata"), "uid"), "target", "kind",
                          "Node", "name", node);
    ctl_wq_write *w = ctl_wq_write_new("POST", path, NULL, NULL, b);
    if (!w) return 0;
    /* the Scheduled event once the binding has succeeded */
    snprintf(message, sizeof message, "Successfully assigned %s/%s to %s", ns, name, node);
    bool sent;
    ctl_wq_write *ev = ctl_event_write(c, pod, "Pod", "v1", "Normal", "Scheduled", message,
                                       "default-scheduler", (int64_t)now * 1000, &sent);
    ctl_wq_write_then(w, ev);
    return ctl_send_tracked(c, w, "pods", pod, node, NULL) + (ev || sent);
}

static int preempt(ctl_loop *c, const json_t *pod, const ctl_sched_result *r, const node_view *v)
{
    char path[600];
    int writes = 0;
    json_t *patch =
        json_pack("{s:{s:s}}", "status", "nominatedNodeName",
                  kube_str_or_null(kube_obj(v->nodes[r->nominated].node, "metadata"), "name"));
    ctl_object_path(path, sizeof path, "", "pods",
                    kube_str_or_null(kube_obj(pod, "metadata"), "namespace"),
                    kube_str_or_null(kube_obj(pod, "metadata"), "name"), "status");
    writes += ctl_send_tracked(c, ctl_wq_write_new("PATCH", path, NULL, CTL_SMP, patch), "pods",
                               pod, NULL, NULL);
    for (size_t i = 0; i < r->victim_count; i++) {
        ctl_object_path(path, sizeof path, "", "pods",
                        kube_str_or_null(kube_obj(r->victims[i], "metadata"), "namespace"),
                        kube_str_or_null(kube_obj(r->victims[i], "metadata"), "name"), NULL);
        writes += ctl_send(c, "DELETE", path, NULL, NULL, NULL, NULL);
    }
    return writes;
}

static int schedule(ctl_loop *c, const snapshot *s, time_t now)
{
    /* the cluster's state is read only when some pod wants scheduling */
    bool viewed = false;
    json_int_t fingerprint = 0;
    node_view v = {0};
    ctl_sched_cluster *cluster = NULL;
    json_t *failed = json_object();
    int writes = 0, binds = 0;
    size_t i;
    json_t *pod;
    json_array_foreach(s->pods, i, pod)
    {
        const pod_summary *p = s->pod_sums[i];
        if (!p->wants_scheduling) continue;
        const char *uid = p->uid;
        if (!uid) continue;
        if (ctl_pod_waiting(c, s, p)) {
            /* bound or failed a moment ago: the next pass sees which */
            json_t *seen = json_object_get(c->failed, uid);
            if (seen) json_object_set(failed, uid, seen);
            continue;
        }
        if (!viewed) {
            fingerprint = (json_int_t)cluster_fingerprint(s);
            build_view(c, s, &v);
            viewed = true;
        }
        json_t *seen = json_object_get(c->failed, uid);
        if ((seen && json_integer_value(seen) == fingerprint) || binds == MAX_BINDS_PER_PASS) {
            /* nothing new to try with (or enough for one pass): later */
            if (seen) json_object_set(failed, uid, seen);
            continue;
        }
        gp_error err = {0};
        /* parsed once per pass, and only when some pod needs it */
        if (!cluster && !(cluster = ctl_sched_cluster_new_memo(v.nodes, v.n, c->sched_memo, &err)))
            break;
        ctl_sched_result r;
        if (ctl_sched_schedule_in(cluster, pod, c->tie_break++, &r) != 0) {
            writes += schedule_failed(c, pod, &r, now);
            json_object_set_new(failed, uid, json_integer(fingerprint));
        } else if (r.chosen >= 0) {
            int w =
                bind(c, pod, kube_str_or_null(kube_obj(v.nodes[r.chosen].node, "metadata"), "name"),
                     now);
            writes += w;
            binds += w > 0;
            /* assumed on its node for the pods after it in this pass */
            if (w) ctl_sched_cluster_assume(cluster, (size_t)r.chosen, pod, &err);
        } else {
            writes += schedule_failed(c, pod, &r, now);
            if (r.nominated >= 0) writes += preempt(c, pod, &r, &v);
            json_object_set_new(failed, uid, json_integer(fingerprint));
        }
        ctl_sched_result_free(&r);
    }
    json_decref(c->failed);
    c->failed = failed;
    ctl_sched_cluster_free(cluster);
    free_view(&v);
    return writes;
}

/* ---- DaemonSet controller ----------------------------------------------------- */

static json_t *in_namespace(const json_t *list, const char *ns)
{
    json_t *out = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const char *n = kube_str_or_null(kube_obj(o, "metadata"), "namespace");
        if (n && ns && strcmp(n, ns) == 0) json_array_append(out, o);
    }
    return out;
}

/* The next of the plan's events, completed with a created pod's name. */
static int ds_event(ctl_loop *c, const json_t *ds, const json_t *ev, const char *suffix,
                    int64_t now_ms)
{
    char message[800];
    snprintf(message, sizeof message, "%s%s", kube_str_or_null(ev, "message"),
             suffix ? suffix : "");
    return ctl_record_event(c, ds, "DaemonSet", "apps/v1", kube_str_or_null(ev, "type"),
                            kube_str_or_null(ev, "reason"), message, "daemonset-controller",
                            now_ms);
}

/* The plan's creates in syncNodes' slow-start batches (1, 2, 4, ...): a
 * batch in which a create failed is the last, the rest wait for the retry
 * (and so do their events). Each failure is a FailedCreate event. Sets
 * *failed when one did. */
static int create_pods(ctl_loop *c, const json_t *ds, const ctl_ds_plan *p, int64_t now_ms,
                       bool *failed)
{
    const char *ns = kube_str_or_null(kube_obj(ds, "metadata"), "namespace");
    char path[600];
    ctl_object_path(path, sizeof path, "", "pods", ns, NULL, NULL);
    int writes = 0;
    size_t total = json_array_size(p->create_pods), sent = 0, batch = 0;
    while (sent < total && !*failed) {
        batch = ctl_ds_next_batch(sent, batch, total);
        for (size_t i = sent; i < sent + batch; i++) {
            json_t *created = NULL;
            bool ok =
                ctl_send(c, "POST", path, NULL, NULL, json_array_get(p->create_pods, i), &created);
            writes += ok;
            const json_t *ev = json_array_get(p->events, i);
            if (ok) {
                writes += ds_event(c, ds, ev,
                                   kube_str_or_null(kube_obj(created, "metadata"), "name"), now_ms);
            } else {
                char msg[700];
                snprintf(msg, sizeof msg, "Error creating: %s",
                         json_string_value(json_object_get(created, "message")));
                writes += ctl_record_event(c, ds, "DaemonSet", "apps/v1", "Warning", "FailedCreate",
                                           msg, "daemonset-controller", now_ms);
                *failed = true;
            }
            json_decref(created);
        }
        sent += batch;
    }
    return writes;
}

/* Carries the plan out; *failed when a create or delete failed (the sync
 * then returns an error, and the DaemonSet is retried with backoff). */
static int apply_plan(ctl_loop *c, const json_t *ds, ctl_ds_plan *p, int64_t now_ms, bool *failed)
{
    const char *ns = kube_str_or_null(kube_obj(ds, "metadata"), "namespace");
    char path[600];
    int writes = 0;
    size_t i, next_event = json_array_size(p->create_pods);
    json_t *o;
    ctl_object_path(path, sizeof path, "apps", "controllerrevisions", ns, NULL, NULL);
    json_array_foreach(p->create_revisions, i, o) writes +=
        ctl_send(c, "POST", path, NULL, NULL, o, NULL);
    json_array_foreach(p->update_revisions, i, o)
    {
        ctl_object_path(path, sizeof path, "apps", "controllerrevisions", ns,
                        kube_str_or_null(o, "name"), NULL);
        json_t *patch = json_pack("{s:O}", "revision", json_object_get(o, "revision"));
        writes += ctl_send(c, "PATCH", path, NULL, CTL_MERGE, patch, NULL);
        json_decref(patch);
    }
    json_array_foreach(p->patch_pods, i, o)
    {
        ctl_object_path(path, sizeof path, "", "pods", ns, kube_str_or_null(o, "name"), NULL);
        writes += ctl_send(c, "PATCH", path, NULL, kube_str_or_null(o, "patchType"),
                           json_object_get(o, "patch"), NULL);
    }
    writes += create_pods(c, ds, p, now_ms, failed);
    json_array_foreach(p->delete_pods, i, o)
    {
        ctl_object_path(path, sizeof path, "", "pods", ns, json_string_value(o), NULL);
        bool ok = ctl_send_now(c, "DELETE", path, NULL, NULL, NULL);
        writes += ok;
        *failed |= !ok;
        const json_t *ev = json_array_get(p->events, next_event++);
        if (ok) writes += ds_event(c, ds, ev, NULL, now_ms);
    }
    json_array_foreach(p->delete_revisions, i, o)
    {
        ctl_object_path(path, sizeof path, "apps", "controllerrevisions", ns, json_string_value(o),
                        NULL);
        writes += ctl_send(c, "DELETE", path, NULL, NULL, NULL, NULL);
    }
    for (; next_event < json_array_size(p->events); next_event++)
        writes += ds_event(c, ds, json_array_get(p->events, next_event), NULL, now_ms);
    if (p->status) {
        /* PUT of the whole status (section 6.5): the plan leaves out fields
         * that are 0, and a merge patch would keep their old values. The
         * object's resourceVersion makes it conditional; on a conflict the
         * next pass computes it again. */
        ctl_object_path(path, sizeof path, "apps", "daemonsets", ns,
                        kube_str_or_null(kube_obj(ds, "metadata"), "name"), "status");
        json_t *body = json_deep_copy(ds);
        json_object_set(body, "status", p->status);
        writes += ctl_send(c, "PUT", path, NULL, NULL, body, NULL);
        json_decref(body);
    }
    return writes;
}

/* A DaemonSet waiting for its retry (the workqueue's AddRateLimited). A
 * change of its spec (a new generation) or a new DaemonSet of the same
 * name is synced at once, as the informer's update would queue it. */
typedef struct ds_retry {
    int64_t at_ms;
    long long generation;
    char uid[64];
    unsigned long long seen; /* the pass that last listed it */
} ds_retry;

static void ds_key(const json_t *ds, char *buf, size_t size)
{
    const json_t *m = kube_obj(ds, "metadata");
    snprintf(buf, size, "%s/%s", kube_str(m, "namespace"), kube_str(m, "name"));
}

/* Whether the DaemonSet is synced this pass. */
static bool ds_due(ctl_loop *c, const json_t *ds, const char *key, int64_t now_ms)
{
    ds_retry *r = ctl_lru_peek(c->ds_retry, key);
    if (!r) return true;
    r->seen = c->pass;
    const json_t *m = kube_obj(ds, "metadata");
    if (r->generation != kube_int(m, "generation") || strcmp(r->uid, kube_str(m, "uid")) != 0)
        return true;
    if (now_ms >= r->at_ms) return true;
    ctl_wake_at(c, r->at_ms);
    return false;
}

/* processNextWorkItem's ending: Forget after a sync that worked, else
 * AddRateLimited. */
static void ds_synced(ctl_loop *c, const json_t *ds, const char *key, bool failed, int64_t now_ms)
{
    if (!failed) {
        ctl_backoff_forget(c->ds_backoff, key);
        ctl_lru_remove(c->ds_retry, key);
        return;
    }
    ds_retry *r = calloc(1, sizeof *r);
    if (!r) return;
    const json_t *m = kube_obj(ds, "metadata");
    r->at_ms = now_ms + ctl_backoff_when(c->ds_backoff, key, now_ms);
    r->generation = kube_int(m, "generation");
    snprintf(r->uid, sizeof r->uid, "%s", kube_str(m, "uid"));
    r->seen = c->pass;
    if (ctl_lru_put(c->ds_retry, key, r) == 0) ctl_wake_at(c, r->at_ms);
}

static bool ds_listed(void *ud, const char *key, void *value)
{
    (void)key;
    const ctl_loop *c = ud;
    const ds_retry *r = value;
    if (r->seen == c->pass) return true;
    ctl_backoff_forget(c->ds_backoff, key);
    return false;
}

static int daemonsets(ctl_loop *c, const snapshot *s, int64_t now_ms)
{
    int writes = 0;
    size_t i;
    json_t *ds;
    json_array_foreach(s->daemonsets, i, ds)
    {
        if (kube_deleting(ds)) continue;
        char key[600];
        ds_key(ds, key, sizeof key);
        if (!ds_due(c, ds, key, now_ms)) continue;
        const char *ns = kube_str_or_null(kube_obj(ds, "metadata"), "namespace");
        json_t *pods = in_namespace(s->pods, ns), *revs = in_namespace(s->revisions, ns);
        ctl_ds_plan plan;
        gp_error err = {0};
        /* the in-process client is synchronous: what a pass creates or
         * deletes is in the next snapshot, so expectations are always met */
        int rc = ctl_ds_sync(ds, s->nodes, pods, revs, (time_t)(now_ms / 1000), false, &plan, &err);
        bool failed = rc != 0;
        if (rc >= 0) writes += apply_plan(c, ds, &plan, now_ms, &failed);
        ctl_ds_plan_free(&plan);
        ds_synced(c, ds, key, failed, now_ms);
        json_decref(pods);
        json_decref(revs);
    }
    if (ctl_lru_size(c->ds_retry) > 0) ctl_lru_sweep(c->ds_retry, ds_listed, c);
    return writes;
}

/* ---- garbage collector and namespace controller ------------------------------- */

static int run_actions(ctl_loop *c, json_t *actions)
{
    int writes = 0;
    size_t i;
    json_t *a;
    json_array_foreach(actions, i, a)
    {
        const char *op = kube_str_or_null(a, "op");
        char path[700];
        ctl_object_path(path, sizeof path, kube_str_or_null(a, "group"),
                        kube_str_or_null(a, "resource"), kube_str_or_null(a, "namespace"),
                        kube_str_or_null(a, "name"), NULL);
        if (!op) continue;
        if (strcmp(op, "delete") == 0) {
            const char *policy = kube_str_or_null(a, "propagationPolicy");
            json_t *opts = json_pack("{s:s, s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1",
                                     "propagationPolicy", policy ? policy : "Background");
            const char *uid = kube_str_or_null(a, "uid");
            if (uid) json_object_set_new(opts, "preconditions", json_pack("{s:s}", "uid", uid));
            writes += ctl_send(c, "DELETE", path, NULL, NULL, opts, NULL);
            json_decref(opts);
        } else if (strcmp(op, "finalize") == 0) {
            char fpath[720];
            snprintf(fpath, sizeof fpath, "%s/finalize", path);
            writes += ctl_send(c, "PUT", fpath, NULL, NULL, json_object_get(a, "body"), NULL);
        } else {
            bool status = strcmp(op, "patch-status") == 0;
            char ppath[720];
            snprintf(ppath, sizeof ppath, "%s%s", path, status ? "/status" : "");
            writes += ctl_send(c, "PATCH", ppath, NULL, kube_str_or_null(a, "patchType"),
                               json_object_get(a, "patch"), NULL);
        }
    }
    return writes;
}

/* An owner the collector's snapshot leaves out (controllers_snapshot.c keeps
 * events only when the collector has work with them): looked up in the
 * store by kind and name, and its uid compared, as isDangling does. */
static bool owner_exists(void *ud, const json_t *dependent, const json_t *ref)
{
    ctl_loop *c = ud;
    const char *kind = kube_str_or_null(ref, "kind"), *name = kube_str_or_null(ref, "name");
    const char *uid = kube_str_or_null(ref, "uid"),
               *api_version = kube_str_or_null(ref, "apiVersion");
    if (!kind || !name || !uid || !api_version) return false;
    const char *slash = strchr(api_version, '/');
    size_t count;
    const as_resource *all = as_resources(&count), *r = NULL;
    for (size_t i = 0; i < count && !r; i++) {
        size_t g = strlen(all[i].group);
        bool same_group =
            slash ? g == (size_t)(slash - api_version) && strncmp(all[i].group, api_version, g) == 0
                  : g == 0;
        if (same_group && strcmp(all[i].kind, kind) == 0) r = &all[i];
    }
    if (!r) return false;
    const char *ns =
        r->namespaced ? kube_str_or_null(kube_obj(dependent, "metadata"), "namespace") : NULL;
    as_store_lock(c->api->store);
    const as_object *o = as_store_get(c->api->store, r, ns, name);
    as_blob *index = o ? as_blob_ref(o->index) : NULL;
    as_store_unlock(c->api->store);
    json_t *idx = as_index_parse(index);
    as_blob_unref(index);
    const char *have = kube_str_or_null(kube_obj(idx, "metadata"), "uid");
    bool same = have && strcmp(have, uid) == 0;
    json_decref(idx);
    return same;
}

static int collect(ctl_loop *c, const snapshot *s, time_t now)
{
    if (!s->all) return 0;
    json_t *actions = ctl_gc_collect_with(s->all, owner_exists, c);
    int writes = run_actions(c, actions);
    json_decref(actions);
    size_t i;
    json_t *ns;
    json_array_foreach(s->namespaces, i, ns)
    {
        actions = ctl_ns_actions(ns, s->all, now);
        writes += run_actions(c, actions);
        json_decref(actions);
    }
    return writes;
}

/* ---- the loop ------------------------------------------------------------------ */

/* How often the fake kubelets' heartbeats and renewals are looked at. */
static int64_t kubelet_sweep_ms(const ctl_loop *c)
{
    return c->lease_renew_ms / 2 < KUBELET_SWEEP_MS ? c->lease_renew_ms / 2 : KUBELET_SWEEP_MS;
}

/* One pass at now_ms. The loop does not wait for its writes (they are in
 * flight, and the next pass leaves their objects alone until it sees them);
 * a caller of ctl_loop_step gets the pass with its writes done. */
static int step(ctl_loop *c, int64_t now_ms, bool drain)
{
    time_t now = (time_t)(now_ms / 1000);
    c->pass++;
    c->wake_ms = INT64_MAX;
    bool sweep = now_ms >= c->next_kubelet_sweep_ms;
    if (sweep) c->next_kubelet_sweep_ms = now_ms + kubelet_sweep_ms(c);
    ctl_wake_at(c, c->next_kubelet_sweep_ms);
    snapshot s;
    ctl_take_snapshot(c, &s);
    ctl_sched_memo_trim(c->sched_memo, json_array_size(s.pods));
    int writes = 0;
    writes += kubelet_nodes(c, &s, now_ms, sweep);
    writes += kubelet_pods(c, &s, now);
    writes += ctl_node_lifecycle(c, &s, now_ms);
    writes += schedule(c, &s, now);
    writes += daemonsets(c, &s, now_ms);
    writes += collect(c, &s, now);
    writes += ctl_namespace_defaults(c->api, s.namespaces);
    if (drain) c->failed_writes += ctl_wq_drain(c->wq);
    ctl_inflight_sweep(c->inflight, s.listed_rv);
    ctl_free_snapshot(&s);
    writes -= (int)c->failed_writes;
    c->failed_writes = 0;
    return writes > 0 ? writes : 0;
}

int ctl_loop_step(ctl_loop *c, int64_t now_ms)
{
    return step(c, now_ms, true);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ctl_loop *ctl_loop_new(as_api *api, const ctl_loop_options *opt)
{
    ctl_loop *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->api = api;
    if (opt) c->opt = *opt;
    int64_t now_ms = wall_ms();
    c->grace_ms =
        c->opt.node_monitor_grace_ms > 0 ? c->opt.node_monitor_grace_ms : CTL_NLC_GRACE_MS;
    c->lease_renew_ms = c->grace_ms / 4 < LEASE_RENEW_MS ? c->grace_ms / 4 : LEASE_RENEW_MS;
    c->failed = json_object();
    c->events = ctl_events_new();
    c->terminating = json_object();
    c->wq = ctl_wq_new(api, WRITE_WORKERS);
    c->inflight = ctl_inflight_new();
    c->sched_memo = ctl_sched_memo_new();
    c->ds_backoff = ctl_backoff_new(now_ms);
    c->ds_retry = ctl_lru_new(0, free);
    c->boots = json_object();
    if (!c->boots || !c->failed || !c->events || !c->terminating || !c->wq || !c->inflight ||
        !c->sched_memo || !c->ds_backoff || !c->ds_retry || ctl_snapshot_init(c) != 0 ||
        ctl_nlc_loop_init(c, now_ms) != 0) {
        ctl_loop_free(c);
        return NULL;
    }
    return c;
}

static bool stopping(ctl_loop *c)
{
    pthread_mutex_lock(&c->lock);
    bool s = c->stopping;
    pthread_mutex_unlock(&c->lock);
    return s;
}

static void *loop(void *arg)
{
    ctl_loop *c = arg;
    as_store *store = c->api->store;
    uint64_t seen = 0;
    while (!stopping(c)) {
        /* busy: pass after pass while passes change things (each sees the
         * effects of the one before: created pods get scheduled, bound ones
         * become Ready, the DaemonSet status follows) */
        for (int busy = 0; busy < MAX_BUSY_PASSES && !stopping(c); busy++) {
            as_store_lock(store);
            seen = as_store_rv(store);
            as_store_unlock(store);
            if (step(c, wall_ms(), false) == 0) break;
        }
        /* quiet: wait for a client's change, the tick, or work due sooner
         * (a DaemonSet's retry, an eviction) */
        int64_t wait_ms = c->wake_ms - wall_ms();
        if (wait_ms > TICK_MS) wait_ms = TICK_MS;
        if (wait_ms < 1) wait_ms = 1;
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_nsec += (long)(wait_ms % 1000) * 1000000;
        deadline.tv_sec += (time_t)(wait_ms / 1000) + deadline.tv_nsec / 1000000000;
        deadline.tv_nsec %= 1000000000;
        as_store_lock(store);
        while (as_store_rv(store) == seen) {
            if (!as_store_wait(store, &deadline)) break;
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec > deadline.tv_sec ||
                (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
                break;
        }
        as_store_unlock(store);
    }
    return NULL;
}

int ctl_loop_start(ctl_loop *c, gp_error *err)
{
    if (pthread_create(&c->thread, NULL, loop, c) != 0) {
        gp_error_set(err, NULL, 0, 0, "cannot start the controllers");
        return -1;
    }
    c->running = true;
    return 0;
}

void ctl_loop_free(ctl_loop *c)
{
    if (!c) return;
    if (c->running) {
        pthread_mutex_lock(&c->lock);
        c->stopping = true;
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
    }
    pthread_mutex_destroy(&c->lock);
    json_decref(c->failed);
    ctl_events_free(c->events);
    ctl_backoff_free(c->ds_backoff);
    ctl_lru_free(c->ds_retry);
    ctl_nlc_loop_fini(c);
    ctl_snapshot_fini(c);
    json_decref(c->terminating);
    ctl_wq_free(c->wq); /* drained first: its workers report to inflight */
    ctl_inflight_free(c->inflight);
    ctl_sched_memo_free(c->sched_memo);
    json_decref(c->boots);
    free(c->facts);
    free(c->has_facts);
    free(c->resync);
    free(c);
}

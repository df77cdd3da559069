/* The node agents of the embedded cluster (agents.h): one simulated node
 * per fake node, its containerd on the host (host.h), its kubelet process
 * (kubelet_unit.h), its driver, its device manager, and the toolkit and
 * device-plugin containers the fake kubelet starts on it. */
#define _GNU_SOURCE /* strdup */
#include "agents/agents.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agents/daemon.h"
#include "agents/devplugin.h"
#include "agents/host.h"
#include "agents/kubelet_unit.h"
#include "agents/node.h"
#include "agents/toolkit.h"
#include "kube/json.h"
#include "util/buf.h"

/* How long the device manager keeps a gone plugin's capacity
 * (cm/devicemanager endpointStopGracePeriod, gpu-node-facts.md 5). */
#define DEVICE_GRACE_SEC 300
/* The journal keeps this many bytes of each node's last lines. */
#define JOURNAL_MAX 16384
#define SOCKET_REL  "/run/containerd/containerd.sock"

typedef struct device {
    char name[96];
    long long capacity, allocatable;
    double gone_at; /* when its plugin went (0: registered now) */
} device;

typedef struct node_agent {
    char name[254];
    char dir[PATH_MAX];
    char socket[108]; /* "" when the path does not fit a unix socket */
    ag_node_state st; /* node.toml as the last boot read it */
    unsigned long boot;
    char boot_id[40];
    bool driver_loaded;
    ag_kubelet kubelet;
    device devices[CTL_NODE_MAX_RESOURCES];
    size_t ndevices;
    /* The device plugin's pod that registered (uid), and the toolkit's. */
    char plugin_uid[64];
    char toolkit_uid[64];
    ag_toolkit toolkit;
    /* pod uid -> the boot its containers were started in, and how */
    json_t *started;
    gp_buf journal; /* under the agents' journal lock */
} node_agent;

struct ag_agents {
    pthread_mutex_t lock; /* the nodes; taken before the host's */
    pthread_mutex_t journal_lock;
    char nodes_dir[PATH_MAX];
    ag_host *host;
    node_agent **nodes;
    size_t n, cap;
    ctl_node_agents view;
};

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the journal ---- */

static void journal_add(ag_agents *a, node_agent *n, const char *unit, const char *lines)
{
    pthread_mutex_lock(&a->journal_lock);
    for (const char *p = lines; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        gp_buf_addf(&n->journal, "%s: %.*s\n", unit, (int)len, p);
        p += len + (nl ? 1 : 0);
    }
    if (n->journal.len > JOURNAL_MAX) {
        /* keep the last lines whole */
        const char *keep = n->journal.data + n->journal.len - JOURNAL_MAX / 2;
        const char *nl = strchr(keep, '\n');
        if (nl) keep = nl + 1;
        size_t rest = n->journal.len - (size_t)(keep - n->journal.data);
        memmove(n->journal.data, keep, rest);
        n->journal.len = rest;
        n->journal.data[rest] = '\0';
    }
    pthread_mutex_unlock(&a->journal_lock);
}

static node_agent *find(ag_agents *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->nodes[i]->name, name) == 0) return a->nodes[i];
    return NULL;
}

/* The host's journal lines (its lock held: only the journal's is taken). */
static void host_log(void *ctx, const char *node, const char *lines)
{
    ag_agents *a = ctx;
    /* The host calls with its own lock held, from its thread or from an
     * agents' call that holds a->lock: only the journal's lock is taken
     * here, which also guards the node list's growth. An agent is in the
     * list before its node is added to the host, so it is found. */
    node_agent *n = NULL;
    pthread_mutex_lock(&a->journal_lock);
    for (size_t i = 0; i < a->n && !n; i++)
        if (strcmp(a->nodes[i]->name, node) == 0) n = a->nodes[i];
    pthread_mutex_unlock(&a->journal_lock);
    if (n) journal_add(a, n, "containerd", lines);
}

/* ---- boot ---- */

static void new_boot_id(node_agent *n)
{
    /* a boot id is a random UUID; here one made from the node and its boot,
     * so a run is repeatable */
    unsigned long h = 1469598103934665603UL;
    for (const char *p = n->name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211UL;
    h ^= n->boot * 0x9e3779b97f4a7c15UL;
    snprintf(n->boot_id, sizeof n->boot_id, "%08lx-%04lx-4%03lx-8%03lx-%012lx",
             (h >> 32) & 0xffffffffUL, (h >> 16) & 0xffffUL, h & 0xfffUL, (h >> 20) & 0xfffUL,
             (h * 31) & 0xffffffffffffUL);
}

typedef struct kubelet_start {
    node_agent *n;
    double now;
    bool tick; /* a tick, else a start */
    bool started;
} kubelet_start;

static void kubelet_with_daemon(const ag_daemon *d, const char *dir, void *ctx)
{
    (void)dir;
    kubelet_start *k = ctx;
    if (k->tick)
        k->started = ag_kubelet_tick(&k->n->kubelet, d, k->now);
    else
        k->started = ag_kubelet_start(&k->n->kubelet, d, k->now);
}

/* Runs the kubelet's start or tick against the node's daemon; journals a
 * start that failed. */
static void kubelet_step(ag_agents *a, node_agent *n, bool tick, double now)
{
    kubelet_start k = {n, now, tick, false};
    gp_error err = {0};
    if (ag_host_with_daemon(a->host, n->name, kubelet_with_daemon, &k, &err) != 0) return;
    bool tried = !tick || k.started;
    if (tried && n->kubelet.phase == AG_KUBELET_RESTARTING)
        journal_add(a, n, "kubelet", n->kubelet.last_error);
}

/* A boot: node.toml read again, the driver's module loaded when it was
 * built for this kernel, the device manager back from its checkpoint
 * (every resource at 0 until its plugin registers again), containerd
 * started (ag_host_add or start), then the kubelet. */
static void boot(ag_agents *a, node_agent *n, double now)
{
    gp_error err = {0};
    if (ag_node_state_read(n->dir, &n->st, &err) != 0) journal_add(a, n, "node", err.text);
    n->boot++;
    new_boot_id(n);
    n->driver_loaded = ag_node_driver_loads(&n->st);
    if (!n->driver_loaded && n->st.driver_installed) {
        char line[400];
        snprintf(line, sizeof line,
                 "modprobe: FATAL: Module nvidia not found in directory /lib/modules/%s",
                 n->st.kernel_version);
        journal_add(a, n, "kernel", line);
    }
    for (size_t i = 0; i < n->ndevices; i++) {
        n->devices[i].capacity = n->devices[i].allocatable = 0;
        n->devices[i].gone_at = 0;
    }
    n->plugin_uid[0] = '\0';
    kubelet_step(a, n, false, now);
}

static node_agent *agent_new(ag_agents *a, const char *name, gp_error *err)
{
    if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789.-") != strlen(name) ||
        strlen(name) > 253) {
        gp_error_set(err, NULL, 0, 0, "node %s: not a node name gpuop can simulate", name);
        return NULL;
    }
    node_agent *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    snprintf(n->name, sizeof n->name, "%s", name);
    if (snprintf(n->dir, sizeof n->dir, "%s/%s", a->nodes_dir, name) >= (int)sizeof n->dir) {
        gp_error_set(err, a->nodes_dir, 0, 0, "node %s: path too long", name);
        free(n);
        return NULL;
    }
    int len = snprintf(n->socket, sizeof n->socket, "%s%s", n->dir, SOCKET_REL);
    if (len < 0 || (size_t)len >= sizeof n->socket) n->socket[0] = '\0';
    n->started = json_object();
    ag_kubelet_init(&n->kubelet);
    if (!n->started || ag_node_create(n->dir, NULL, err) != 0) {
        json_decref(n->started);
        free(n);
        return NULL;
    }
    return n;
}

/* The node's agent, made (and booted) the first time it is asked for. */
static node_agent *agent_of(ag_agents *a, const char *name, bool make, gp_error *err)
{
    node_agent *n = find(a, name);
    if (n || !make) {
        if (!n) gp_error_set(err, NULL, 0, 0, "node %s has no agent", name);
        return n;
    }
    n = agent_new(a, name, err);
    if (!n) return NULL;
    /* the list is read by host_log under the journal's lock */
    pthread_mutex_lock(&a->journal_lock);
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        node_agent **more = realloc(a->nodes, cap * sizeof *more);
        if (more) a->nodes = more, a->cap = cap;
    }
    bool room = a->n < a->cap;
    if (room) a->nodes[a->n++] = n;
    pthread_mutex_unlock(&a->journal_lock);
    if (!room) {
        json_decref(n->started);
        free(n);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    if (ag_host_add(a->host, n->name, n->dir, n->socket, err) != 0) {
        /* the node stays, without a daemon: its kubelet never starts */
        journal_add(a, n, "containerd", err->text);
        return n;
    }
    boot(a, n, wall());
    return n;
}

/* ---- what the node publishes ---- */

typedef struct daemon_view {
    bool cri_up;
    bool running;
    char version[64];
    char loaded[CTL_NODE_MAX_HANDLERS][64];
    size_t nloaded;
} daemon_view;

static void view_daemon(const ag_daemon *d, const char *dir, void *ctx)
{
    (void)dir;
    daemon_view *v = ctx;
    v->running = d->phase == AG_DAEMON_RUNNING && d->loaded;
    v->cri_up = v->running && d->loaded->cri == AG_CRI_UP;
    if (v->running) snprintf(v->version, sizeof v->version, "%s", d->loaded->version);
    for (size_t i = 0; v->cri_up && i < d->loaded->nruntimes && v->nloaded < CTL_NODE_MAX_HANDLERS;
         i++)
        snprintf(v->loaded[v->nloaded++], sizeof v->loaded[0], "%s", d->loaded->runtimes[i]);
}

static void add_label(ctl_node_facts *f, const char *key, const char *value, bool present)
{
    if (f->label_count == CTL_NODE_MAX_LABELS) return;
    ctl_node_label *l = &f->labels[f->label_count++];
    snprintf(l->key, sizeof l->key, "%s", key);
    l->present = present;
    /* a label value is at most 63 bytes: a longer one is not published */
    if (snprintf(l->value, sizeof l->value, "%s", value ? value : "") >= (int)sizeof l->value) {
        l->present = false;
        l->value[0] = '\0';
    }
}

static void fill_facts(ag_agents *a, node_agent *n, double now, ctl_node_facts *f)
{
    memset(f, 0, sizeof *f);
    daemon_view v = {0};
    gp_error err = {0};
    ag_host_with_daemon(a->host, n->name, view_daemon, &v, &err);
    const ag_kubelet *k = &n->kubelet;
    f->kubelet_running = k->phase == AG_KUBELET_RUNNING;
    f->boot = n->boot;
    f->runtime_ok_ms = (int64_t)(k->runtime_ok * 1000);
    f->relist_ok_ms = (int64_t)(k->relist_ok * 1000);
    f->runtime_up = v.cri_up;
    f->reports_handlers = !cd_is_v1(n->st.family);
    for (size_t i = 0; i < k->nhandlers && i < CTL_NODE_MAX_HANDLERS; i++)
        snprintf(f->handlers[f->handler_count++], sizeof f->handlers[0], "%s", k->handlers[i]);
    memcpy(f->loaded, v.loaded, sizeof f->loaded);
    f->loaded_count = v.nloaded;
    f->sandbox_error_v2 = !cd_is_v1(n->st.family);
    snprintf(f->runtime_version, sizeof f->runtime_version, "containerd://%s",
             v.version[0] ? v.version : n->st.containerd_version);
    snprintf(f->kernel_version, sizeof f->kernel_version, "%s", n->st.kernel_version);
    snprintf(f->boot_id, sizeof f->boot_id, "%s", n->boot_id);
    for (size_t i = 0; i < n->ndevices; i++) {
        device *d = &n->devices[i];
        if (d->gone_at > 0 && now - d->gone_at >= DEVICE_GRACE_SEC) d->capacity = 0;
        ctl_node_resource *r = &f->resources[f->resource_count++];
        snprintf(r->name, sizeof r->name, "%s", d->name);
        r->capacity = d->capacity;
        r->allocatable = d->allocatable;
    }
    /* Node Feature Discovery's PCI and kernel labels, and the driver's
     * version as GPU Feature Discovery publishes it (gpu-node-facts.md 5:
     * gpu.present is hardware, not a working driver). */
    add_label(f, "nvidia.com/gpu.present", "true", n->st.gpus > 0);
    add_label(f, "feature.node.kubernetes.io/kernel-version.full", n->st.kernel_version, true);
    add_label(f, "nvidia.com/cuda.driver-version.full", n->st.driver_version,
              n->driver_loaded && n->st.driver_version[0]);
}

static int observe(void *ctx, const char *node, int64_t now_ms, ctl_node_facts *facts)
{
    ag_agents *a = ctx;
    pthread_mutex_lock(&a->lock);
    gp_error err = {0};
    node_agent *n = agent_of(a, node, true, &err);
    if (n) {
        double now = (double)now_ms / 1000;
        kubelet_step(a, n, true, now);
        fill_facts(a, n, now, facts);
    }
    pthread_mutex_unlock(&a->lock);
    return n ? 0 : -1;
}

/* ---- the containers the kubelet starts ---- */

static size_t journal_len(ag_agents *a, node_agent *n)
{
    pthread_mutex_lock(&a->journal_lock);
    size_t len = n->journal.len;
    pthread_mutex_unlock(&a->journal_lock);
    return len;
}

/* What the containers the agent runs (the toolkit, the device plugin)
 * wrote to the journal since its length was `from`, without the unit in
 * front: the log `kubectl logs` shows for the pod started meanwhile.
 * malloc'd, NULL when nothing (or the journal was cut meanwhile). */
static char *journal_since(ag_agents *a, node_agent *n, size_t from)
{
    static const char *const units[] = {"toolkit: ", "device-plugin: "};
    gp_buf out = {0};
    pthread_mutex_lock(&a->journal_lock);
    const char *p = n->journal.len >= from && n->journal.data ? n->journal.data + from : "";
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t u = strlen(units[i]);
            if (len >= u && strncmp(p, units[i], u) == 0)
                gp_buf_addf(&out, "%.*s\n", (int)(len - u), p + u);
        }
        p += len + (nl ? 1 : 0);
    }
    pthread_mutex_unlock(&a->journal_lock);
    return gp_buf_take(&out);
}

int ag_agents_pod_log(void *ctx, const char *node, const char *pod_uid, const char *container,
                      gp_buf *out)
{
    (void)container; /* the agents run one container a pod */
    ag_agents *a = ctx;
    pthread_mutex_lock(&a->lock);
    gp_error err = {0};
    node_agent *n = agent_of(a, node, false, &err);
    const json_t *seen = n ? json_object_get(n->started, pod_uid) : NULL;
    const char *log = json_string_value(json_object_get(seen, "log"));
    int rc = log && *log ? 1 : 0;
    if (rc) gp_buf_add(out, log);
    pthread_mutex_unlock(&a->lock);
    return rc;
}

static void log_buf(ag_agents *a, node_agent *n, const char *unit, gp_buf *b)
{
    if (b->len) journal_add(a, n, unit, b->data);
    gp_buf_free(b);
}

/* The toolkit's restart of containerd (RUNTIME_RESTART_MODE). */
static void toolkit_restart(ag_agents *a, node_agent *n, const ag_toolkit *t)
{
    gp_error err = {0};
    switch (t->restart) {
    case AG_TOOLKIT_RESTART_SIGNAL:
        journal_add(a, n, "toolkit", "Sending SIGHUP signal to containerd");
        if (ag_host_signal(a->host, n->name, SIGHUP, &err) == 0)
            journal_add(a, n, "toolkit", "Successfully signaled containerd");
        else
            journal_add(a, n, "toolkit",
                        "Error signaling containerd, attempt 1/6: unable to dial: no containerd");
        break;
    case AG_TOOLKIT_RESTART_SYSTEMD:
        journal_add(a, n, "toolkit", "Restarting containerd using systemd");
        ag_host_restart(a->host, n->name, &err);
        break;
    case AG_TOOLKIT_RESTART_NONE:
        journal_add(a, n, "toolkit", "Skipping restart of containerd due to --restart-mode=none");
        break;
    }
}

static ctl_pod_start start_toolkit(ag_agents *a, node_agent *n, const json_t *pod,
                                   const ag_toolkit *t, char *crashed, size_t cap)
{
    gp_buf log = {0};
    gp_error err = {0};
    if (ag_toolkit_setup(n->dir, t, &n->st, &log, &err) != 0) {
        gp_buf_addf(&log, "unable to setup runtime: %s\n", err.text);
        log_buf(a, n, "toolkit", &log);
        snprintf(crashed, cap, "%s", t->container);
        return CTL_POD_CRASHES;
    }
    log_buf(a, n, "toolkit", &log);
    n->toolkit = *t;
    snprintf(n->toolkit_uid, sizeof n->toolkit_uid, "%s",
             kube_str(kube_obj(pod, "metadata"), "uid"));
    toolkit_restart(a, n, t);
    return CTL_POD_RUNS;
}

static device *device_named(node_agent *n, const char *name)
{
    for (size_t i = 0; i < n->ndevices; i++)
        if (strcmp(n->devices[i].name, name) == 0) return &n->devices[i];
    if (n->ndevices == CTL_NODE_MAX_RESOURCES) return NULL;
    device *d = &n->devices[n->ndevices];
    memset(d, 0, sizeof *d);
    if (snprintf(d->name, sizeof d->name, "%s", name) >= (int)sizeof d->name) return NULL;
    n->ndevices++;
    return d;
}

static ctl_pod_start start_plugin(ag_agents *a, node_agent *n, const json_t *node,
                                  const json_t *pod, const json_t *configmaps,
                                  const char *container, char *crashed, size_t cap)
{
    if (!n->driver_loaded) {
        /* internal/plugin/factory.go, failOnInitError (gpu-node-facts.md 5) */
        journal_add(a, n, "device-plugin", "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.");
        journal_add(a, n, "device-plugin", "nvml init failed: ERROR_LIBRARY_NOT_FOUND");
        snprintf(crashed, cap, "%s", container);
        return CTL_POD_CRASHES;
    }
    ag_resource res[CTL_NODE_MAX_RESOURCES];
    size_t nres = 0;
    gp_error err = {0};
    if (ag_devplugin_resources(pod, node, configmaps, n->st.gpus, n->st.gpu_model, res,
                               CTL_NODE_MAX_RESOURCES, &nres, &err) != 0) {
        journal_add(a, n, "device-plugin", err.text);
        snprintf(crashed, cap, "%s", container);
        return CTL_POD_CRASHES;
    }
    for (size_t i = 0; i < nres; i++) {
        device *d = device_named(n, res[i].name);
        if (!d) continue;
        d->capacity = d->allocatable = res[i].count;
        d->gone_at = 0;
        char line[256];
        snprintf(line, sizeof line, "Registered device plugin for '%s' with Kubelet", d->name);
        journal_add(a, n, "device-plugin", line);
    }
    snprintf(n->plugin_uid, sizeof n->plugin_uid, "%s", kube_str(kube_obj(pod, "metadata"), "uid"));
    return CTL_POD_RUNS;
}

static ctl_pod_start pod_start_locked(ag_agents *a, node_agent *n, const json_t *node,
                                      const json_t *pod, const json_t *configmaps, char *crashed,
                                      size_t cap)
{
    ag_toolkit t;
    gp_error err = {0};
    int is_toolkit = ag_toolkit_from_pod(pod, &t, &err);
    if (is_toolkit < 0) {
        /* the installer refuses its settings and exits */
        journal_add(a, n, "toolkit", err.text);
        const json_t *c = json_array_get(json_object_get(kube_obj(pod, "spec"), "containers"), 0);
        snprintf(crashed, cap, "%s", kube_str(c, "name"));
        return CTL_POD_CRASHES;
    }
    if (is_toolkit) return start_toolkit(a, n, pod, &t, crashed, cap);
    char container[128];
    if (ag_devplugin_in_pod(pod, container, sizeof container))
        return start_plugin(a, n, node, pod, configmaps, container, crashed, cap);
    return CTL_POD_RUNS;
}

static ctl_pod_start pod_start(void *ctx, const json_t *node, const json_t *pod,
                               const json_t *configmaps, int64_t now_ms, char *crashed, size_t cap)
{
    (void)now_ms;
    ag_agents *a = ctx;
    const char *name = kube_str(kube_obj(node, "metadata"), "name");
    const char *uid = kube_str(kube_obj(pod, "metadata"), "uid");
    pthread_mutex_lock(&a->lock);
    gp_error err = {0};
    node_agent *n = agent_of(a, name, false, &err);
    ctl_pod_start how = CTL_POD_RUNS;
    if (n) {
        /* the kubelet may ask again for a start it made (its status write
         * still on the way): the containers start once a boot */
        const json_t *seen = json_object_get(n->started, uid);
        if (seen && (unsigned long)json_integer_value(json_object_get(seen, "boot")) == n->boot) {
            const char *c = kube_str(seen, "crashed");
            snprintf(crashed, cap, "%s", c);
            how = c[0] ? CTL_POD_CRASHES : CTL_POD_RUNS;
        } else {
            crashed[0] = '\0';
            size_t from = journal_len(a, n);
            how = pod_start_locked(a, n, node, pod, configmaps, crashed, cap);
            char *log = journal_since(a, n, from);
            json_object_set_new(n->started, uid,
                                json_pack("{s:I, s:s, s:s}", "boot", (json_int_t)n->boot, "crashed",
                                          how == CTL_POD_CRASHES ? crashed : "", "log",
                                          log ? log : ""));
            free(log);
        }
    }
    pthread_mutex_unlock(&a->lock);
    return how;
}

static void pod_stop(void *ctx, const char *node, const json_t *pod, int64_t now_ms)
{
    ag_agents *a = ctx;
    const char *uid = kube_str(kube_obj(pod, "metadata"), "uid");
    pthread_mutex_lock(&a->lock);
    gp_error err = {0};
    node_agent *n = agent_of(a, node, false, &err);
    if (n && uid[0]) {
        json_object_del(n->started, uid);
        if (strcmp(n->toolkit_uid, uid) == 0) {
            /* SIGTERM: the installer cleans up and restarts containerd */
            gp_buf log = {0};
            if (ag_toolkit_cleanup(n->dir, &n->toolkit, &log, &err) != 0)
                gp_buf_addf(&log, "unable to cleanup runtime: %s\n", err.text);
            log_buf(a, n, "toolkit", &log);
            toolkit_restart(a, n, &n->toolkit);
            n->toolkit_uid[0] = '\0';
        }
        if (strcmp(n->plugin_uid, uid) == 0) {
            /* the endpoint is gone: its devices unhealthy at once */
            for (size_t i = 0; i < n->ndevices; i++) {
                n->devices[i].allocatable = 0;
                n->devices[i].gone_at = (double)now_ms / 1000;
            }
            n->plugin_uid[0] = '\0';
        }
    }
    pthread_mutex_unlock(&a->lock);
}

/* ---- life ---- */

ag_agents *ag_agents_new(const char *nodes_dir, gp_error *err)
{
    if (mkdir(nodes_dir, 0755) != 0 && errno != EEXIST) {
        gp_error_set(err, nodes_dir, 0, 0, "cannot create: %s", strerror(errno));
        return NULL;
    }
    ag_agents *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    snprintf(a->nodes_dir, sizeof a->nodes_dir, "%s", nodes_dir);
    pthread_mutex_init(&a->lock, NULL);
    pthread_mutex_init(&a->journal_lock, NULL);
    a->host = ag_host_new(host_log, a, err);
    if (!a->host) {
        ag_agents_free(a);
        return NULL;
    }
    a->view = (ctl_node_agents){
        .ctx = a, .observe = observe, .pod_start = pod_start, .pod_stop = pod_stop};
    return a;
}

int ag_agents_run(ag_agents *a, gp_error *err)
{
    return ag_host_run(a->host, err);
}

void ag_agents_free(ag_agents *a)
{
    if (!a) return;
    ag_host_free(a->host);
    for (size_t i = 0; i < a->n; i++) {
        json_decref(a->nodes[i]->started);
        gp_buf_free(&a->nodes[i]->journal);
        free(a->nodes[i]);
    }
    free(a->nodes);
    pthread_mutex_destroy(&a->lock);
    pthread_mutex_destroy(&a->journal_lock);
    free(a);
}

const ctl_node_agents *ag_agents_kubelet(ag_agents *a)
{
    return &a->view;
}

/* ---- what an operator does ---- */

int ag_agents_restart_containerd(ag_agents *a, const char *node, gp_error *err)
{
    pthread_mutex_lock(&a->lock);
    node_agent *n = agent_of(a, node, false, err);
    int rc = n ? ag_host_restart(a->host, node, err) : -1;
    if (n && rc == 0)
        journal_add(a, n, "systemd", "Stopped containerd.service; Started containerd.service.");
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int ag_agents_signal(ag_agents *a, const char *node, int sig, gp_error *err)
{
    pthread_mutex_lock(&a->lock);
    node_agent *n = agent_of(a, node, false, err);
    int rc = n ? ag_host_signal(a->host, node, sig, err) : -1;
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int ag_agents_reboot(ag_agents *a, const char *node, bool kernel_update, gp_error *err)
{
    pthread_mutex_lock(&a->lock);
    node_agent *n = agent_of(a, node, false, err);
    int rc = n ? 0 : -1;
    if (n && kernel_update) {
        /* apt upgraded the kernel; the driver's module was built by DKMS for
         * the old one only (node.toml's driver.kernel stays) */
        ag_node_state st;
        rc = ag_node_state_read(n->dir, &st, err);
        if (rc == 0) {
            char next[sizeof st.kernel_version];
            ag_node_next_kernel(st.kernel_version, next, sizeof next);
            snprintf(st.kernel_version, sizeof st.kernel_version, "%s", next);
            rc = ag_node_state_write(n->dir, &st, err);
        }
    }
    if (rc == 0) {
        journal_add(a, n, "systemd", "System is rebooting.");
        ag_kubelet_stop(&n->kubelet);
        rc = ag_host_stop(a->host, node, err);
        /* containers do not outlive a reboot: every pod starts again */
        json_object_clear(n->started);
        n->toolkit_uid[0] = '\0';
        if (rc == 0) rc = ag_host_start(a->host, node, err);
        if (rc == 0) boot(a, n, wall());
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

json_t *ag_agents_names(ag_agents *a)
{
    pthread_mutex_lock(&a->lock);
    json_t *names = json_array();
    for (size_t i = 0; names && i < a->n; i++)
        json_array_append_new(names, json_string(a->nodes[i]->name));
    pthread_mutex_unlock(&a->lock);
    return names;
}

/* ---- status ---- */

typedef struct status_ctx {
    json_t *loaded;
} status_ctx;

static const char *cri_state_name(ag_cri_state s)
{
    return s == AG_CRI_UP ? "up" : s == AG_CRI_FAILED ? "failed" : "disabled";
}

static const char *daemon_phase_name(ag_daemon_phase p)
{
    return p == AG_DAEMON_RUNNING ? "running" : p == AG_DAEMON_RESTARTING ? "restarting" : "down";
}

static json_t *string_list(const char **items, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        json_array_append_new(list, json_string(items[i]));
    return list;
}

static void status_of_daemon(const ag_daemon *d, const char *dir, void *ctx)
{
    (void)dir;
    status_ctx *s = ctx;
    json_t *o = json_pack("{s:s, s:I, s:f, s:f, s:s, s:s}", "phase", daemon_phase_name(d->phase),
                          "starts", (json_int_t)d->starts, "exited_at", d->exited_at, "restart_at",
                          d->restart_at, "last_exit", d->last_exit, "last_error", d->last_error);
    if (o && d->phase == AG_DAEMON_RUNNING && d->loaded) {
        const ag_loaded *l = d->loaded;
        json_object_set_new(o, "version", json_string(l->version));
        json_object_set_new(o, "started", json_real(l->started));
        json_object_set_new(o, "pid", json_integer(l->pid));
        json_object_set_new(o, "cri", json_string(cri_state_name(l->cri)));
        json_object_set_new(o, "cri_error", json_string(l->cri_error));
        json_object_set_new(o, "handlers", string_list(l->runtimes, l->nruntimes));
        json_object_set_new(o, "default_runtime", json_string(l->default_runtime));
    }
    s->loaded = o;
}

static json_t *declared(const node_agent *n)
{
    gp_error err = {0};
    cd_prediction *p = ag_node_predict(n->dir, &n->st, &err);
    if (!p) return json_pack("{s:s}", "error", err.text);
    json_t *files = json_array();
    for (size_t i = 0; files && i < p->nfiles; i++) {
        struct stat sb;
        const cd_file *f = &p->files[i];
        double mtime = f->read_path && stat(f->read_path, &sb) == 0
                           ? (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec / 1e9
                           : 0;
        json_array_append_new(files, json_pack("{s:s, s:s, s:f, s:o}", "path", f->path, "host_path",
                                               f->read_path ? f->read_path : "", "mtime", mtime,
                                               "handlers", string_list(f->runtimes, f->nruntimes)));
    }
    json_t *o = json_pack("{s:o, s:o, s:s?, s:s?, s:s?}", "files", files, "handlers",
                          string_list(p->runtimes, p->nruntimes), "default_runtime",
                          p->default_written, "error", p->error, "cri_error", p->cri_error);
    cd_prediction_free(p);
    return o;
}

static const char *kubelet_phase_name(ag_kubelet_phase p)
{
    return p == AG_KUBELET_RUNNING      ? "running"
           : p == AG_KUBELET_RESTARTING ? "restarting"
                                        : "stopped";
}

json_t *ag_agents_status(ag_agents *a, const char *node, gp_error *err)
{
    pthread_mutex_lock(&a->lock);
    node_agent *n = agent_of(a, node, false, err);
    json_t *o = NULL;
    if (n) {
        status_ctx s = {NULL};
        gp_error ignored = {0};
        ag_host_with_daemon(a->host, n->name, status_of_daemon, &s, &ignored);
        json_t *devices = json_array();
        for (size_t i = 0; devices && i < n->ndevices; i++)
            json_array_append_new(devices,
                                  json_pack("{s:s, s:I, s:I}", "name", n->devices[i].name,
                                            "capacity", (json_int_t)n->devices[i].capacity,
                                            "allocatable", (json_int_t)n->devices[i].allocatable));
        pthread_mutex_lock(&a->journal_lock);
        json_t *journal = json_string(n->journal.data ? n->journal.data : "");
        pthread_mutex_unlock(&a->journal_lock);
        o = json_pack(
            "{s:s, s:s, s:s?, s:I, s:s, s:{s:s, s:b, s:s, s:s, s:s, s:i, s:s}, s:o, s:o*, "
            "s:{s:s, s:f, s:s}, s:b, s:o, s:s?, s:o}",
            "node", n->name, "dir", n->dir, "socket", n->socket[0] ? n->socket : NULL, "boot",
            (json_int_t)n->boot, "boot_id", n->boot_id, "state", "containerd_version",
            n->st.containerd_version, "driver_installed", n->st.driver_installed, "driver_version",
            n->st.driver_version, "driver_kernel", n->st.driver_kernel, "kernel",
            n->st.kernel_version, "gpus", n->st.gpus, "gpu_model", n->st.gpu_model, "declared",
            declared(n), "loaded", s.loaded, "kubelet", "phase",
            kubelet_phase_name(n->kubelet.phase), "started", n->kubelet.started, "last_error",
            n->kubelet.last_error, "driver_loaded", n->driver_loaded, "devices", devices, "toolkit",
            n->toolkit_uid[0] ? n->toolkit.tag : NULL, "journal", journal);
    }
    pthread_mutex_unlock(&a->lock);
    if (n && !o) gp_error_set(err, NULL, 0, 0, "out of memory");
    return o;
}

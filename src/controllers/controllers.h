/* The embedded control plane's controllers: scheduler, DaemonSet
 * controller, fake kubelet, node lifecycle and taint eviction controllers,
 * garbage collector and namespace controller.
 *
 * Their decisions are pure functions (sched.c, daemonset*.c, kubelet.c,
 * gc.c); this runtime gives them snapshots and carries out what they decide
 * through the in-process client, so every action passes the same admission
 * and validation, takes a resourceVersion and makes the watch events any
 * kubectl client sees. It runs on one thread, level-triggered: after any
 * change to the store it takes a fresh snapshot and runs every controller,
 * and again while a pass changed something, until the cluster is quiet. */
#ifndef GPUOP_CONTROLLERS_CONTROLLERS_H
#define GPUOP_CONTROLLERS_CONTROLLERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "apiserver/routes.h"
#include "util/error.h"

/* ---- simulated nodes (`gpuop cluster up --node-agents`) ----
 *
 * What the fake kubelet of a node finds on the node when a node agent
 * simulates it (src/agents/agents.h fills these): its own process, its
 * container runtime, its device plugins, and the labels the node's feature
 * discovery publishes. The kubelet's writes then follow from them
 * (kubelet_runtime_internal.h). */

#define CTL_NODE_MAX_HANDLERS  16
#define CTL_NODE_MAX_RESOURCES 8
#define CTL_NODE_MAX_LABELS    16

typedef struct ctl_node_resource {
    char name[96]; /* an extended resource a device plugin registered: nvidia.com/gpu */
    long long capacity, allocatable;
} ctl_node_resource;

typedef struct ctl_node_label {
    char key[96];
    char value[64];
    bool present; /* false: the label goes (its source went away) */
} ctl_node_label;

typedef struct ctl_node_facts {
    /* The kubelet process runs. When it does not (its start failed; systemd
     * tries again), the node posts nothing and renews no Lease. */
    bool kubelet_running;
    /* Which kubelet process: a new one (a restart, a reboot) syncs every pod
     * of the node again. */
    unsigned long boot;
    /* The runtime's last Status that worked, and PLEG's last relist that
     * worked, in ms since the epoch (0: none since the kubelet started). */
    int64_t runtime_ok_ms, relist_ok_ms;
    /* The runtime serves CRI right now: pods are synced only then. */
    bool runtime_up;
    /* The handlers the runtime's Status reported last (containerd 2.0 on),
     * and whether it reports any: 1.6 and 1.7 do not, and the node has no
     * status.runtimeHandlers. */
    bool reports_handlers;
    char handlers[CTL_NODE_MAX_HANDLERS][64];
    size_t handler_count;
    /* The handlers the CRI plugin serves now (what a sandbox can get), and
     * whether its error for another one is 2.x's "unable to get OCI runtime
     * for sandbox" (else 1.x's "failed to get sandbox runtime"). */
    char loaded[CTL_NODE_MAX_HANDLERS][64];
    size_t loaded_count;
    bool sandbox_error_v2;
    /* nodeInfo as the kubelet reports it. */
    char runtime_version[96]; /* "containerd://1.6.20~ds1" */
    char kernel_version[128];
    char boot_id[40];
    /* The device manager's resources: every one a plugin ever registered
     * on the node, with 0 where it is gone. */
    ctl_node_resource resources[CTL_NODE_MAX_RESOURCES];
    size_t resource_count;
    ctl_node_label labels[CTL_NODE_MAX_LABELS];
    size_t label_count;
} ctl_node_facts;

/* What the kubelet's start of a pod's containers comes to on the node. */
typedef enum ctl_pod_start {
    CTL_POD_RUNS,    /* every container runs */
    CTL_POD_CRASHES, /* one exits at once and is restarted with a back-off */
} ctl_pod_start;

typedef struct ctl_node_agents {
    void *ctx;
    /* A managed node, once a pass: its agent is made when it has none. 0
     * with *facts filled, -1 when the node has no agent (it could not be
     * made: its kubelet is then as down). Called on the controllers' thread
     * only, as are the two below. */
    int (*observe)(void *ctx, const char *node, int64_t now_ms, ctl_node_facts *facts);
    /* The kubelet starts the containers of `pod` on `node` (the Node
     * object; its sandbox made). `configmaps` is every ConfigMap of the
     * cluster (what the pod's volumes may mount). Returns what becomes of
     * them; with CTL_POD_CRASHES the container that exits is named in
     * crashed (cap bytes). */
    ctl_pod_start (*pod_start)(void *ctx, const json_t *node, const json_t *pod,
                               const json_t *configmaps, int64_t now_ms, char *crashed, size_t cap);
    /* The pod's containers are stopped (the pod is deleted). */
    void (*pod_stop)(void *ctx, const char *node, const json_t *pod, int64_t now_ms);
} ctl_node_agents;

typedef struct ctl_loop_options {
    /* The fake kubelet holds a pod whose RuntimeClass handler its node does
     * not report in ContainerCreating, with the kubelet's event (off: the
     * seeds' lab expects the pod to run). */
    bool runtime_check;
    /* The node lifecycle controller's grace period: a node whose kubelet
     * posts no heartbeat for this long is Unknown (kube-controller-manager's
     * --node-monitor-grace-period; 0 for its default, 40 s). The fake
     * kubelet renews its Lease often enough for a shorter one. */
    int64_t node_monitor_grace_ms;
    /* The simulated nodes (NULL: none, the fake kubelet alone, as kwok's):
     * borrowed, it must outlive the loop. */
    const ctl_node_agents *agents;
} ctl_loop_options;

typedef struct ctl_loop ctl_loop;

ctl_loop *ctl_loop_new(as_api *api, const ctl_loop_options *opt);
/* Runs the controllers on a thread of their own until ctl_loop_free. */
int ctl_loop_start(ctl_loop *c, gp_error *err);
/* Stops the thread if it runs (call before the store closes) and frees. */
void ctl_loop_free(ctl_loop *c);

/* One pass of every controller over the current state at time `now_ms`
 * (milliseconds since the epoch), its writes done; returns how many writes
 * it made. The thread runs passes on its own; tests call this instead,
 * without the thread, to step the cluster deterministically. */
int ctl_loop_step(ctl_loop *c, int64_t now_ms);

#endif

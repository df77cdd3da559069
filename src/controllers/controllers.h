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

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "apiserver/routes.h"
#include "util/error.h"

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

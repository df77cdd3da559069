/* A simulated node's kubelet process (kubelet_unit.h). */
#include "agents/kubelet_unit.h"

#include <stdio.h>
#include <string.h>

/* Where the kubelet dials: the endpoint's path on the node. */
#define SOCKET_PATH "/run/containerd/containerd.sock"

void ag_kubelet_init(ag_kubelet *k)
{
    memset(k, 0, sizeof *k);
    k->phase = AG_KUBELET_STOPPED;
}

static bool serves_cri(const ag_daemon *d)
{
    return d->phase == AG_DAEMON_RUNNING && d->loaded && d->loaded->cri == AG_CRI_UP;
}

void ag_kubelet_cri_error(const ag_daemon *d, char *out, size_t cap)
{
    if (serves_cri(d)) {
        snprintf(out, cap, "%s", "");
    } else if (d->phase == AG_DAEMON_RUNNING) {
        /* grpc-go's answer for a service the server does not register. */
        snprintf(
            out, cap,
            "rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService");
    } else {
        /* grpc-go's dial failure (transport: "Error while dialing: %v")
         * around net.Dial's error on the socket. */
        snprintf(out, cap,
                 "rpc error: code = Unavailable desc = connection error: desc = \"transport: "
                 "Error while dialing: dial unix %s: connect: %s\"",
                 SOCKET_PATH, d->exit_clean ? "no such file or directory" : "connection refused");
    }
}

void ag_kubelet_start_error(const char *cri_error, char *out, size_t cap)
{
    snprintf(out, cap,
             "\"command failed\" err=\"failed to run Kubelet: validate service connection: "
             "validate CRI v1 runtime API for endpoint \\\"%s\\\": %s\"",
             AG_KUBELET_ENDPOINT, cri_error);
}

/* updateRuntimeUp and PLEG's relist, when the runtime answers. */
static void look(ag_kubelet *k, const ag_daemon *d, double now)
{
    if (!serves_cri(d)) return;
    k->runtime_ok = now;
    k->relist_ok = now;
    /* Status carries runtime_handlers from containerd 2.0 on (the recorded
     * status-2.1.5-bare.json; none in 1.6.20 and 1.7.29): the default
     * handler first, as "", then every loaded one. */
    k->nhandlers = 0;
    if (cd_is_v1(d->loaded->family)) return;
    snprintf(k->handlers[k->nhandlers++], sizeof k->handlers[0], "%s", "");
    for (size_t i = 0; i < d->loaded->nruntimes && k->nhandlers < AG_KUBELET_MAX_HANDLERS; i++)
        snprintf(k->handlers[k->nhandlers++], sizeof k->handlers[0], "%s", d->loaded->runtimes[i]);
}

bool ag_kubelet_start(ag_kubelet *k, const ag_daemon *d, double now)
{
    k->starts++;
    k->runtime_ok = k->relist_ok = 0;
    k->nhandlers = 0;
    char cri[512];
    ag_kubelet_cri_error(d, cri, sizeof cri);
    if (cri[0]) {
        ag_kubelet_start_error(cri, k->last_error, sizeof k->last_error);
        k->phase = AG_KUBELET_RESTARTING;
        k->restart_at = now + AG_KUBELET_RESTART_SEC;
        return false;
    }
    k->last_error[0] = '\0';
    k->phase = AG_KUBELET_RUNNING;
    k->started = now;
    k->restart_at = 0;
    look(k, d, now);
    return true;
}

void ag_kubelet_stop(ag_kubelet *k)
{
    k->phase = AG_KUBELET_STOPPED;
    k->restart_at = 0;
    k->runtime_ok = k->relist_ok = 0;
    k->nhandlers = 0;
}

bool ag_kubelet_tick(ag_kubelet *k, const ag_daemon *d, double now)
{
    if (k->phase == AG_KUBELET_RESTARTING && now >= k->restart_at) {
        ag_kubelet_start(k, d, now);
        return true;
    }
    /* updateRuntimeUp runs every 5 s and PLEG relists every second; looking
     * at every tick (a second apart or less) moves the times of the last
     * answers by no more than those periods. */
    if (k->phase == AG_KUBELET_RUNNING) look(k, d, now);
    return false;
}

double ag_kubelet_next_event(const ag_kubelet *k)
{
    return k->phase == AG_KUBELET_RESTARTING ? k->restart_at : 0;
}

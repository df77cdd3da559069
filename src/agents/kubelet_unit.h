/* A simulated node's kubelet as a process: the systemd unit that runs it,
 * its start against the node's containerd, and what its runtime state
 * remembers of the daemon. Pure: every function takes the time, and reads
 * nothing but the daemon model it is given (daemon.h). What the kubelet
 * then writes to the API server is the fake kubelet's (src/controllers/
 * kubelet_runtime.c), from the facts this state gives (agents.h).
 *
 * The facts it follows, read in kubernetes/kubernetes (1.32):
 * - the kubelet validates the runtime's CRI v1 API at start, and a failure
 *   ends the process (staging/src/k8s.io/cri-client/pkg/remote_runtime.go
 *   NewRemoteRuntimeService: "validate service connection: %w" around
 *   validateServiceConnection's "validate CRI v1 runtime API for endpoint
 *   %q: %w"; cmd/kubelet/app/server.go Run: "failed to run Kubelet: %w");
 *   the packaged kubelet.service restarts it 10 s later (Restart=always,
 *   RestartSec=10), and again while the start fails. A kubelet that does
 *   not run posts no status and renews no Lease: the node lifecycle
 *   controller marks the node Unknown after its grace period.
 * - a running kubelet asks the runtime's Status every 5 s (kubelet.go
 *   updateRuntimeUp); a success records the time, the handlers it reports
 *   and the features (runtime.go setRuntimeSync, setRuntimeHandlers). A
 *   failure records nothing, so the last handlers stay.
 * - the generic PLEG relists every second and its health fails 3 minutes
 *   after the last relist that worked (pleg/generic.go relistThreshold);
 *   a relist needs the runtime. */
#ifndef GPUOP_AGENTS_KUBELET_UNIT_H
#define GPUOP_AGENTS_KUBELET_UNIT_H

#include <stdbool.h>
#include <stddef.h>

#include "agents/daemon.h"

/* kubelet.service: Restart=always, RestartSec=10 (kubernetes/release,
 * cmd/krel/templates/latest/kubelet/kubelet.service). */
#define AG_KUBELET_RESTART_SEC 10
/* The runtime endpoint as kubeadm configures it. */
#define AG_KUBELET_ENDPOINT     "unix:///run/containerd/containerd.sock"
#define AG_KUBELET_MAX_HANDLERS 16

typedef enum ag_kubelet_phase {
    AG_KUBELET_RUNNING,
    AG_KUBELET_RESTARTING, /* its start failed; systemd starts it at restart_at */
    AG_KUBELET_STOPPED,    /* the node is down (a reboot in progress) */
} ag_kubelet_phase;

typedef struct ag_kubelet {
    ag_kubelet_phase phase;
    double started;    /* when the running process started */
    double restart_at; /* RESTARTING */
    unsigned starts;   /* processes started, the failed ones too */
    /* kubelet.go's runtimeState: the last Status that worked (0: none since
     * this process started) and PLEG's last relist that worked. */
    double runtime_ok, relist_ok;
    char handlers[AG_KUBELET_MAX_HANDLERS][64]; /* the last handlers reported */
    size_t nhandlers;
    /* How the last start failed, as the kubelet's journal line says it
     * ("" when it runs). */
    char last_error[1024];
} ag_kubelet;

void ag_kubelet_init(ag_kubelet *k);

/* The kubelet starts now against daemon `d` (at boot, or systemd's
 * restart): it runs when the daemon serves CRI, else it exits at once with
 * the error of ag_kubelet_start_error and is RESTARTING. Returns true when
 * it runs. */
bool ag_kubelet_start(ag_kubelet *k, const ag_daemon *d, double now);

/* The node goes down: the kubelet stops and nothing restarts it until the
 * next ag_kubelet_start (its runtime state is lost with the process). */
void ag_kubelet_stop(ag_kubelet *k);

/* Lets time pass: a running kubelet looks at the runtime (its Status and
 * PLEG's relist succeed when the daemon serves CRI); a RESTARTING one is
 * started again when systemd's restart is due. Returns true when this
 * started a process (it may have failed again). */
bool ag_kubelet_tick(ag_kubelet *k, const ag_daemon *d, double now);

/* When the kubelet next needs a tick for a restart, or 0. */
double ag_kubelet_next_event(const ag_kubelet *k);

/* What a CRI Version call from the kubelet gets from daemon `d`, as gRPC
 * Go prints its error ("" when it works): the CRI service missing from a
 * daemon whose CRI plugin failed ("rpc error: code = Unimplemented desc =
 * unknown service runtime.v1.RuntimeService", the answer recorded in
 * ../shared/containerd-cases/cri-status/status-1.6.20-bare.json), or the
 * dial failing on a socket left by a killed daemon (connection refused) or
 * removed by a clean stop (no such file or directory). */
void ag_kubelet_cri_error(const ag_daemon *d, char *out, size_t cap);

/* The journal line of a start that failed with cri_error (component-base's
 * "command failed" with the error kubelet's Run returns). */
void ag_kubelet_start_error(const char *cri_error, char *out, size_t cap);

#endif

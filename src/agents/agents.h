/* The node agents of gpuop's embedded cluster (`gpuop cluster up
 * --node-agents`): a simulated node for every fake node the fake kubelet
 * manages, made the first time the kubelet looks at it, under
 * NODES_DIR/NAME/ (node.h: its files and node.toml; DATA/nodes/ in the
 * cluster's data directory). Each has
 * - its containerd (daemon.h, served on NAME/run/containerd/containerd.sock
 *   by the host, host.h, when that path fits a unix socket),
 * - its kubelet process (kubelet_unit.h), started at each boot after
 *   containerd, and restarted by its unit while its start fails,
 * - its NVIDIA driver: the module loads at boot when node.toml says it is
 *   installed and built for the kernel that boots,
 * - its device manager: what the device plugin registered (devplugin.h),
 *   allocatable 0 at once and capacity 0 five minutes after the plugin
 *   goes (cm/devicemanager endpointStopGracePeriod), both 0 after a reboot
 *   until the plugin registers again (the checkpoint),
 * - the toolkit's container when one runs there (toolkit.h),
 * - its journal, the last lines of each unit.
 * A node's files outlive the agents: agents made again (the API server
 * restarted) find them, and their nodes boot as after a reboot.
 * The fake kubelet (src/controllers/, through ag_agents_kubelet) asks for
 * each node's facts once a pass and tells it which pods start and stop;
 * `gpuop node` acts on a node through the API server's /gpuop/v1/agents
 * routes (ag_agents_route; control.c says what they take).
 *
 * Thread-safe: the controllers' thread, the API server's and the host's
 * call in; one lock guards the agents, taken before the host's. */
#ifndef GPUOP_AGENTS_AGENTS_H
#define GPUOP_AGENTS_AGENTS_H

#include <stdbool.h>

#include "apiserver/routes.h"
#include "controllers/controllers.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct ag_agents ag_agents;

/* Agents whose nodes live under `nodes_dir` (created when missing, 0755).
 * NULL with err when it cannot be made. */
ag_agents *ag_agents_new(const char *nodes_dir, gp_error *err);
/* Starts the thread that serves the nodes' sockets and restarts their
 * daemons. 0, or -1 with err. */
int ag_agents_run(ag_agents *a, gp_error *err);
/* Stops every node (their daemons shut down cleanly) and frees. */
void ag_agents_free(ag_agents *a);

/* The fake kubelet's view (borrowed, lives with `a`). */
const ctl_node_agents *ag_agents_kubelet(ag_agents *a);

/* What a node agent does on the node, as an operator would (control.c):
 * 0, or -1 with err (an unknown node, a node.toml that cannot be read or
 * written). ag_agents_signal returns 1 when no containerd process was
 * there to take the signal. */
int ag_agents_restart_containerd(ag_agents *a, const char *node, gp_error *err);
int ag_agents_signal(ag_agents *a, const char *node, int sig, gp_error *err);
int ag_agents_reboot(ag_agents *a, const char *node, bool kernel_update, gp_error *err);

/* The node's state as JSON (control.c documents it), a new reference; NULL
 * with err for an unknown node. */
json_t *ag_agents_status(ag_agents *a, const char *node, gp_error *err);
/* The names of the nodes that have an agent, sorted (new reference). */
json_t *ag_agents_names(ag_agents *a);

/* The log of the container a node agent runs in pod `pod_uid` on `node`
 * (the toolkit's installer, the device plugin), for `kubectl logs`
 * (as_api.pod_log; ctx is the agents): what it wrote at its last start, as
 * the node's journal has it. 1 with the text appended to out, 0 when the
 * agent ran nothing there. */
int ag_agents_pod_log(void *ctx, const char *node, const char *pod_uid, const char *container,
                      gp_buf *out);

/* The API server's routes under /gpuop/v1/agents (as_api.extension). */
void ag_agents_route(void *ctx, const as_request *req, as_response *resp);

#endif

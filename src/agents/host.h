/* The runtime of simulated nodes' containerd: each node's daemon (the pure
 * model of daemon.h), the supervisor's clock, and the daemon's socket,
 * served on one thread for every node.
 *
 * While a node's containerd runs, its socket answers as the real daemon's
 * does (grpc_internal.h: CRI RuntimeService, the introspection and version
 * services), so the field tools, `ctr` and any CRI client read the
 * simulated node the way they read a real one. When it exits the socket
 * stops answering: a daemon killed by a signal leaves its socket file
 * behind (connections are refused), one that shut down removes it; each
 * start binds it anew, removing a stale socket file first (never anything
 * that is not a socket).
 *
 * This file and grpc_conn.c use libnghttp2: they are the gpuop_agents_net
 * library (CMakeLists.txt), linked only into the programs that run agents
 * (gpuop-node-agent), never into gpuop. Thread-safe: every call may come
 * from any thread; the daemons are read and changed under the host's lock. */
#ifndef GPUOP_AGENTS_HOST_H
#define GPUOP_AGENTS_HOST_H

#include <stdbool.h>

#include "agents/daemon.h"
#include "util/error.h"

typedef struct ag_host ag_host;

/* Called with journal lines of a node (daemon.h: ag_journal_*),
 * newline-terminated, on whichever thread made them happen and with the
 * host's lock held: it must not call the host. */
typedef void (*ag_host_log_fn)(void *ctx, const char *node, const char *lines);

/* NULL with err when the wake-up pipe cannot be made. `log` may be NULL. */
ag_host *ag_host_new(ag_host_log_fn log, void *log_ctx, gp_error *err);

/* Adds node `name` (unique; [A-Za-z0-9._-]+) rooted at `dir` and starts
 * its containerd now (systemctl start at boot). `socket`: where it serves
 * (at most 107 bytes), NULL for the node's own DIR/run/containerd/
 * containerd.sock, "" for nowhere (a node whose answers are only read
 * through ag_host_with_daemon, when a thousand sockets would be too
 * many). Before ag_host_run or after; -1 with err when the name is taken
 * or bad, the socket path too long, or the start could not be tried
 * (node.toml invalid). A refused config is no error: the daemon is then
 * in its restart loop, as a real node's would be. */
int ag_host_add(ag_host *h, const char *name, const char *dir, const char *socket, gp_error *err);

/* Starts the serving thread. 0, or -1 with err. */
int ag_host_run(ag_host *h, gp_error *err);

/* Stops the thread and every daemon (a clean shutdown: their sockets are
 * removed) and frees everything. NULL is fine. */
void ag_host_free(ag_host *h);

/* What an operator does on the node: `kill -SIG $(pidof containerd)`,
 * `systemctl restart|start|stop containerd`. -1 with err for an unknown
 * node (or a start that could not be tried), else 0; ag_host_signal
 * returns 1 when no containerd process was there to take the signal (the
 * toolkit's signal mode then fails to dial and tries again). */
int ag_host_signal(ag_host *h, const char *name, int sig, gp_error *err);
int ag_host_restart(ag_host *h, const char *name, gp_error *err);
int ag_host_start(ag_host *h, const char *name, gp_error *err);
int ag_host_stop(ag_host *h, const char *name, gp_error *err);

/* Every process-wide SIGHUP-like event: signals every node's containerd
 * (the node agent program forwards its own SIGHUP this way). */
void ag_host_signal_all(ag_host *h, int sig);

/* Calls fn with the node's daemon, under the lock: fn must not keep
 * pointers into it nor call the host. -1 with err for an unknown node. */
int ag_host_with_daemon(ag_host *h, const char *name,
                        void (*fn)(const ag_daemon *d, const char *dir, void *ctx), void *ctx,
                        gp_error *err);

#endif

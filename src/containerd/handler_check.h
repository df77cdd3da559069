/* Is a runtime handler loaded? The check behind `gpuop containerd check`,
 * for any caller that needs the verdict (why-pending's next step, a
 * RuntimeClass whose handler is missing).
 *
 * Three witnesses, most truthful first; none of them is a config file:
 *
 *   daemon  the running containerd's CRI Status (cri.h): the runtimes its
 *           CRI plugin serves now, what the kubelet gets. Loaded or not
 *           loaded; a daemon that serves no CRI (its plugin failed to load)
 *           loads no handler.
 *   node    the Node's status.runtimeHandlers, which the kubelet copies from
 *           CRI Status. Only containerd 2.0 and later report handlers
 *           there: on 1.6 and 1.7 the list is absent, which proves nothing.
 *   dump    `containerd config dump`: the installed binary re-reads the
 *           files, so it shows what a restart would load, not what is
 *           loaded (the incident: a drop-in written after the start). It
 *           can only predict: the verdict stays "cannot tell".
 *
 * CD_SOURCE_AUTO takes the first that can tell, in that order (the node
 * only when the caller gives one), and the result says which one it used
 * and why the ones before it could not. Beside the verdict: whether a
 * restart is pending (a config file newer than the daemon's start, read
 * from /proc), when the daemon runs on this machine.
 *
 * Exit codes follow the verdict: 0 loaded, 1 not loaded, 2 cannot tell. */
#ifndef GPUOP_CONTAINERD_HANDLER_CHECK_H
#define GPUOP_CONTAINERD_HANDLER_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "containerd/cri.h"
#include "containerd/observed.h"

/* The `schema` member of cd_check_json's object. */
#define CD_CHECK_SCHEMA "gpuop.containerd.check/v1"

typedef enum cd_check_source {
    CD_SOURCE_AUTO,
    CD_SOURCE_DAEMON,
    CD_SOURCE_NODE,
    CD_SOURCE_DUMP,
} cd_check_source;

/* "auto", "daemon", "node", "dump"; cd_check_source_parse: -1 if none. */
const char *cd_check_source_name(cd_check_source s);
int cd_check_source_parse(const char *text, cd_check_source *out);

typedef enum cd_check_verdict {
    CD_HANDLER_LOADED = 0,
    CD_HANDLER_NOT_LOADED = 1,
    CD_HANDLER_UNKNOWN = 2,
} cd_check_verdict;

typedef struct cd_check_request {
    const char *handler; /* a valid runtime name (cd_runtime_name_valid) */
    cd_check_source source;
    const char *address; /* the daemon's socket, PATH or unix://PATH; NULL: the default */
    const json_t *node;  /* a Node object, when the caller has one; NULL: no node source */
} cd_check_request;

typedef enum cd_daemon_state {
    CD_DAEMON_NOT_ASKED,
    CD_DAEMON_SERVED,      /* CRI answered: cri holds its Status */
    CD_DAEMON_NO_CRI,      /* the daemon serves no CRI: plugin says why, if it could */
    CD_DAEMON_UNREACHABLE, /* nothing answers at the address */
    CD_DAEMON_FAILED,      /* an answer that is not CRI's */
} cd_daemon_state;

typedef enum cd_node_state {
    CD_NODE_NOT_ASKED,
    CD_NODE_REPORTS, /* status.runtimeHandlers lists the handlers */
    CD_NODE_SILENT,  /* no runtimeHandlers: proves nothing */
} cd_node_state;

typedef struct cd_check_result {
    cd_check_verdict verdict;
    cd_check_source source; /* the witness of the verdict; AUTO when none could tell */

    cd_daemon_state daemon;
    char address[4096];         /* the socket asked */
    char daemon_error[1024];    /* why it was unreachable or failed */
    cd_cri_status cri;          /* CD_DAEMON_SERVED */
    cd_cri_plugin_error plugin; /* CD_DAEMON_NO_CRI */

    cd_node_state node;
    char node_name[256];
    char node_runtime[128];     /* status.nodeInfo.containerRuntimeVersion, "containerd://1.6.20" */
    bool node_runtime_before_2; /* a containerd 1.x, which never reports handlers */
    cd_names node_handlers;     /* CD_NODE_REPORTS, without the default's "" */

    bool dump_ran;         /* `containerd config dump` was run */
    char dump_error[1024]; /* "" when it gave a dump */
    cd_dump dump;          /* valid when dump_ran and !dump_error[0] */
    int would_load;        /* the dump's prediction for a restart: 1, 0, -1 unknown */

    bool restart_checked;   /* the daemon's start was looked for (not for a node) */
    int restart_pending;    /* 1, 0, -1 cannot tell */
    pid_t daemon_pid;       /* the process found; 0 when none */
    double daemon_started;  /* seconds since the epoch */
    char newest_file[4096]; /* the newest config file and its mtime */
    double newest_mtime;
    char restart_note[10240]; /* why it cannot tell, or which files were compared */
} cd_check_result;

/* Runs the check. Never fails: what could not be asked is part of the
 * result. Free it with cd_check_result_free. */
void cd_handler_check(const cd_check_request *req, cd_check_result *out);
void cd_check_result_free(cd_check_result *r);

/* The node witness alone, for a caller that holds the Node (why-pending):
 * sets out->node, node_* and, when the node reports handlers, the verdict
 * (source CD_SOURCE_NODE); otherwise the verdict stays CD_HANDLER_UNKNOWN.
 * *out must be zeroed or fresh from cd_check_result_free. */
void cd_check_node(const json_t *node, const char *handler, cd_check_result *out);

/* The command an operator runs on the node to check `handler` from the
 * daemon: "gpuop containerd check nvidia-cdi". The name is not quoted: a
 * valid runtime name needs no quoting in sh. */
void cd_check_command(const char *handler, char *buf, size_t cap);

/* The result as JSON: {"schema": CD_CHECK_SCHEMA, "handler", "verdict"
 * ("loaded" | "not-loaded" | "cannot-tell"), "exit", "source", "daemon",
 * "node", "dump", "restart_pending", ...}; on exit 2 an "error" object
 * {code, message, where}. NULL when memory runs out. */
json_t *cd_check_json(const cd_check_request *req, const cd_check_result *r);

#endif

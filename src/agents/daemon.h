/* A node's containerd, simulated: what the daemon loaded, when, and what
 * becomes of it on a signal. Pure: every function takes the time (`now`,
 * seconds since the epoch) instead of reading a clock, and the only I/O is
 * reading the node's files at a start, as the real daemon does.
 *
 * The facts it follows (../shared/design/gpu-node-facts.md):
 * - 4.2, 4.3: what a start loads is gpuop's own prediction of the node's
 *   files for the daemon's version (src/containerd/, `gpuop containerd
 *   merge`): the merge rules of that line, and whether the CRI plugin
 *   refuses the result and with which message. containerd reads its
 *   config at start only; a file written while it runs changes nothing
 *   until the next start (4.4: compare the daemon's start time with the
 *   drop-in's mtime).
 * - 4.3: a CRI plugin that refuses its config leaves the daemon running
 *   without CRI (`failed to load plugin io.containerd.grpc.v1.cri`, the
 *   recorded daemon log ../shared/containerd-cases/cri-status/
 *   daemonlog-1.6.20-bare.txt); in 2.x the runtime plugin fails and the
 *   plugins needing it fail after it.
 * - 4.5: containerd handles SIGTERM, SIGINT, SIGUSR1 and SIGPIPE only; any
 *   other signal, SIGHUP included, takes Go's default action and the
 *   process exits. There is no reload.
 * - 3.4: the packaged unit's Restart=always, RestartSec=5 starts it again
 *   5 s later (node.toml's containerd.restart and restart_sec, node.h).
 *   systemd restarts after a clean exit too (SIGTERM) under Restart=always,
 *   and after a failed start: a config containerd refuses makes a restart
 *   loop, one try every restart_sec.
 *
 * `containerd config dump` re-reads the files (4.4): ag_node_predict() is
 * that answer, the daemon's own answers (Status, plugins) come from
 * ag_loaded, the state taken at its start. */
#ifndef GPUOP_AGENTS_DAEMON_H
#define GPUOP_AGENTS_DAEMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "agents/node.h"
#include "containerd/containerd.h"
#include "util/buf.h"
#include "util/error.h"

typedef enum ag_cri_state {
    AG_CRI_UP,       /* the CRI plugin loaded: RuntimeService is served */
    AG_CRI_FAILED,   /* it refused its config: cri_error says why */
    AG_CRI_DISABLED, /* listed in disabled_plugins: not registered at all */
} ag_cri_state;

/* What one start of the daemon loaded; never changes while it runs. */
typedef struct ag_loaded {
    char version[64]; /* the binary's version string, from node.toml at start */
    cd_family family;
    double started;        /* when this process started */
    unsigned pid;          /* a made-up process id, new at every start */
    cd_prediction *files;  /* the node's files as they were at start, by this line's rules */
    ag_cri_state cri;      /* the CRI plugin */
    char cri_error[1024];  /* "invalid plugin config: ..." when AG_CRI_FAILED */
    const char **runtimes; /* the handlers the CRI plugin serves (empty unless AG_CRI_UP), sorted */
    size_t nruntimes;      /* (the names are the prediction's) */
    char default_runtime[256];
    json_t *config;     /* the effective config, as `merge -o json` shows predicted.config */
    json_t *cri_config; /* Status info.config: the CRI plugin's config as containerd prints it */
} ag_loaded;

void ag_loaded_free(ag_loaded *l);

typedef enum ag_daemon_phase {
    AG_DAEMON_RUNNING,
    AG_DAEMON_RESTARTING, /* exited; the supervisor starts it at restart_at */
    AG_DAEMON_DOWN,       /* exited or stopped, and nothing will start it */
} ag_daemon_phase;

typedef struct ag_daemon {
    ag_daemon_phase phase;
    ag_loaded *loaded; /* while RUNNING; owned */
    double exited_at;  /* when the last process ended (0: never) */
    double restart_at; /* RESTARTING: when the supervisor starts it */
    unsigned starts;   /* starts tried so far */
    /* How the last process ended, in systemd's words ("Main process
     * exited, code=killed, status=1/HUP"), and containerd's own last words
     * when it refused to start ("" otherwise). */
    char last_exit[128];
    char last_error[1024];
    /* It shut down (SIGTERM, SIGINT, systemctl stop or restart) and so
     * removed its socket, as Go's listener does on close; a process killed
     * by a signal leaves the socket file behind, refusing connections. */
    bool exit_clean;
    /* The supervisor's settings, read with node.toml at each start (as
     * systemd keeps the unit it loaded). */
    ag_restart_policy restart;
    int restart_sec;
} ag_daemon;

/* A daemon that has never run: DOWN, nothing loaded. */
void ag_daemon_init(ag_daemon *d);
void ag_daemon_free(ag_daemon *d);

/* Starts containerd on the node rooted at `dir` (systemctl start): reads
 * node.toml and the config files now. A config this version refuses to
 * start on (a syntax error, a missing import, a version it rejects) makes
 * the process exit at once: the daemon is then RESTARTING (or DOWN under
 * Restart=no) with containerd's message in last_error, and the call returns
 * 1. Returns 0 when it runs, -1 with err when nothing could be started
 * (node.toml unreadable or invalid, out of memory): the daemon is left as
 * it was. Starting a running daemon does nothing (returns 0), as systemctl
 * start does. */
int ag_daemon_start(ag_daemon *d, const char *dir, double now, gp_error *err);

/* systemctl restart: stop, then start now, whatever the phase. */
int ag_daemon_restart(ag_daemon *d, const char *dir, double now, gp_error *err);

/* systemctl stop: the daemon ends and stays DOWN. */
void ag_daemon_stop(ag_daemon *d, double now);

/* A signal delivered to the running process (kill -SIG, or the toolkit's
 * restart mode `signal`). SIGUSR1 (stack dump) and SIGPIPE leave it
 * running; SIGTERM and SIGINT end it cleanly; every other signal ends it
 * as Go's default action does. Whatever ended it, the supervisor then
 * restarts it per the policy. Returns true when the process ended; a
 * signal to a daemon that is not running is lost (false). */
bool ag_daemon_signal(ag_daemon *d, int sig, double now);

/* Lets time pass: a RESTARTING daemon whose restart_at has come is started
 * (see ag_daemon_start for the results). Returns 0 when nothing was due. */
int ag_daemon_tick(ag_daemon *d, const char *dir, double now, gp_error *err);

/* When the daemon next needs a tick (restart_at), or 0 when never. */
double ag_daemon_next_event(const ag_daemon *d);

/* What `containerd config dump` would say now: the node's files read by
 * the rules of node.toml's version, whatever the daemon loaded. The
 * caller frees it (cd_prediction_free); NULL with err when node.toml or
 * the main config cannot be read. A missing main config is containerd's
 * built-in defaults, as the real binary starts without one. */
cd_prediction *ag_node_predict(const char *dir, const ag_node_state *st, gp_error *err);

/* The lines a node's journal (journalctl -u containerd) gets for what the
 * daemon just did, appended to `out`, one per line:
 * - after a start that runs: containerd's own log lines (logrus' text
 *   format, as the recorded daemonlog-1.6.20-bare.txt): "starting
 *   containerd", each CRI plugin that failed to load with its error, and
 *   "containerd successfully booted";
 * - after a start containerd refused: its "containerd: <error>" and
 *   systemd's "Main process exited" line;
 * - after an exit: systemd's line (last_exit).
 * `restarted` says the supervisor did the start (systemd then logs its
 * "Scheduled restart job" line first). */
void ag_journal_started(const ag_daemon *d, double now, bool restarted, gp_buf *out);
void ag_journal_exited(const ag_daemon *d, gp_buf *out);

/* Does the running daemon serve runtime handler `name` over CRI? */
bool ag_daemon_serves_handler(const ag_daemon *d, const char *name);

#endif

/* The simulated containerd's lifecycle (see daemon.h). */
#include "agents/daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agents_internal.h"
#include "util/buf.h"

/* Where containerd reads its config (the unit runs it without --config). */
#define MAIN_CONFIG "/etc/containerd/config.toml"

void ag_loaded_free(ag_loaded *l)
{
    if (!l) return;
    cd_prediction_free(l->files);
    free(l->runtimes);
    json_decref(l->config);
    json_decref(l->cri_config);
    free(l);
}

void ag_daemon_init(ag_daemon *d)
{
    memset(d, 0, sizeof *d);
    d->phase = AG_DAEMON_DOWN;
    d->restart = AG_RESTART_ALWAYS;
    d->restart_sec = AG_RESTART_SEC_DEFAULT;
}

void ag_daemon_free(ag_daemon *d)
{
    ag_loaded_free(d->loaded);
    d->loaded = NULL;
}

cd_prediction *ag_node_predict(const char *dir, const ag_node_state *st, gp_error *err)
{
    char *main_path = gp_format("%s%s", dir, MAIN_CONFIG);
    if (!main_path) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    struct stat sb;
    bool missing = lstat(main_path, &sb) != 0 && errno == ENOENT;
    free(main_path);
    /* containerd starts on its built-in defaults when the main config does
     * not exist (cmd/containerd/command/main.go: LoadConfig's not-exist
     * error is ignored); an empty file reads the same. */
    cd_options opt = {
        .config_path = missing ? "/dev/null" : MAIN_CONFIG,
        .root = missing ? NULL : dir,
        .family = st->family,
    };
    return cd_predict(&opt, err);
}

/* ---- what a start loads ---- */

json_t *ag_prediction_config(const cd_prediction *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    int rc = cd_prediction_write_config(p, f);
    if (fclose(f) != 0) rc = -1;
    json_error_t jerr;
    json_t *config = rc == 0 ? json_loadb(text, len, 0, &jerr) : NULL;
    free(text);
    return config;
}

/* The CRI plugin is listed in disabled_plugins (by its full ID). */
static bool cri_disabled(const json_t *config, cd_family family)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(config, "disabled_plugins"), i, v)
    {
        const char *id = json_string_value(v);
        if (!id) continue;
        if (strcmp(id, "io.containerd.grpc.v1.cri") == 0) return true;
        if (!cd_is_v1(family) && strcmp(id, "io.containerd.cri.v1.runtime") == 0) return true;
    }
    return false;
}

static int copy_runtimes(ag_loaded *l)
{
    const cd_prediction *p = l->files;
    if (p->nruntimes == 0) return 0;
    l->runtimes = malloc(p->nruntimes * sizeof *l->runtimes);
    if (!l->runtimes) return -1;
    memcpy(l->runtimes, p->runtimes, p->nruntimes * sizeof *l->runtimes);
    l->nruntimes = p->nruntimes;
    return 0;
}

/* Reads the node as the process starting now: *out is NULL when
 * containerd refuses the config (then `refused` holds its message). */
static int load(const char *dir, const ag_node_state *st, double now, unsigned pid, ag_loaded **out,
                char *refused, size_t cap, gp_error *err)
{
    *out = NULL;
    cd_prediction *p = ag_node_predict(dir, st, err);
    if (!p) return -1;
    if (p->error) {
        snprintf(refused, cap, "%s", p->error);
        cd_prediction_free(p);
        return 0;
    }
    ag_loaded *l = calloc(1, sizeof *l);
    if (!l) {
        cd_prediction_free(p);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    l->files = p;
    snprintf(l->version, sizeof l->version, "%s", st->containerd_version);
    l->family = st->family;
    l->started = now;
    l->pid = pid;
    l->config = ag_prediction_config(p);
    if (l->config && cri_disabled(l->config, st->family)) {
        l->cri = AG_CRI_DISABLED;
    } else if (p->cri_error) {
        l->cri = AG_CRI_FAILED;
        snprintf(l->cri_error, sizeof l->cri_error, "%s", p->cri_error);
    } else {
        l->cri = AG_CRI_UP;
    }
    const json_t *cri_table =
        json_object_get(json_object_get(l->config, "plugins"), ag_cri_plugin_id(st->family));
    const char *def = json_string_value(
        json_object_get(json_object_get(cri_table, "containerd"), "default_runtime_name"));
    snprintf(l->default_runtime, sizeof l->default_runtime, "%s", def ? def : "");
    l->cri_config = l->config ? ag_cri_config(st->family, l->config) : NULL;
    if (!l->config || !l->cri_config || (l->cri == AG_CRI_UP && copy_runtimes(l) != 0)) {
        ag_loaded_free(l);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    *out = l;
    return 0;
}

/* ---- the lifecycle ---- */

/* The process ended at `now`: the supervisor's turn. */
static void exited(ag_daemon *d, double now, const char *how, const char *error, bool clean)
{
    d->exit_clean = clean;
    ag_loaded_free(d->loaded);
    d->loaded = NULL;
    d->exited_at = now;
    snprintf(d->last_exit, sizeof d->last_exit, "%s", how);
    snprintf(d->last_error, sizeof d->last_error, "%s", error);
    if (d->restart == AG_RESTART_ALWAYS) {
        d->phase = AG_DAEMON_RESTARTING;
        d->restart_at = now + d->restart_sec;
    } else {
        d->phase = AG_DAEMON_DOWN;
        d->restart_at = 0;
    }
}

/* A signal as systemd names it in "status=1/HUP". */
static const char *signal_abbrev(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "HUP"},   {SIGINT, "INT"},   {SIGQUIT, "QUIT"}, {SIGKILL, "KILL"},
        {SIGTERM, "TERM"}, {SIGUSR2, "USR2"}, {SIGALRM, "ALRM"}, {SIGABRT, "ABRT"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    return NULL;
}

/* A made-up pid: distinct for every start, like a real one. */
static unsigned next_pid(const ag_daemon *d)
{
    return 1000u + 7u * d->starts;
}

static int start_now(ag_daemon *d, const char *dir, double now, gp_error *err)
{
    ag_node_state st;
    if (ag_node_state_read(dir, &st, err) != 0) return -1;
    char refused[1024] = "";
    ag_loaded *l;
    if (load(dir, &st, now, next_pid(d), &l, refused, sizeof refused, err) != 0) return -1;
    d->starts++;
    d->restart = st.restart;
    d->restart_sec = st.restart_sec;
    if (!l) {
        /* containerd prints its error and exits with status 1. */
        exited(d, now, "Main process exited, code=exited, status=1/FAILURE", refused, false);
        return 1;
    }
    ag_loaded_free(d->loaded);
    d->loaded = l;
    d->phase = AG_DAEMON_RUNNING;
    d->restart_at = 0;
    return 0;
}

int ag_daemon_start(ag_daemon *d, const char *dir, double now, gp_error *err)
{
    if (d->phase == AG_DAEMON_RUNNING) return 0;
    return start_now(d, dir, now, err);
}

int ag_daemon_restart(ag_daemon *d, const char *dir, double now, gp_error *err)
{
    if (d->phase == AG_DAEMON_RUNNING) {
        ag_loaded_free(d->loaded);
        d->loaded = NULL;
        d->exited_at = now;
        snprintf(d->last_exit, sizeof d->last_exit, "Stopped (systemctl restart)");
        d->exit_clean = true;
        d->last_error[0] = '\0';
        d->phase = AG_DAEMON_DOWN;
    }
    return start_now(d, dir, now, err);
}

void ag_daemon_stop(ag_daemon *d, double now)
{
    if (d->phase == AG_DAEMON_RUNNING) {
        ag_loaded_free(d->loaded);
        d->loaded = NULL;
        d->exited_at = now;
        snprintf(d->last_exit, sizeof d->last_exit, "Stopped (systemctl stop)");
        d->exit_clean = true;
        d->last_error[0] = '\0';
    }
    d->phase = AG_DAEMON_DOWN;
    d->restart_at = 0;
}

bool ag_daemon_signal(ag_daemon *d, int sig, double now)
{
    if (d->phase != AG_DAEMON_RUNNING) return false;
    /* main_unix.go handledSignals: SIGUSR1 dumps the goroutines, SIGPIPE is
     * ignored; SIGTERM and SIGINT stop the server, which then exits 0. */
    if (sig == SIGUSR1 || sig == SIGPIPE) return false;
    char how[128];
    if (sig == SIGTERM || sig == SIGINT) {
        snprintf(how, sizeof how, "Main process exited, code=exited, status=0/SUCCESS");
    } else {
        /* Go's runtime dies of a signal it does not handle: it restores the
         * default action and raises it again (runtime.dieFromSignal). */
        const char *name = signal_abbrev(sig);
        if (name)
            snprintf(how, sizeof how, "Main process exited, code=killed, status=%d/%s", sig, name);
        else
            snprintf(how, sizeof how, "Main process exited, code=killed, status=%d", sig);
    }
    exited(d, now, how, "", sig == SIGTERM || sig == SIGINT);
    return true;
}

int ag_daemon_tick(ag_daemon *d, const char *dir, double now, gp_error *err)
{
    if (d->phase != AG_DAEMON_RESTARTING || now < d->restart_at) return 0;
    int rc = start_now(d, dir, now, err);
    /* node.toml unreadable: try again a period later, as systemd would
     * keep trying a unit whose binary is missing. */
    if (rc < 0) d->restart_at = now + d->restart_sec;
    return rc;
}

double ag_daemon_next_event(const ag_daemon *d)
{
    return d->phase == AG_DAEMON_RESTARTING ? d->restart_at : 0;
}

bool ag_daemon_serves_handler(const ag_daemon *d, const char *name)
{
    const ag_loaded *l = d->phase == AG_DAEMON_RUNNING ? d->loaded : NULL;
    if (!l || l->cri != AG_CRI_UP) return false;
    for (size_t i = 0; i < l->nruntimes; i++)
        if (strcmp(l->runtimes[i], name) == 0) return true;
    return false;
}
